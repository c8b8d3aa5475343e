-- Gives back what admit reserved for a request that ends unsettled: once, never after a settle; a later settle sees
-- the 'r' marker and counts all its tokens.
-- KEYS: 1 lease zset, 2 tpm bucket of the admission minute, 3 marker hash of the admission minute (settle.lua), 4 held
--       hash (held.lua)
-- ARGV: 1 request id, 2 lease member ('' = none), 3 estimated tokens, 4 marker ttl ms, 5 the cost held, "<admission
--       minute> <nano>" ('' = none)   Returns 1 when released.
if redis.call('HSETNX', KEYS[3], ARGV[1], 'r') == 0 then return 0 end
redis.call('PEXPIRE', KEYS[3], ARGV[4])
if ARGV[2] ~= '' then redis.call('ZREM', KEYS[1], ARGV[2]) end
if ARGV[3] ~= '0' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECRBY', KEYS[2], ARGV[3]) end
if ARGV[5] ~= '' then
  local field, nano = string.match(ARGV[5], '^(%d+) (%d+)$')
  unhold(KEYS[4], field, tonumber(nano))
end
return 1
