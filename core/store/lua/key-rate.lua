-- Reads one API key's current rate: its settled records with ARGV[1] < time <= ARGV[2], counted and their tokens
-- summed (input, output, cache read, cache write: rollup.ts recordTokens). Read-only; one round trip.
-- KEYS: 1 records index zset (time -> id), 2 records hash (id -> JSON)
-- Returns {requests, tokens}.
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], ARGV[2])
local requests, tokens = 0, 0
local function count(v)
  if type(v) == 'number' and v > 0 and v < math.huge then return math.floor(v + 0.5) end
  return 0
end
for i = 1, #ids, 500 do
  local chunk = {}
  for j = i, math.min(i + 499, #ids) do chunk[#chunk + 1] = ids[j] end
  for _, json in ipairs(redis.call('HMGET', KEYS[2], unpack(chunk))) do
    if json then
      local r = cjson.decode(json)
      requests = requests + 1
      tokens = tokens + count(r.input_tokens) + count(r.output_tokens) + count(r.cache_read_tokens) + count(r.cache_write_tokens)
    end
  end
end
return {requests, tokens}
