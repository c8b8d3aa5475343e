-- Shared by the scripts that keep records (prepended by lua/index.ts): drops from an index zset and its records hash
-- the entries older than `oldest` (ms), then the oldest beyond `cap`.
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
