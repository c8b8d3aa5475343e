-- Adds a settled record to the global index (admin listings across keys); idempotent, so settle can
-- send it on every attempt, in the same round trip as the per-key script, and a retry heals a lost one.
-- KEYS: 1 index zset (time -> id), 2 records hash (id -> JSON)
-- ARGV: 1 request id, 2 time, 3 record JSON, 4 retention ms, 5 cap
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 1 then
  redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
end
local function drop(ids)
  for i = 1, #ids, 500 do
    local chunk = {}
    for j = i, math.min(i + 499, #ids) do chunk[#chunk + 1] = ids[j] end
    redis.call('ZREM', KEYS[1], unpack(chunk))
    redis.call('HDEL', KEYS[2], unpack(chunk))
  end
end
drop(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', tonumber(ARGV[2]) - tonumber(ARGV[4]))))
local n = redis.call('ZCARD', KEYS[1])
local cap = tonumber(ARGV[5])
if n > cap then drop(redis.call('ZRANGE', KEYS[1], 0, n - cap - 1)) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
