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
