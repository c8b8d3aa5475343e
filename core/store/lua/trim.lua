-- Shared by the scripts that keep records (prepended by lua/index.ts).

-- Which of `ids` are new to the records hash: true at position k for an id it does not hold, the first time the list
-- names it (a batch sent again, or naming a record twice, adds nothing twice). One HMGET per 1000 ids.
local function new_records(records, ids)
  local new, seen = {}, {}
  for j = 1, #ids, 1000 do
    local part = redis.call('HMGET', records, unpack(ids, j, math.min(j + 999, #ids)))
    for k = 1, #part do
      local id = ids[j + k - 1]
      if not part[k] and not seen[id] then
        seen[id] = true
        new[j + k - 1] = true
      end
    end
  end
  return new
end

-- Drops from an index zset and its records hash the entries older than `oldest` (ms), then the oldest beyond `cap`.
local function trim(index, records, oldest, cap)
  local function drop(ids)
    for i = 1, #ids, 500 do
      local chunk = {}
      for j = i, math.min(i + 499, #ids) do chunk[#chunk + 1] = ids[j] end
      redis.call('ZREM', index, unpack(chunk))
      redis.call('HDEL', records, unpack(chunk))
    end
  end
  drop(redis.call('ZRANGEBYSCORE', index, '-inf', '(' .. string.format('%d', oldest)))
  local n = redis.call('ZCARD', index)
  if n > cap then drop(redis.call('ZRANGE', index, 0, n - cap - 1)) end
end

-- A batch in the sums form (settle-batch-sums.lua, global-record-sums.lua): n triples (id, time, JSON) of `argv` from
-- at + 1. Nil when the records hash holds one of them already; else the HSET pairs (id, JSON), the ZADD pairs
-- (time, id) and the newest time.
local function batch_records(records, argv, at, n)
  local ids, newest = {}, nil
  for i = 1, n do
    ids[i] = argv[at + 3 * i - 2]
    local time = tonumber(argv[at + 3 * i - 1])
    if not newest or time > newest then newest = time end
  end
  local new = new_records(records, ids)
  local hset, zadd = {}, {}
  for i = 1, n do
    if not new[i] then return nil end
    local j = at + 3 * i - 2
    hset[#hset + 1] = argv[j]
    hset[#hset + 1] = argv[j + 2]
    zadd[#zadd + 1] = argv[j + 1]
    zadd[#zadd + 1] = argv[j]
  end
  return hset, zadd, newest
end

-- Writes a batch's new records: the HSET pairs (id, JSON) to the records hash, the ZADD pairs (time, id) to the index;
-- then trims both (trim) and keeps them `retention` ms (a string from ARGV) past this write.
local function keep_records(index, records, hset, zadd, newest, retention, cap)
  for i = 1, #hset, 1000 do redis.call('HSET', records, unpack(hset, i, math.min(i + 999, #hset))) end
  for i = 1, #zadd, 1000 do redis.call('ZADD', index, unpack(zadd, i, math.min(i + 999, #zadd))) end
  trim(index, records, newest - tonumber(retention), cap)
  redis.call('PEXPIRE', index, retention)
  redis.call('PEXPIRE', records, retention)
end

-- A key's rollup hashes (settle-batch.lua, settle-batch-sums.lua: KEYS 1..6) kept past this write: totals, day and day
-- per model `days` ms, hour and hour per model `hours` ms, the per-second rate three minutes (read back for the last one).
local function keep_key_rollups(keys, days, hours)
  for k = 1, 3 do redis.call('PEXPIRE', keys[k], days) end
  redis.call('PEXPIRE', keys[4], hours)
  redis.call('PEXPIRE', keys[5], hours)
  redis.call('PEXPIRE', keys[6], 180000)
end
