-- Writes a batch of one API key's settled records of one minute (settle.lua counted them against the limits already):
-- appends each record and rolls up totals, the UTC day, the UTC hour (each per model too) and the per-second rate.
-- A record already kept (or twice in the batch) is skipped, so a batch sent again counts nothing twice
-- (new_records, trim.lua); one HSET writes the new ones. Counters of the batch are summed here and added with one HINCRBY
-- per field.
-- KEYS: 1 totals hash, 2 day hash, 3 day-per-model hash, 4 hour hash, 5 hour-per-model hash, 6 rate hash of the minute,
--       7 records hash (id -> JSON), 8 records index zset (time -> id)
-- ARGV: 1 retention ms, 2 rollup ttl ms, 3 hourly rollup ttl ms, 4 records cap, then 15 per record:
--       id, time, JSON, model, UTC hour ("00".."23"), duration ms, epoch second, tokens (rate),
--       requests, input, output, cache read, cache write, reasoning tokens, cost nano
local fields = {'requests', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost'}
-- Numbers are summed per model and hour, and per second, first: the field names are made once per batch, not per record.
local per, seconds, duration, timed = {}, {}, 0, 0
local members, newest = {}, nil
local ids = {}
for i = 5, #ARGV, 15 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return 0 end
local new = new_records(KEYS[7], ids)
local fields_new = {}
for n = 1, #ids do
  local i = 5 + 15 * (n - 1)
  local id = ARGV[i]
  if new[n] then
    fields_new[#fields_new + 1] = id
    fields_new[#fields_new + 1] = ARGV[i + 2]
    members[#members + 1] = ARGV[i + 1]
    members[#members + 1] = id
    local time = tonumber(ARGV[i + 1])
    if not newest or time > newest then newest = time end
    local model, hour = ARGV[i + 3], ARGV[i + 4]
    local combo = hour .. ':' .. model
    local p = per[combo]
    if not p then
      p = {model, hour, 0, 0, 0, 0, 0, 0, 0}
      per[combo] = p
    end
    for j = 1, 7 do p[j + 2] = p[j + 2] + tonumber(ARGV[i + 7 + j]) end
    duration = duration + tonumber(ARGV[i + 5])
    timed = timed + 1
    local sec = seconds[ARGV[i + 6]]
    if not sec then
      sec = {0, 0}
      seconds[ARGV[i + 6]] = sec
    end
    sec[1] = sec[1] + 1
    sec[2] = sec[2] + tonumber(ARGV[i + 7])
  end
end
if not newest then return 0 end

local sums = {{}, {}, {}, {}, {}, {}}
local function add(t, f, v) sums[t][f] = (sums[t][f] or 0) + v end
for _, p in pairs(per) do
  local model, hour = p[1], p[2]
  for j = 1, 7 do
    local v = p[j + 2]
    if v ~= 0 then
      local f = fields[j]
      add(1, f, v)
      add(2, f, v)
      add(3, f .. ':' .. model, v)
      add(4, hour .. ':' .. f, v)
      add(5, hour .. ':' .. f .. ':' .. model, v)
    end
  end
end
add(1, 'duration_ms', duration)
add(1, 'timed', timed)
for second, n in pairs(seconds) do
  add(6, second .. ':r', n[1])
  if n[2] ~= 0 then add(6, second .. ':t', n[2]) end
end

for k = 1, 6 do
  for f, v in pairs(sums[k]) do redis.call('HINCRBY', KEYS[k], f, string.format('%d', v)) end
end
keep_key_rollups(KEYS, ARGV[2], ARGV[3])

keep_records(KEYS[8], KEYS[7], fields_new, members, newest, ARGV[1], tonumber(ARGV[4]))
return #members / 2
