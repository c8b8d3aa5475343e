-- The list form of admit.lua (fuse.ts): admit_many takes several admissions of one turn, with the answers and the
-- writes of running admit.lua on each in order (test/store/redis-many.test.ts holds them to it; a change there is a
-- change here). Each key's spend and windows, lease and rpm zsets (zset.lua) and tpm bucket are read once; what the
-- admitted add is written once.
-- A call: {ko, ao, nk, na}; its keys and arguments are admit.lua's, from KEYS[ko + 1] and ARGV[ao + 1].
local function admit_many(calls)
  local names = {'5h', '1d', '7d'}
  local lens = {18000000, 86400000, 604800000}
  -- Most limits are 0 (none): a string comparison is cheaper than tonumber.
  local function num(x) if x == '0' then return 0 end return tonumber(x) end

  -- The ids each zset may be asked about: one ZMSCORE per zset.
  local ids = {}
  for _, c in ipairs(calls) do
    for k = 1, 2 do
      local key = KEYS[c[1] + k]
      ids[key] = ids[key] or {}
      ids[key][#ids[key] + 1] = ARGV[c[2] + 2]
    end
  end
  local zsets, zorder = {}, {}
  local function z(key)
    if not zsets[key] then
      zsets[key] = zset(key, ids[key])
      zorder[#zorder + 1] = key
    end
    return zsets[key]
  end
  local accts = {}
  local function acct(key)
    if not accts[key] then accts[key] = redis.call('HMGET', key, 'spend', 's5h', 'u5h', 's1d', 'u1d', 's7d', 'u7d') end
    return accts[key]
  end
  local buckets, border = {}, {}
  local function bucket(key)
    if not buckets[key] then
      buckets[key] = {add = 0}
      border[#border + 1] = key
    end
    return buckets[key]
  end
  local keep, rpmKeys = {}, {}

  -- A zset's size counting its stale entries too, exact (pruned first) whenever it reaches `limit`. Below the limit the
  -- exact size is below it too, so pruning waits: it runs every 64th entry, which bounds what a zset holds.
  local function size(s, limit, stale)
    local n = s.card()
    if n >= limit or n % 64 == 63 then
      s.prune(stale)
      n = s.card()
    end
    return n
  end

  local function one(ko, ao)
    local now = tonumber(ARGV[ao + 1])
    local id = ARGV[ao + 2]
    local lease_ms = tonumber(ARGV[ao + 3])
    local est = num(ARGV[ao + 4])
    local quota = num(ARGV[ao + 5])
    local conc = num(ARGV[ao + 9])
    local rpm = num(ARGV[ao + 10])
    local tpm = num(ARGV[ao + 11])

    if quota > 0 then
      local spent = tonumber(acct(KEYS[ko + 4])[1] or '0')
      if spent >= quota then return {0, 'quota_exhausted', -1, ''} end
    end

    -- Fixed windows that start at the first spend; with several exhausted, report the one resetting last.
    local wait, win = -1, ''
    for i = 1, 3 do
      local limit = num(ARGV[ao + 5 + i])
      if limit > 0 then
        local t = acct(KEYS[ko + 4])
        local s, u = t[2 * i], t[2 * i + 1]
        if s then
          local ends = tonumber(s) + lens[i]
          if now < ends and tonumber(u or '0') >= limit and ends - now > wait then
            wait = ends - now
            win = names[i]
          end
        end
      end
    end
    if win ~= '' then return {0, 'window_exhausted', wait, win} end

    -- Leases: score = expiry. Expired ones go first, so a crashed process never holds a slot for long.
    if conc > 0 then
      local s = z(KEYS[ko + 1])
      if size(s, conc, now) >= conc and not s.holds(id) then
        local w = s.first() - now
        if w > 1000 then w = 1000 end
        if w < 1 then w = 1 end
        return {0, 'concurrency', w, ''}
      end
    end

    -- Exact sliding 60 s window: an entry admitted at t leaves it at t + 60 s.
    if rpm > 0 then
      local s = z(KEYS[ko + 2])
      if size(s, rpm, now - 60000) >= rpm and not s.holds(id) then
        local w = s.first() + 60000 - now
        if w < 1 then w = 1 end
        return {0, 'rpm', w, ''}
      end
    end

    if tpm > 0 then
      if est > tpm then return {0, 'tpm', -1, ''} end
      local b = bucket(KEYS[ko + 3])
      if not b.base then b.base = tonumber(redis.call('GET', KEYS[ko + 3]) or '0') end
      if b.base + b.add + est > tpm then return {0, 'tpm', 60000 - (now % 60000), ''} end
    end

    local leased = 0
    if conc > 0 then
      z(KEYS[ko + 1]).add(now + lease_ms, id)
      keep[KEYS[ko + 1]] = math.max(keep[KEYS[ko + 1]] or 0, lease_ms + 60000)
      leased = 1
    end
    if rpm > 0 then
      z(KEYS[ko + 2]).add(now, id)
      rpmKeys[KEYS[ko + 2]] = true
    end
    -- Tokens are counted even without a tpm limit, so a limit set later sees the real rate at once.
    if est > 0 then
      local b = bucket(KEYS[ko + 3])
      b.add = b.add + est
    end
    return {1, leased}
  end

  local out = {}
  for i, c in ipairs(calls) do out[i] = one(c[1], c[2]) end

  for _, key in ipairs(zorder) do
    if zsets[key].write() or keep[key] or rpmKeys[key] then
      if keep[key] then
        if redis.call('PTTL', key) < keep[key] then redis.call('PEXPIRE', key, string.format('%d', keep[key])) end
      elseif rpmKeys[key] then
        redis.call('PEXPIRE', key, 120000)
      end
    end
  end
  -- The minute's bucket gets its life when this creates it (settle and release never create one).
  for _, key in ipairs(border) do
    local add = buckets[key].add
    if add > 0 and redis.call('INCRBY', key, string.format('%d', add)) == add then redis.call('PEXPIRE', key, 180000) end
  end
  return out
end
