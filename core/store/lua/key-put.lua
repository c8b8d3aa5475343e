-- Stores an issued key and its id index together, dropping whatever the id or the hash pointed at before.
-- KEYS: 1 keys hash (sha256 -> JSON), 2 ids hash (id -> sha256)   ARGV: 1 id, 2 sha256, 3 JSON
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old and old ~= ARGV[2] then redis.call('HDEL', KEYS[1], old) end
local prev = redis.call('HGET', KEYS[1], ARGV[2])
if prev then
  local ok, k = pcall(cjson.decode, prev)
  if ok and type(k) == 'table' and k.id ~= ARGV[1] then redis.call('HDEL', KEYS[2], k.id) end
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
