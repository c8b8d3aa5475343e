-- Writes a chunk of one key's records of one minute to its log (log.lua), marks each kept ('k') in its admission
-- minute's marker hash and adds the summed rollups. Returns n; 0 for a chunk held already; the ids of records marked
-- kept (another copy was written), writing nothing.
-- KEYS: 1 totals hash, 2 day hash, 3 day-per-model hash, 4 hour hash, 5 hour-per-model hash, 6 rate hash of the minute,
--       7 log hash, 8 log index, 9 marker hash of the admission minute
-- ARGV: 1 retention ms, 2 rollup ttl ms, 3 hourly rollup ttl ms, 4 records cap, 5 marker ttl ms, 6 chunk id,
--       7 n records, 8 oldest time, 9 newest time, 10..9+n the records' request ids; then for each rollup hash
--       k = 1..6 (KEYS[k]): the number of its fields m, then m pairs of field and increment
local n = tonumber(ARGV[7])
if redis.call('HEXISTS', KEYS[7], '@' .. ARGV[6]) == 1 then return 0 end
local kept = {}
for i = 10, 9 + n, 1000 do
  local marks = redis.call('HMGET', KEYS[9], unpack(ARGV, i, math.min(i + 999, 9 + n)))
  for j = 1, #marks do
    if marks[j] == 'k' then kept[#kept + 1] = ARGV[i + j - 1] end
  end
end
if #kept > 0 then return kept end
if not add_chunk(KEYS[7], KEYS[8], ARGV[6], n, ARGV[8], ARGV[9], ARGV[1], tonumber(ARGV[4])) then
  return 0
end
local marks = {}
for i = 10, 9 + n do
  marks[#marks + 1] = ARGV[i]
  marks[#marks + 1] = 'k'
end
for i = 1, #marks, 1000 do redis.call('HSET', KEYS[9], unpack(marks, i, math.min(i + 999, #marks))) end
redis.call('PEXPIRE', KEYS[9], ARGV[5])
local at = 10 + n
for k = 1, 6 do
  local m = tonumber(ARGV[at])
  for j = at + 1, at + 2 * m, 2 do redis.call('HINCRBY', KEYS[k], ARGV[j], ARGV[j + 1]) end
  at = at + 1 + 2 * m
end
keep_key_rollups(KEYS, ARGV[2], ARGV[3])
return n
