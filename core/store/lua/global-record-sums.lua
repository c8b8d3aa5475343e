-- global-record.lua with the rollup fields summed by the process (redis-batch.ts batchSums): the same writes for a batch
-- whose records are all new, with three arguments per record. A batch naming a record the index holds already writes
-- nothing and returns -1: the process then sends it as global-record.lua, which skips the kept ones.
-- KEYS: those of global-record.lua
-- ARGV: 1 retention ms, 2 cap, 3..5 how long each rollup hash is kept (ms), 6 n, then per record: id, time, JSON;
--       then the number of rollup fields m and m pairs of field and increment (added to each rollup hash)
local n = tonumber(ARGV[6])
if n == 0 then return 0 end
local records, members, newest = batch_records(KEYS[2], ARGV, 6, n)
if not records then return -1 end
local at = 7 + 3 * n
local m = tonumber(ARGV[at])
for k = 3, #KEYS do
  for j = at + 1, at + 2 * m, 2 do redis.call('HINCRBY', KEYS[k], ARGV[j], ARGV[j + 1]) end
  redis.call('PEXPIRE', KEYS[k], ARGV[k])
end
keep_records(KEYS[1], KEYS[2], records, members, newest, ARGV[1], tonumber(ARGV[2]))
return 1
