-- Gives account slots back with what each ending tells (LeaseEnding): a success ends probing unless cooling then, names
-- are bound. release_many(n, K, A, NK): the releases of one turn (fuse.ts), one ZREM and state write per account.
-- KEYS: 1 lease zset, 2 state hash, 3.. binding keys   ARGV: 1 request id, 2 succeeded at ('' = no), 3 account,
--       then per binding key j: 3 + j ttl ms
local function release_many(n, K, A, NK)
  local slots, sorder = {}, {}
  local states, torder = {}, {}
  for i = 1, n do
    local ko, ao, nk = K[i], A[i], NK[i]
    local lease, key, id, at = KEYS[ko + 1], KEYS[ko + 2], ARGV[ao + 1], ARGV[ao + 2]
    if not slots[lease] then
      slots[lease] = {}
      sorder[#sorder + 1] = lease
    end
    local l = slots[lease]
    l[#l + 1] = id
    if at ~= '' then
      local s = states[key]
      if not s then
        s = {v = redis.call('HMGET', key, 'cool', 'probe')}
        states[key] = s
        torder[#torder + 1] = key
      end
      if s.v[2] and not (s.v[1] and N[s.v[1]] > N[at]) then
        s.v[2] = false
        s.ended = true
      end
    end
    for j = 3, nk do redis.call('SET', KEYS[ko + j], ARGV[ao + 3], 'PX', ARGV[ao + j + 1]) end
  end
  for _, key in ipairs(sorder) do batched('ZREM', key, slots[key]) end
  for _, key in ipairs(torder) do
    if states[key].ended then redis.call('HDEL', key, 'probe') end
  end
  local out = presized(n)
  for i = 1, n do out[i] = 1 end
  return out
end
