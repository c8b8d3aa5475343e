-- Renews a lease (a key's or an account's) still held, not an expired or released one (rules/accounts.ts renewed).
-- KEYS: 1 lease zset   ARGV: 1 now, 2 request id, 3 lease ms   Returns 1 when renewed.
local now = tonumber(ARGV[1])
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not s or tonumber(s) <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', string.format('%d', now + tonumber(ARGV[3])), ARGV[2])
local keep = tonumber(ARGV[3]) + LEASE_KEEP_MS
if redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], string.format('%d', keep)) end
return 1
