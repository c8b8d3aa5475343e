-- Writes a chunk of settled records of one minute, of any keys, to the global log (admin listings across keys; log.lua
-- add_chunk) and adds the gateway-wide rollup fields the process summed (redis/batch.ts globalSums, summary.ts) to the
-- minute, hour and day hashes. A chunk the log holds already (sent again) writes nothing and returns 0.
-- KEYS: 1 log hash, 2 log index, 3..5 the minute, hour and day rollup hashes
-- ARGV: 1 retention ms, 2 cap, 3..5 how long each rollup hash is kept (ms), 6 chunk id, 7 n records, 8 oldest time,
--       9 newest time, 10 the number of rollup fields m, then m pairs of field and increment
-- The process wrote the chunk's text just before (log.lua add_chunk).
if not add_chunk(KEYS[1], KEYS[2], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[1], tonumber(ARGV[2])) then
  return 0
end
local m = tonumber(ARGV[10])
for k = 3, 5 do
  for j = 11, 10 + 2 * m, 2 do redis.call('HINCRBY', KEYS[k], ARGV[j], ARGV[j + 1]) end
  redis.call('PEXPIRE', KEYS[k], ARGV[k])
end
return 1
