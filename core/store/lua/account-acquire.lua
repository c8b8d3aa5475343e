-- Picks an upstream account of one group (pick.lua: rules/accounts.ts's rules) and takes one of its slots.
-- acquire_many(n, K, A, NK): the acquisitions of one turn (fuse.ts), answering as one by one in order would, each
-- account's leases, state and binding read once and written once. Call i's keys from KEYS[K[i] + 1], its ARGV likewise:
-- KEYS: per candidate c: 2c-1 lease zset (request id -> expiry ms), 2c state hash (cool, why, probe, used, pass);
--       then the binding keys to look the preference up in, first found wins (AcquireAccountRequest.bound)
-- ARGV: 1 now, 2 request id, 3 roll in [0, 1), 4 the terms (redis/accounts.ts acquireArgs): preferred candidate
--       (1-based, 0 = none), only (1), binding keys, pins (bit j - 1 for binding key j), lease ms, state ttl ms, then per
--       candidate its priority, weight and concurrency; then per candidate c: 4 + c its id
-- Answers per call 2 * candidate + preferred (1/0) when no binding was found, {1, candidate, preferred, binding found
-- (1-based), its account} when one was, or {0, 'busy' | 'cooling' | 'none', retry-after ms (-1: none), binding, account}.
local function acquire_many(count, K, A, NK)
  local function int(x) return string.format('%d', x) end

  -- The request ids each lease zset may be asked about (one ZMSCORE each).
  local ids = {}
  for c = 1, count do
    for i = 1, (NK[c] - T[ARGV[A[c] + 4]][3]) / 2 do
      local key = KEYS[K[c] + 2 * i - 1]
      ids[key] = ids[key] or {}
      ids[key][#ids[key] + 1] = ARGV[A[c] + 2]
    end
  end
  local leases, lorder = {}, {}
  local function lease(key)
    local l = leases[key]
    if not l then
      l = zset(key, ids[key], true)
      leases[key] = l
      lorder[#lorder + 1] = key
    end
    return l
  end
  -- An account's state as the turn left it: v = {cool, probe, pass, used} (pass and used numbers once an acquisition
  -- of the turn set them, written at the end); ttl once an acquisition wrote used and pass.
  local states, sorder = {}, {}
  local function state(key)
    local s = states[key]
    if not s then
      s = {v = redis.call('HMGET', key, 'cool', 'probe', 'pass', 'used')}
      states[key] = s
      sorder[#sorder + 1] = key
    end
    return s
  end
  local bindings = {}
  local function binding(key)
    if bindings[key] == nil then bindings[key] = redis.call('GET', key) end
    return bindings[key]
  end

  local function one(ko, ao, nk)
    local now = N[ARGV[ao + 1]]
    local id = ARGV[ao + 2]
    -- The terms, parsed once a turn (T, fuse.ts): preferred candidate, only, binding keys, pins, lease ms, state ttl ms,
    -- then per candidate its priority, weight and concurrency.
    local terms = T[ARGV[ao + 4]]
    local prefer, only, nb, pins = terms[1], terms[2] == 1, terms[3], terms[4]
    local n = (nk - nb) / 2
    -- Candidate i's id is ARGV[ao + 4 + i]; its priority, weight and concurrency are terms[3i + 4], terms[3i + 5], terms[3i + 6].

    -- The preference from a binding (a session's account, a response's pin), in the same decision.
    local found, found_account = 0, ''
    for j = 1, nb do
      local bound = binding(KEYS[ko + 2 * n + j])
      if bound then
        found, found_account = j, bound
        prefer, only = 0, math.floor(pins / 2 ^ (j - 1)) % 2 == 1
        for i = 1, n do
          if ARGV[ao + 4 + i] == bound then prefer = i end
        end
        -- Pinned to an account that cannot serve this request.
        if only and prefer == 0 then return {0, 'none', -1, found, found_account} end
        break
      end
    end
    local pinned = only and prefer > 0

    -- Expired leases go first, so a crashed process never holds a slot for long.
    local c = {}
    for j = 1, n do
      local l = lease(KEYS[ko + 2 * j - 1])
      l.expire(now)
      local s = state(KEYS[ko + 2 * j]).v
      local cool = s[1] and N[s[1]] or nil
      c[j] = {
        priority = terms[3 * j + 4],
        weight = terms[3 * j + 5],
        -- Probing (cooled down, not yet proven healthy): one request at a time.
        conc = s[2] == '1' and 1 or terms[3 * j + 6],
        busy = l.n,
        cooling = cool ~= nil and cool > now,
        cool = cool,
        pass = s[3] and N[s[3]] or nil,
        used = s[4] and N[s[4]] or -math.huge,
        holds = l.has[id],
      }
    end
    -- The candidate and whether it is the request's own slot already, or nil, the refusal and its retry-after.
    local i, second, wait = pick_account(c, n, prefer, pinned, ARGV[ao + 3], now)
    if not i then return {0, second, wait, found, found_account} end
    local pass
    if not second then pass = c[i].eff + stride(c[i].weight) end
    local lease_ms = terms[5]
    local l = leases[KEYS[ko + 2 * i - 1]]
    l.add(now + lease_ms, id)
    if (l.keep or 0) < lease_ms + LEASE_KEEP_MS then l.keep = lease_ms + LEASE_KEEP_MS end
    if not second then
      local s = states[KEYS[ko + 2 * i]]
      s.v[4] = now
      s.v[3] = pass
      local ttl = terms[6]
      if (s.ttl or 0) < ttl then s.ttl = ttl end
    end
    local p = i == prefer and 1 or 0
    if found == 0 then return 2 * i + p end
    return {1, i, p, found, found_account}
  end

  local out = presized(count)
  for i = 1, count do
    out[i] = one(K[i], A[i], NK[i])
  end

  for _, key in ipairs(lorder) do
    local l = leases[key]
    l.write()
    if l.keep and redis.call('PTTL', key) < l.keep then redis.call('PEXPIRE', key, int(l.keep)) end
  end
  for _, key in ipairs(sorder) do
    local s = states[key]
    if s.ttl then
      redis.call('HSET', key, 'used', int(s.v[4]), 'pass', int(s.v[3]))
      if redis.call('PTTL', key) < s.ttl then redis.call('PEXPIRE', key, int(s.ttl)) end
    end
  end
  return out
end
