-- Shared by the scripts that keep records (prepended by lua/index.ts). A record list (one per API key, one global) is a
-- log of chunks, one chunk per batch written (redis/batch.ts): the log hash holds chunk id -> the chunk's records, one
-- line "<time>\t<JSON>\n" each, oldest first, and '#' -> how many records its chunks count; the index zset holds
-- "<chunk id> <oldest time> <records counted>" -> the chunk's newest time. A chunk's records lie in one minute; a chunk
-- counting fewer records than its text holds has lost its oldest lines to the cap; '@<chunk id>' -> 1 says the chunk is
-- counted. Writing a record thus costs Redis a share of one string, not an entry in a hash and a sorted set each (their
-- inserts were most of a batch's cost), and no script sees the text (Lua hashes every byte of a string it is given):
-- the process writes it with a plain HSET just before the script.

local function chunk_parts(member)
  local id, oldest, n = string.match(member, '^(%S+) (%d+) (%d+)$')
  return id, tonumber(oldest), tonumber(n)
end

-- Takes `k` records (at most as many as it counts) off the chunk `member` (scored `score`): its text stays, and readers
-- skip its first lines beyond the count its member now gives (redis/log.ts), so no chunk's text is read or written here
-- (a long string through Lua costs Redis a hash of every byte).
local function skip(index, member, score, k)
  local id, oldest, n = chunk_parts(member)
  redis.call('ZREM', index, member)
  redis.call('ZADD', index, score, id .. ' ' .. oldest .. ' ' .. (n - k))
end

-- Drops chunk `id` (its text and its counted mark; the caller removes its index member).
local function drop_chunk(log, id)
  redis.call('HDEL', log, id, '@' .. id)
end

-- Adds a chunk (its id, record count, oldest and newest time: strings from ARGV) to a list, then trims the list: chunks
-- all older than `retention` ms before this chunk's newest go (readers hide the older records of a chunk straddling
-- that line: redis/log.ts), then the oldest records beyond `cap`, whole chunks or, of the oldest, a count (skip). The process wrote the chunk's text just before (redis/batch.ts); the field
-- '@<id>' says the chunk is counted. Returns false when it is already (a batch sent again), having written nothing.
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
