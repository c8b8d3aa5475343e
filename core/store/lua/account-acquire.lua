-- Picks an upstream account of one group and takes one of its slots (every key shares the group's hash tag).
-- Which candidate: pick.lua (the same rules as rules/accounts.ts pickAccount).
-- KEYS: per candidate i: 2i-1 lease zset (request id -> expiry ms), 2i state hash (cool, why, probe, used, pass);
--       then the binding keys to look the preference up in, first found wins (AcquireAccountRequest.bound)
-- ARGV: 1 now, 2 request id, 3 roll in [0, 1) for the weighted choice, 4 the terms: numbers apart by spaces (mostly the
--       same for all of a group's requests, so the list form reads them once a turn: redis/accounts.ts acquireArgs):
--       preferred candidate (1-based, 0 = none), only (1), binding keys, which are pins (bit j - 1 for binding key j),
--       lease ms, state ttl ms, then per candidate its priority, weight and concurrency; then per candidate i: 4 + i
--       its id (cleaned by rules/accounts.ts)
-- Returns 2 * candidate + preferred (1/0) when no binding was found (a number is the cheapest answer for the fused
-- script to pass on), {1, candidate, preferred (1/0), binding found (1-based), its account} when one was,
-- or {0, 'busy' | 'cooling' | 'none', retry-after ms (-1: none), binding found (0 = none), its account}.
-- Several calls of one turn run its list form instead, account-acquire-many.lua (fuse.ts): a change here is a change there.
local now = tonumber(ARGV[1])
local id = ARGV[2]
local roll = ARGV[3]
local terms = {}
for v in string.gmatch(ARGV[4], '%S+') do terms[#terms + 1] = tonumber(v) end
local prefer, only, nb, pins = terms[1], terms[2] == 1, terms[3], terms[4]
local lease_ms = terms[5]
local state_ttl = terms[6]
local n = (#KEYS - nb) / 2
local function int(x) return string.format('%d', x) end
-- Candidate i's id (k = 1), priority (2), weight (3) and concurrency (4).
local function arg(i, k)
  if k == 1 then return ARGV[4 + i] end
  return terms[3 * i + k + 2]
end

-- The preference from a binding (a session's account, a response's pin), in the same decision.
local found, found_account = 0, ''
for j = 1, nb do
  local bound = redis.call('GET', KEYS[2 * n + j])
  if bound then
    found, found_account = j, bound
    prefer, only = 0, math.floor(pins / 2 ^ (j - 1)) % 2 == 1
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
  local lease = KEYS[2 * i - 1]
  redis.call('ZREMRANGEBYSCORE', lease, '-inf', int(now))
  local s = redis.call('HMGET', KEYS[2 * i], 'cool', 'probe', 'pass', 'used')
  local cool = s[1] and tonumber(s[1]) or nil
  local conc = tonumber(arg(i, 4))
  -- Probing (cooled down, not yet proven healthy): one request at a time.
  if s[2] == '1' then conc = 1 end
  c[i] = {
    priority = tonumber(arg(i, 2)),
    weight = tonumber(arg(i, 3)),
    conc = conc,
    busy = redis.call('ZCARD', lease),
    cooling = cool ~= nil and cool > now,
    cool = cool,
    pass = s[3] and tonumber(s[3]) or nil,
    used = s[4] and tonumber(s[4]) or -math.huge,
    holds = redis.call('ZSCORE', lease, id) ~= false,
  }
end

local function take(i, reuse)
  local lease = KEYS[2 * i - 1]
  -- None held: the set is new (zadd.lua).
  if c[i].busy == 0 then zadd_new(lease, {int(now + lease_ms), id})
  else redis.call('ZADD', lease, int(now + lease_ms), id) end
  local keep = lease_ms + LEASE_KEEP_MS
  if redis.call('PTTL', lease) < keep then redis.call('PEXPIRE', lease, int(keep)) end
  if not reuse then
    redis.call('HSET', KEYS[2 * i], 'used', int(now), 'pass', int(c[i].eff + stride(c[i].weight)))
    if redis.call('PTTL', KEYS[2 * i]) < state_ttl then redis.call('PEXPIRE', KEYS[2 * i], int(state_ttl)) end
  end
  local p = i == prefer and 1 or 0
  if found == 0 then return 2 * i + p end
  return {1, i, p, found, found_account}
end

-- The candidate and whether it is the request's own slot already, or nil, the refusal and its retry-after.
local i, second, wait = pick_account(c, n, prefer, pinned, roll, now)
if i then return take(i, second) end
return {0, second, wait, found, found_account}
