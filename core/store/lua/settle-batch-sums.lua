-- settle-batch.lua with the rollups summed by the process (redis-batch.ts batchSums): the same writes for a batch whose
-- records are all new, with three arguments per record instead of fifteen. A batch naming a record that is kept already
-- writes nothing and returns -1: the process then sends it as settle-batch.lua, which skips the kept ones.
-- KEYS: those of settle-batch.lua
-- ARGV: 1 retention ms, 2 rollup ttl ms, 3 hourly rollup ttl ms, 4 records cap, 5 n, then per record: id, time, JSON;
--       then for each rollup hash k = 1..6 (KEYS[k]): the number of its fields m, then m pairs of field and increment
local n = tonumber(ARGV[5])
if n == 0 then return 0 end
local records, members, newest = batch_records(KEYS[7], ARGV, 5, n)
if not records then return -1 end
local at = 6 + 3 * n
for k = 1, 6 do
  local m = tonumber(ARGV[at])
  for j = at + 1, at + 2 * m, 2 do redis.call('HINCRBY', KEYS[k], ARGV[j], ARGV[j + 1]) end
  at = at + 1 + 2 * m
end
keep_key_rollups(KEYS, ARGV[2], ARGV[3])
keep_records(KEYS[8], KEYS[7], records, members, newest, ARGV[1], tonumber(ARGV[4]))
return n
