-- Creates a lease sorted set as a skiplist, cheaper than a listpack at the sizes leases reach (docs/performance.md): a
-- member longer than zset-max-listpack-value goes in first and out at once.
local SKIPLIST = string.rep('~', 80)
-- ZADD key args (score, member pairs) for a key that does not exist.
local function zadd_new(key, args)
  redis.call('ZADD', key, '0', SKIPLIST, unpack(args, 1, math.min(998, #args)))
  for i = 999, #args, 1000 do redis.call('ZADD', key, unpack(args, i, math.min(i + 999, #args))) end
  redis.call('ZREM', key, SKIPLIST)
end
