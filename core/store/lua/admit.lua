-- Check-and-reserve for API keys (rules/limits.ts's checks, in their order; nothing reserved unless all pass).
-- admit_many(n, K, A): the admissions of one turn (fuse.ts), answering as one by one in order would, each key's state
-- read once and what the admitted add written once. Call i's keys from KEYS[K[i] + 1], its ARGV likewise:
-- KEYS: 1 lease zset, 2 rpm zset, 3 tpm bucket of this minute, 4 acct hash (spend, window starts and used), 5 held hash
--       (held.lua)
-- ARGV: 1 now, 2 request id, 3 estimated tokens, 4 the key's terms (integers apart by spaces): lease ms, quota nano,
--       5h/1d/7d limit nano, concurrency, rpm, tpm (0 = unlimited); 5 estimated cost nano
-- Answers per call 1 (admitted, a lease taken), 2 (admitted, no lease) or {0, reason, retry-after ms (-1: waiting cannot
-- help), window, 1 when only what requests in flight hold reaches the limit}.
-- rules/limits.ts usdRefusal: the quota, then the windows (of several exhausted, the one resetting last), with what
-- requests in flight hold (`inflight`) counted as spent. t: the acct hash's spend, s5h, u5h, s1d, u1d, s7d, u7d.
local function usd_refusal(terms, t, inflight, now)
  local quota = terms[2]
  if quota > 0 then
    local spent = N[t[1] or '0']
    if spent >= quota then return {0, 'quota_exhausted', -1, ''} end
    if spent + inflight >= quota then return {0, 'quota_exhausted', HELD_RETRY_MS, '', 1} end
  end
  local wait, win, by_held = -1, '', 0
  for i = 1, 3 do
    local limit = terms[2 + i]
    if limit > 0 then
      local s, u = t[2 * i], t[2 * i + 1]
      local used, ends = 0, 0
      if s then
        ends = N[s] + WINDOW_LENS[i]
        if now < ends then used = N[u or '0'] end
      end
      local w = -1
      if used >= limit then w = ends - now elseif used + inflight >= limit then w = HELD_RETRY_MS end
      if w > wait then
        wait, win = w, WINDOW_NAMES[i]
        by_held = used < limit and 1 or 0
      end
    end
  end
  if win ~= '' then return {0, 'window_exhausted', wait, win, by_held} end
end

local function admit_many(n, K, A)
  -- The ids each zset may be asked about: one ZMSCORE per zset.
  local ids = {}
  for i = 1, n do
    local id, lease, rpm = ARGV[A[i] + 2], KEYS[K[i] + 1], KEYS[K[i] + 2]
    local l, r = ids[lease], ids[rpm]
    if l then l[#l + 1] = id else ids[lease] = {id} end
    if r then r[#r + 1] = id else ids[rpm] = {id} end
  end
  local zsets, zorder = {}, {}
  local function z(key, skiplist)
    local s = zset(key, ids[key], skiplist)
    zsets[key] = s
    zorder[#zorder + 1] = key
    return s
  end
  local accts = {}
  local function acct(key)
    if not accts[key] then accts[key] = redis.call('HMGET', key, 'spend', 's5h', 'u5h', 's1d', 'u1d', 's7d', 'u7d') end
    return accts[key]
  end
  local held, horder = {}, {}
  local function hold(key)
    local h = holds(key)
    held[key] = h
    horder[#horder + 1] = key
    return h
  end
  local buckets, border = {}, {}
  local function bucket(key)
    local b = {add = 0}
    buckets[key] = b
    border[#border + 1] = key
    return b
  end
  local keep, rpmKeys = {}, {}

  -- A zset's size counting its stale entries too, exact (pruned first) whenever it reaches `limit`. Below the limit the
  -- exact size is below it too, so pruning waits: it runs every 64th entry, which bounds what a zset holds.
  local function size(s, limit, stale)
    local n = s.n
    if n >= limit or n % 64 == 63 then
      s.prune(stale)
      n = s.n
    end
    return n
  end

  local function one(ko, ao)
    local now = N[ARGV[ao + 1]]
    local id = ARGV[ao + 2]
    local est = N[ARGV[ao + 3]]
    -- A key's terms, parsed once a turn (T, fuse.ts): lease ms, quota, 5h, 1d, 7d, concurrency, rpm, tpm.
    local terms = T[ARGV[ao + 4]]
    local conc, rpm, tpm = terms[6], terms[7], terms[8]

    local cost = N[ARGV[ao + 5]]
    local minute = math.floor(now / MINUTE_MS)
    local h = held[KEYS[ko + 5]]
    if terms[2] > 0 or terms[3] > 0 or terms[4] > 0 or terms[5] > 0 then
      h = h or hold(KEYS[ko + 5])
      local refusal = usd_refusal(terms, acct(KEYS[ko + 4]), h.at(minute), now)
      if refusal then return refusal end
    end

    -- Leases: score = expiry. Expired ones go first, so a crashed process never holds a slot for long.
    if conc > 0 then
      local s = zsets[KEYS[ko + 1]] or z(KEYS[ko + 1], true)
      if size(s, conc, now) >= conc and not s.has[id] then
        local w = s.first() - now
        if w > CONCURRENCY_RETRY_MS then w = CONCURRENCY_RETRY_MS end
        if w < 1 then w = 1 end
        return {0, 'concurrency', w, ''}
      end
    end

    -- Exact sliding 60 s window: an entry admitted at t leaves it at t + 60 s.
    if rpm > 0 then
      local s = zsets[KEYS[ko + 2]] or z(KEYS[ko + 2])
      if size(s, rpm, now - RPM_WINDOW_MS) >= rpm and not s.has[id] then
        local w = s.first() + RPM_WINDOW_MS - now
        if w < 1 then w = 1 end
        return {0, 'rpm', w, ''}
      end
    end

    if tpm > 0 then
      if est > tpm then return {0, 'tpm', -1, ''} end
      local key = KEYS[ko + 3]
      local b = buckets[key] or bucket(key)
      if not b.base then b.base = N[redis.call('GET', key) or '0'] end
      if b.base + b.add + est > tpm then return {0, 'tpm', MINUTE_MS - (now % MINUTE_MS), ''} end
    end

    -- The zsets exist by now (the checks above made them).
    local answer = 2
    if conc > 0 then
      local key = KEYS[ko + 1]
      local lease_ms = terms[1]
      zsets[key].add(now + lease_ms, id)
      if (keep[key] or 0) < lease_ms + LEASE_KEEP_MS then keep[key] = lease_ms + LEASE_KEEP_MS end
      answer = 1
    end
    if rpm > 0 then
      local key = KEYS[ko + 2]
      zsets[key].add(now, id, ARGV[ao + 1])
      rpmKeys[key] = true
    end
    -- Tokens are counted even without a tpm limit, so a limit set later sees the real rate at once.
    if est > 0 then
      local key = KEYS[ko + 3]
      local b = buckets[key] or bucket(key)
      b.add = b.add + est
    end
    if cost > 0 then (h or hold(KEYS[ko + 5])).add(minute, cost) end
    return answer
  end

  local out = presized(n)
  for i = 1, n do
    out[i] = one(K[i], A[i])
  end

  for _, key in ipairs(zorder) do
    if zsets[key].write() or keep[key] or rpmKeys[key] then
      if keep[key] then
        if redis.call('PTTL', key) < keep[key] then redis.call('PEXPIRE', key, string.format('%d', keep[key])) end
      elseif rpmKeys[key] then
        redis.call('PEXPIRE', key, RPM_KEEP_MS)
      end
    end
  end
  -- The minute's bucket gets its life when this creates it (settle and release never create one).
  for _, key in ipairs(border) do
    local add = buckets[key].add
    if add > 0 and redis.call('INCRBY', key, string.format('%d', add)) == add then redis.call('PEXPIRE', key, TPM_KEEP_MS) end
  end
  for _, key in ipairs(horder) do held[key].write() end
  return out
end
