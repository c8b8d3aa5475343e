-- Creates a lease sorted set (a key's, an account's) in Redis's skiplist encoding (prepended by lua/index.ts to the
-- scripts that take leases). Redis makes a new small sorted set a listpack, scanned whole by every ZADD, ZREM and
-- ZSCORE: dearer than a skiplist at the sizes leases reach (docs/performance.md). A set created with a member longer
-- than zset-max-listpack-value (64 bytes by default) is a skiplist, and stays one when that member leaves: the
-- placeholder below goes in first and out at once, in the same script. Leases live only while requests are in flight,
-- so the skiplist's larger size costs little memory. A key's rpm set is left to Redis: it lives a minute past its last
-- request, a listpack while small (a slow key: little to scan), and Redis converts it past 128 members.
local SKIPLIST = string.rep('~', 80)
-- ZADD key args (score, member pairs) for a key that does not exist.
local function zadd_new(key, args)
  redis.call('ZADD', key, '0', SKIPLIST, unpack(args, 1, math.min(998, #args)))
  for i = 999, #args, 1000 do redis.call('ZADD', key, unpack(args, i, math.min(i + 999, #args))) end
  redis.call('ZREM', key, SKIPLIST)
end
