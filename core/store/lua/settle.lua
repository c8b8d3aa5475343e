-- Settles one request for its API key, once per request id: releases the lease, reconciles tpm,
-- adds spend to the lifetime total and the windows, rolls up totals, appends the record.
-- KEYS: 1 done marker, 2 lease zset, 3 tpm bucket of the admission minute, 4 acct hash, 5 totals hash,
--       6 day hash, 7 day-per-model hash, 8 records hash (id -> JSON), 9 records index zset (time -> id),
--       10 released marker (release.lua), 11 hour hash, 12 hour-per-model hash, 13 rate hash of the record's minute
-- ARGV: 1 request id, 2 lease member ('' = none), 3 tpm delta ('' = no admission), 4 record time,
--       5 retention ms, 6 rollup ttl ms, 7 model, 8 record JSON, 9 records cap,
--       10..16 requests, input, output, cache read, cache write, reasoning tokens, cost nano,
--       17 estimated tokens of the admission, 18 UTC hour of the record ("00".."23"), 19 duration ms,
--       20 hourly rollup ttl ms, 21 done marker ttl ms, 22 record's epoch second, 23 its tokens (rate)
-- Money and counts are added straight from ARGV strings with HINCRBY: a Lua number would be
-- formatted with 14 significant digits and lose exactness. Returns 1 when recorded, 0 when a repeat.
-- A repeat: within the marker's short life, or later while the record is kept.
if redis.call('HEXISTS', KEYS[8], ARGV[1]) == 1 then return 0 end
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[21]) then return 0 end

if ARGV[2] ~= '' then redis.call('ZREM', KEYS[2], ARGV[2]) end
-- Only a bucket that still exists can be read by a tpm check; a gone one needs no correction.
if ARGV[3] ~= '' and redis.call('EXISTS', KEYS[3]) == 1 then
  local delta = tonumber(ARGV[3])
  -- After a release the estimate has left the bucket already: add every actual token.
  if redis.call('EXISTS', KEYS[10]) == 1 then delta = delta + tonumber(ARGV[17]) end
  if delta ~= 0 then redis.call('INCRBY', KEYS[3], string.format('%d', delta)) end
end

local clock = tonumber(ARGV[4])
local rollup_ttl = ARGV[6]
local cost = ARGV[16]
if cost ~= '0' then
  redis.call('HINCRBY', KEYS[4], 'spend', cost)
  local names = {'5h', '1d', '7d'}
  local lens = {18000000, 86400000, 604800000}
  for i = 1, 3 do
    local s = redis.call('HGET', KEYS[4], 's' .. names[i])
    if not s or clock >= tonumber(s) + lens[i] then
      redis.call('HSET', KEYS[4], 's' .. names[i], ARGV[4], 'u' .. names[i], cost)
    else
      redis.call('HINCRBY', KEYS[4], 'u' .. names[i], cost)
    end
  end
  redis.call('PEXPIRE', KEYS[4], rollup_ttl)
end

local fields = {'requests', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost'}
for i = 1, 7 do
  local v = ARGV[9 + i]
  if v ~= '0' then
    redis.call('HINCRBY', KEYS[5], fields[i], v)
    redis.call('HINCRBY', KEYS[6], fields[i], v)
    redis.call('HINCRBY', KEYS[7], fields[i] .. ':' .. ARGV[7], v)
    redis.call('HINCRBY', KEYS[11], ARGV[18] .. ':' .. fields[i], v)
    redis.call('HINCRBY', KEYS[12], ARGV[18] .. ':' .. fields[i] .. ':' .. ARGV[7], v)
  end
end
redis.call('HINCRBY', KEYS[5], 'duration_ms', ARGV[19])
redis.call('HINCRBY', KEYS[5], 'timed', 1)
redis.call('PEXPIRE', KEYS[5], rollup_ttl)
redis.call('PEXPIRE', KEYS[6], rollup_ttl)
redis.call('PEXPIRE', KEYS[7], rollup_ttl)
redis.call('PEXPIRE', KEYS[11], ARGV[20])
redis.call('PEXPIRE', KEYS[12], ARGV[20])
-- The current rate: requests and tokens per second, read back for the last minute (kept three).
redis.call('HINCRBY', KEYS[13], ARGV[22] .. ':r', 1)
if ARGV[23] ~= '0' then redis.call('HINCRBY', KEYS[13], ARGV[22] .. ':t', ARGV[23]) end
redis.call('PEXPIRE', KEYS[13], 180000)

redis.call('HSET', KEYS[8], ARGV[1], ARGV[8])
redis.call('ZADD', KEYS[9], ARGV[4], ARGV[1])
local function drop(ids)
  for i = 1, #ids, 500 do
    local chunk = {}
    for j = i, math.min(i + 499, #ids) do chunk[#chunk + 1] = ids[j] end
    redis.call('ZREM', KEYS[9], unpack(chunk))
    redis.call('HDEL', KEYS[8], unpack(chunk))
  end
end
drop(redis.call('ZRANGEBYSCORE', KEYS[9], '-inf', '(' .. string.format('%d', clock - tonumber(ARGV[5]))))
local n = redis.call('ZCARD', KEYS[9])
local cap = tonumber(ARGV[9])
if n > cap then drop(redis.call('ZRANGE', KEYS[9], 0, n - cap - 1)) end
redis.call('PEXPIRE', KEYS[8], ARGV[5])
redis.call('PEXPIRE', KEYS[9], ARGV[5])
return 1
