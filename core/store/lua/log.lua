-- A record list (per API key, and global) as a log of chunks of one minute each: the log hash holds chunk id -> lines
-- "<time>\t<JSON>\n" (written by the process with a plain HSET: no script sees the text), '#' -> records counted,
-- '@<chunk id>' -> 1 once counted; the index zset "<chunk id> <oldest time> <records counted>" -> newest time.

local function chunk_parts(member)
  local id, oldest, n = string.match(member, '^(%S+) (%d+) (%d+)$')
  return id, tonumber(oldest), tonumber(n)
end

-- Takes `k` records off the chunk `member`: its text stays, readers skip the lines beyond its count (redis/log.ts).
local function skip(index, member, score, k)
  local id, oldest, n = chunk_parts(member)
  redis.call('ZREM', index, member)
  redis.call('ZADD', index, score, id .. ' ' .. oldest .. ' ' .. (n - k))
end

-- Drops chunk `id` (its text and its counted mark; the caller removes its index member).
local function drop_chunk(log, id)
  redis.call('HDEL', log, id, '@' .. id)
end

-- Adds a chunk to a list and trims it (chunks past `retention` before this one's newest, then the oldest records beyond
-- `cap`); false, writing nothing, when it is counted already (a batch sent again).
local function add_chunk(log, index, id, n, oldest, newest, retention, cap)
  if redis.call('HSETNX', log, '@' .. id, 1) == 0 then return false end
  redis.call('ZADD', index, newest, id .. ' ' .. oldest .. ' ' .. n)
  local total = redis.call('HINCRBY', log, '#', n)
  local cutoff = tonumber(newest) - tonumber(retention)
  local bound = '(' .. string.format('%d', cutoff)
  local gone = 0
  local old = redis.call('ZRANGEBYSCORE', index, '-inf', bound)
  if #old > 0 then
    for _, member in ipairs(old) do
      local cid, _, count = chunk_parts(member)
      drop_chunk(log, cid)
      gone = gone + count
    end
    redis.call('ZREMRANGEBYSCORE', index, '-inf', bound)
  end
  local excess = total - gone - cap
  -- The oldest chunks first; `at` passes over the chunk just added, which is never dropped (its '@' must stay, for a
  -- batch sent again to find it counted) but may count none of its records.
  local at = 0
  while excess > 0 do
    local first = redis.call('ZRANGE', index, at, at, 'WITHSCORES')
    if not first[1] then break end
    local cid, _, count = chunk_parts(first[1])
    if cid == id then
      local k = math.min(excess, count)
      if k > 0 then skip(index, first[1], first[2], k) end
      excess, gone, at = excess - k, gone + k, at + 1
    elseif count <= excess then
      redis.call('ZREM', index, first[1])
      drop_chunk(log, cid)
      excess, gone = excess - count, gone + count
    else
      skip(index, first[1], first[2], excess)
      excess, gone = 0, gone + excess
    end
  end
  if gone > 0 then redis.call('HINCRBY', log, '#', -gone) end
  redis.call('PEXPIRE', log, retention)
  redis.call('PEXPIRE', index, retention)
  return true
end

-- Whether a list keeps request `id` (its JSON text `needle`) with a record of time `time`: asked only of a settlement
-- whose marker may have expired (settle.lua), so it may read the chunks of that minute.
local function logged(log, index, needle, time)
  needle = '"request_id":' .. needle
  local near = redis.call('ZRANGEBYSCORE', index, time, '(' .. string.format('%d', tonumber(time) + MINUTE_MS))
  for _, member in ipairs(near) do
    local cid, first = chunk_parts(member)
    if first <= tonumber(time) then
      local text = redis.call('HGET', log, cid)
      if text and string.find(text, needle, 1, true) then return true end
    end
  end
  return false
end

-- A key's rollup hashes (log-key.lua: KEYS 1..6) kept past this write: totals, day and day per model `days` ms, hour
-- and hour per model `hours` ms, the per-second rate three minutes (read back for the last one).
local function keep_key_rollups(keys, days, hours)
  for k = 1, 3 do redis.call('PEXPIRE', keys[k], days) end
  redis.call('PEXPIRE', keys[4], hours)
  redis.call('PEXPIRE', keys[5], hours)
  redis.call('PEXPIRE', keys[6], RATE_KEEP_MS)
end
