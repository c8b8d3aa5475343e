-- Gives back what admit reserved (lease, tpm estimate) for a request that ends without a settlement.
-- Once only, and never after a settle (which returned them already); a later settle sees the marker
-- and counts its full tokens instead of correcting an estimate that is no longer in the bucket.
-- KEYS: 1 lease zset, 2 tpm bucket of the admission minute, 3 released marker, 4 settle done marker
-- ARGV: 1 request id, 2 estimated tokens, 3 marker ttl ms   Returns 1 when released.
if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] ~= '0' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECRBY', KEYS[2], ARGV[2]) end
return 1
