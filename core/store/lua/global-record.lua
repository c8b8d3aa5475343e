-- Adds a settled record to the global index (admin listings across keys) and, the first time, to the gateway-wide rollups
-- (summary.ts); idempotent, so settle can send it on every attempt, in the same round trip as the per-key script, and a
-- retry heals a lost one. (A repeat after the record left the index, past the retention or the cap, would count twice.)
-- KEYS: 1 index zset (time -> id), 2 records hash (id -> JSON), 3..5 the minute, hour and day rollup hashes of the record
-- ARGV: 1 request id, 2 time, 3 record JSON, 4 retention ms, 5 cap, 6..8 how long each rollup hash is kept (ms),
--       9.. pairs of rollup field and increment
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 1 then
  redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
  for k = 3, #KEYS do
    for i = 9, #ARGV, 2 do redis.call('HINCRBY', KEYS[k], ARGV[i], ARGV[i + 1]) end
    redis.call('PEXPIRE', KEYS[k], ARGV[k + 3])
  end
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
