-- Writes a chunk of one minute's records of any keys to the global log (log.lua) and adds the gateway-wide rollups
-- (summary.ts) to the minute, hour and day hashes; a chunk held already writes nothing and returns 0.
-- KEYS: 1 log hash, 2 log index, 3..5 the minute, hour and day rollup hashes
-- ARGV: 1 retention ms, 2 cap, 3..5 how long each rollup hash is kept (ms), 6 chunk id, 7 n records, 8 oldest time,
--       9 newest time, 10 the number of rollup fields m, then m pairs of field and increment
if not add_chunk(KEYS[1], KEYS[2], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[1], tonumber(ARGV[2])) then
  return 0
end
local m = tonumber(ARGV[10])
for k = 3, 5 do
  for j = 11, 10 + 2 * m, 2 do redis.call('HINCRBY', KEYS[k], ARGV[j], ARGV[j + 1]) end
  redis.call('PEXPIRE', KEYS[k], ARGV[k])
end
return 1
