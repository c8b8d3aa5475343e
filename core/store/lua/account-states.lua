-- Reads the scheduling state of some accounts of one group (read-only).
-- KEYS: per account i: 2i-1 lease zset, 2i state hash   ARGV: 1 now
-- Returns per account: in flight (unexpired leases), cool, why, probe, used (false = unset).
local out = {}
for i = 1, #KEYS / 2 do
  local s = redis.call('HMGET', KEYS[2 * i], 'cool', 'why', 'probe', 'used')
  out[#out + 1] = redis.call('ZCOUNT', KEYS[2 * i - 1], '(' .. ARGV[1], '+inf')
  for j = 1, 4 do out[#out + 1] = s[j] end
end
return out
