-- Adds a batch of settled records of one minute to the global index (admin listings across keys) and, the first time
-- each is seen, to the gateway-wide rollups (summary.ts). A record already indexed is skipped, so a batch sent again
-- counts nothing twice. (A repeat after the record left the index, past the retention or the cap, would count twice.)
-- KEYS: 1 index zset (time -> id), 2 records hash (id -> JSON), 3..5 the minute, hour and day rollup hashes
-- ARGV: 1 retention ms, 2 cap, 3..5 how long each rollup hash is kept (ms), then per record: id, time, JSON,
--       the number of rollup fields n, and n pairs of field and increment
-- The records hash tells which records are kept already (it and the index hold the same ids: written and trimmed
-- together); one ZADD and one HSET write the new ones.
local starts, ids = {}, {}
local i = 6
while i <= #ARGV do
  starts[#starts + 1] = i
  ids[#ids + 1] = ARGV[i]
  i = i + 4 + 2 * tonumber(ARGV[i + 3])
end
if #ids == 0 then return 0 end
local new = new_records(KEYS[2], ids)
local sums, newest, members, records = {}, nil, {}, {}
for k, at in ipairs(starts) do
  local id, time, n = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 3])
  if new[k] then
    members[#members + 1] = ARGV[at + 1]
    members[#members + 1] = id
    records[#records + 1] = id
    records[#records + 1] = ARGV[at + 2]
    if not newest or time > newest then newest = time end
    for j = at + 4, at + 3 + 2 * n, 2 do sums[ARGV[j]] = (sums[ARGV[j]] or 0) + tonumber(ARGV[j + 1]) end
  end
end
if not newest then return 0 end
for k = 3, #KEYS do
  for f, v in pairs(sums) do redis.call('HINCRBY', KEYS[k], f, string.format('%d', v)) end
  redis.call('PEXPIRE', KEYS[k], ARGV[k])
end
keep_records(KEYS[1], KEYS[2], records, members, newest, ARGV[1], tonumber(ARGV[2]))
return 1
