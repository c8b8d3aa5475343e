-- Gives an account slot back with what the attempt's ending tells, in one call (LeaseEnding):
-- a success ends probing (unless the account is cooling down at that time: a request that began before the
-- cool-down proves nothing), and names are bound to the account (sessions, pins).
-- KEYS: 1 lease zset, 2 state hash, 3.. binding keys   ARGV: 1 request id, 2 succeeded at ('' = no), 3 account,
--       then per binding key j: 3 + j ttl ms
-- Several calls of one turn run its list form instead, account-release-many.lua (fuse.ts): a change here is a change there.
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
  local s = redis.call('HMGET', KEYS[2], 'cool', 'probe')
  if s[2] and not (s[1] and tonumber(s[1]) > tonumber(ARGV[2])) then redis.call('HDEL', KEYS[2], 'probe') end
end
for j = 3, #KEYS do redis.call('SET', KEYS[j], ARGV[3], 'PX', ARGV[j + 1]) end
return 1
