-- Settles one request for its API key, once per request id: what limits read, at once. Releases the lease and the cost
-- held, reconciles tpm, adds spend to the lifetime total and the windows. The record and the rollups follow in a batch
-- (log-key.lua).
-- KEYS: 1 marker hash of the admission minute (request id -> 'd' settled, 'k' settled and its record kept: log-key.lua,
--       'r' released: release.lua), 2 lease zset, 3 tpm bucket of the admission minute, 4 acct hash, 5 log hash,
--       6 log index, 7 held hash (held.lua)
-- ARGV: 1 request id, 2 its lease member: '' none, '1' the request id (a lease the gateway took), else '=' and it,
--       3 tpm delta ('' = no admission), 4 record time, 5 estimated tokens of the admission, 6 cost nano,
--       7 "<marker ttl ms> <acct ttl ms>" (the same for every call: the list form parses it once a turn), 8 the cost the
--       admission holds, "<admission minute> <nano>" ('' = none), 9 (only for a record older than its marker's life) the
--       request id as JSON text
-- The markers of a key's requests of one minute are fields of one hash (a key each cost Redis an entry in its key space
-- and its expiry table, and an expiry of its own). Money is added straight from ARGV strings with HINCRBY: a Lua number
-- would be formatted with 14 significant digits and lose exactness. Returns 1 when recorded; for a repeat, 0 when its
-- record is kept, 2 when only the marker says it was settled (the record may never have reached a batch: a settlement
-- whose answer was lost is sent again). A record older than a marker's life is looked for in the log, by its minute.
-- Several calls of one turn run its list form instead, settle-many.lua (fuse.ts): a change here is a change there.
local mark = redis.call('HGET', KEYS[1], ARGV[1])
if mark == 'k' then return 0 end
if mark == 'd' then return 2 end
if not mark and ARGV[9] and logged(KEYS[5], KEYS[6], ARGV[9], ARGV[4]) then return 0 end
local marker_ttl, acct_ttl = string.match(ARGV[7], '^(%d+) (%d+)$')
redis.call('HSET', KEYS[1], ARGV[1], 'd')
redis.call('PEXPIRE', KEYS[1], marker_ttl)

if ARGV[2] == '1' then redis.call('ZREM', KEYS[2], ARGV[1])
elseif ARGV[2] ~= '' then redis.call('ZREM', KEYS[2], string.sub(ARGV[2], 2)) end
-- Only a bucket that still exists can be read by a tpm check; a gone one needs no correction.
if ARGV[3] ~= '' and redis.call('EXISTS', KEYS[3]) == 1 then
  local delta = tonumber(ARGV[3])
  -- After a release the estimate has left the bucket already: add every actual token.
  if mark == 'r' then delta = delta + tonumber(ARGV[5]) end
  if delta ~= 0 then redis.call('INCRBY', KEYS[3], string.format('%d', delta)) end
end
-- The actual cost counts from now on instead (below); after a release the hold has gone already; a lapsed one is gone.
if ARGV[8] ~= '' and mark ~= 'r' then
  local field, nano = string.match(ARGV[8], '^(%d+) (%d+)$')
  if redis.call('HEXISTS', KEYS[7], field) == 1 and redis.call('HINCRBY', KEYS[7], field, '-' .. nano) <= 0 then
    redis.call('HDEL', KEYS[7], field)
  end
end

local cost = ARGV[6]
if cost ~= '0' then
  local clock = tonumber(ARGV[4])
  redis.call('HINCRBY', KEYS[4], 'spend', cost)
  local names = {'5h', '1d', '7d'}
  local lens = {WINDOW_5H_MS, WINDOW_1D_MS, WINDOW_7D_MS}
  local starts = redis.call('HMGET', KEYS[4], 's5h', 's1d', 's7d')
  for i = 1, 3 do
    local s = starts[i]
    if not s or clock >= tonumber(s) + lens[i] then
      redis.call('HSET', KEYS[4], 's' .. names[i], ARGV[4], 'u' .. names[i], cost)
    else
      redis.call('HINCRBY', KEYS[4], 'u' .. names[i], cost)
    end
  end
  redis.call('PEXPIRE', KEYS[4], acct_ttl)
end
return 1
