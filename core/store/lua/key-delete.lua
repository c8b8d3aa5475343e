-- Deletes an issued key by id, and its id index entry. KEYS: 1 keys hash, 2 ids hash   ARGV: 1 id
local sha = redis.call('HGET', KEYS[2], ARGV[1])
if not sha then return 0 end
redis.call('HDEL', KEYS[1], sha)
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
