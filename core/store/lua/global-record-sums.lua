-- global-record.lua with the rollup fields summed by the process (redis-batch.ts batchSums): the same writes for a batch
-- whose records are all new, with three arguments per record. A batch naming a record the index holds already writes
-- nothing and returns -1: the process then sends it as global-record.lua, which skips the kept ones.
-- KEYS: those of global-record.lua
-- ARGV: 1 retention ms, 2 cap, 3..5 how long each rollup hash is kept (ms), 6 n, then per record: id, time, JSON;
--       then the number of rollup fields m and m pairs of field and increment (added to each rollup hash)
local n = tonumber(ARGV[6])
if n == 0 then return 0 end
local ids, newest = {}, nil
for i = 1, n do
  ids[i] = ARGV[4 + 3 * i]
  local time = tonumber(ARGV[5 + 3 * i])
  if not newest or time > newest then newest = time end
end
local new = new_records(KEYS[2], ids)
for i = 1, n do
  if not new[i] then return -1 end
end
local records, members = {}, {}
for i = 1, n do
  local at = 4 + 3 * i
  records[#records + 1] = ARGV[at]
  records[#records + 1] = ARGV[at + 2]
  members[#members + 1] = ARGV[at + 1]
  members[#members + 1] = ARGV[at]
end
for j = 1, #members, 1000 do
  redis.call('ZADD', KEYS[1], unpack(members, j, math.min(j + 999, #members)))
  redis.call('HSET', KEYS[2], unpack(records, j, math.min(j + 999, #records)))
end
local at = 7 + 3 * n
local m = tonumber(ARGV[at])
for k = 3, #KEYS do
  for j = at + 1, at + 2 * m, 2 do redis.call('HINCRBY', KEYS[k], ARGV[j], ARGV[j + 1]) end
  redis.call('PEXPIRE', KEYS[k], ARGV[k])
end
trim(KEYS[1], KEYS[2], newest - tonumber(ARGV[1]), tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
