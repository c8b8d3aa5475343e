-- Compare-and-set of an issued key's JSON: the patch is merged in JS, applied only if nobody changed it meanwhile.
-- KEYS: 1 keys hash, 2 ids hash   ARGV: 1 id, 2 JSON read, 3 new JSON
-- Returns 1 updated, 0 no such key, -1 changed meanwhile (the caller retries).
local sha = redis.call('HGET', KEYS[2], ARGV[1])
if not sha then return 0 end
if redis.call('HGET', KEYS[1], sha) ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], sha, ARGV[3])
return 1
