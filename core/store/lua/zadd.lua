-- Creates a sorted set in Redis's skiplist encoding (prepended by lua/index.ts to the scripts that add to the sets
-- limits and leases count). Redis makes a new small sorted set a listpack: every ZADD, ZREM and ZSCORE on it is then a
-- scan of the whole list, which cost Redis more than the skiplist and dict at the sizes leases reach (tens of members
-- under load). A set created with a member longer than zset-max-listpack-value (64 bytes by default) is a skiplist,
-- and stays one when that member leaves: the placeholder below goes in first and out at once, in the same script.
local SKIPLIST = string.rep('~', 80)
-- ZADD key args (score, member pairs) for a key that does not exist.
local function zadd_new(key, args)
  redis.call('ZADD', key, '0', SKIPLIST, unpack(args, 1, math.min(998, #args)))
  for i = 999, #args, 1000 do redis.call('ZADD', key, unpack(args, i, math.min(i + 999, #args))) end
  redis.call('ZREM', key, SKIPLIST)
end
