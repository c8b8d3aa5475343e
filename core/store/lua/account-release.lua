-- Gives account slots back with what each attempt's ending tells (LeaseEnding): a success ends probing (unless the
-- account is cooling down at that time: a request that began before the cool-down proves nothing), and names are bound
-- to the account (sessions, pins). release_many takes the releases of one turn together (fuse.ts), as one by one in
-- order: one ZREM per account for all its slots, its state read and probing ended once.
-- Per call: KEYS: 1 lease zset, 2 state hash, 3.. binding keys   ARGV: 1 request id, 2 succeeded at ('' = no),
--       3 account, then per binding key j: 3 + j ttl ms
local function release_many(calls)
  local slots, sorder = {}, {}
  local states, torder = {}, {}
  for i, c in ipairs(calls) do
    local KEYS, ARGV = c[1], c[2]
    if not slots[KEYS[1]] then
      slots[KEYS[1]] = {}
      sorder[#sorder + 1] = KEYS[1]
    end
    local l = slots[KEYS[1]]
    l[#l + 1] = ARGV[1]
    if ARGV[2] ~= '' then
      local s = states[KEYS[2]]
      if not s then
        s = {v = redis.call('HMGET', KEYS[2], 'cool', 'probe')}
        states[KEYS[2]] = s
        torder[#torder + 1] = KEYS[2]
      end
      if s.v[2] and not (s.v[1] and tonumber(s.v[1]) > tonumber(ARGV[2])) then
        s.v[2] = false
        s.ended = true
      end
    end
    for j = 3, #KEYS do redis.call('SET', KEYS[j], ARGV[3], 'PX', ARGV[j + 1]) end
  end
  for _, key in ipairs(sorder) do
    local l = slots[key]
    for j = 1, #l, 1000 do redis.call('ZREM', key, unpack(l, j, math.min(j + 999, #l))) end
  end
  for _, key in ipairs(torder) do
    if states[key].ended then redis.call('HDEL', key, 'probe') end
  end
  local out = {}
  for i = 1, #calls do out[i] = 1 end
  return out
end
