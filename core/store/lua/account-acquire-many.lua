-- The list form of account-acquire.lua (fuse.ts): acquire_many takes several acquisitions of one turn, with the
-- answers and the writes of running account-acquire.lua on each in order (test/store/redis-many.test.ts holds them to
-- it; a change there is a change here; the choice itself is pick.lua). Each account's leases (zset.lua) and state,
-- and each binding, are read once; the slots taken and the accounts' new state are written once.
-- A call: {ko, ao, nk, na}; its keys and arguments are account-acquire.lua's, from KEYS[ko + 1] and ARGV[ao + 1].
local function acquire_many(calls)
  local function int(x) return string.format('%d', x) end

  -- The request ids each lease zset may be asked about (one ZMSCORE each).
  local ids = {}
  for _, c in ipairs(calls) do
    for i = 1, (c[3] - tonumber(ARGV[c[2] + 8])) / 2 do
      local key = KEYS[c[1] + 2 * i - 1]
      ids[key] = ids[key] or {}
      ids[key][#ids[key] + 1] = ARGV[c[2] + 2]
    end
  end
  local leases, lorder = {}, {}
  local function lease(key)
    if not leases[key] then
      leases[key] = zset(key, ids[key])
      lorder[#lorder + 1] = key
    end
    return leases[key]
  end
  -- An account's state as the turn left it: v = {cool, probe, pass, used}; ttl once an acquisition wrote used and pass.
  local states, sorder = {}, {}
  local function state(key)
    if not states[key] then
      states[key] = {v = redis.call('HMGET', key, 'cool', 'probe', 'pass', 'used')}
      sorder[#sorder + 1] = key
    end
    return states[key]
  end
  local bindings = {}
  local function binding(key)
    if bindings[key] == nil then bindings[key] = redis.call('GET', key) end
    return bindings[key]
  end

  local function one(ko, ao, nk)
    local now = tonumber(ARGV[ao + 1])
    local id = ARGV[ao + 2]
    local lease_ms = tonumber(ARGV[ao + 3])
    local prefer = tonumber(ARGV[ao + 4])
    local only = ARGV[ao + 5] == '1'
    local roll = tonumber(ARGV[ao + 6])
    local state_ttl = tonumber(ARGV[ao + 7])
    local nb = tonumber(ARGV[ao + 8])
    local n = (nk - nb) / 2
    local function arg(i, k) return ARGV[ao + 9 + 4 * (i - 1) + k] end

    -- The preference from a binding (a session's account, a response's pin), in the same decision.
    local found, found_account = 0, ''
    for j = 1, nb do
      local bound = binding(KEYS[ko + 2 * n + j])
      if bound then
        found, found_account = j, bound
        prefer, only = 0, string.sub(ARGV[ao + 9], j, j) == '1'
        for i = 1, n do
          if arg(i, 1) == bound then prefer = i end
        end
        -- Pinned to an account that cannot serve this request.
        if only and prefer == 0 then return {0, 'none', -1, found, found_account} end
        break
      end
    end
    local pinned = only and prefer > 0

    -- Expired leases go first, so a crashed process never holds a slot for long.
    local c = {}
    for i = 1, n do
      local l = lease(KEYS[ko + 2 * i - 1])
      l.expire(now)
      local s = state(KEYS[ko + 2 * i]).v
      local cool = s[1] and tonumber(s[1]) or nil
      local conc = tonumber(arg(i, 4))
      -- Probing (cooled down, not yet proven healthy): one request at a time.
      if s[2] == '1' then conc = 1 end
      c[i] = {
        priority = tonumber(arg(i, 2)),
        weight = tonumber(arg(i, 3)),
        conc = conc,
        busy = l.card(),
        cooling = cool ~= nil and cool > now,
        cool = cool,
        pass = s[3] and tonumber(s[3]) or nil,
        used = s[4] and tonumber(s[4]) or -math.huge,
        holds = l.holds(id),
      }
    end

    local function take(i, reuse)
      local l = lease(KEYS[ko + 2 * i - 1])
      l.add(now + lease_ms, id)
      l.keep = math.max(l.keep or 0, lease_ms + 60000)
      if not reuse then
        local s = states[KEYS[ko + 2 * i]]
        s.v[4] = int(now)
        s.v[3] = int(c[i].eff + stride(c[i].weight))
        s.ttl = math.max(s.ttl or 0, state_ttl)
      end
      return {1, i, i == prefer and 1 or 0, found, found_account}
    end

    -- The candidate and whether it is the request's own slot already, or nil, the refusal and its retry-after.
    local i, second, wait = pick_account(c, n, prefer, pinned, roll, now)
    if i then return take(i, second) end
    return {0, second, wait, found, found_account}
  end

  local out = {}
  for i, c in ipairs(calls) do out[i] = one(c[1], c[2], c[3]) end

  for _, key in ipairs(lorder) do
    local l = leases[key]
    l.write()
    if l.keep and redis.call('PTTL', key) < l.keep then redis.call('PEXPIRE', key, int(l.keep)) end
  end
  for _, key in ipairs(sorder) do
    local s = states[key]
    if s.ttl then
      redis.call('HSET', key, 'used', s.v[4], 'pass', s.v[3])
      if redis.call('PTTL', key) < s.ttl then redis.call('PEXPIRE', key, int(s.ttl)) end
    end
  end
  return out
end
