-- Atomic check-and-reserve for one API key (all keys share the key's hash tag, so one slot).
-- KEYS: 1 lease zset, 2 rpm zset, 3 tpm bucket of this minute, 4 acct hash (spend, window starts and used), 5 held hash
--       (held.lua)
-- ARGV: 1 now, 2 request id, 3 estimated tokens, 4 the key's terms, one string of eight integers apart by spaces (the
--       same for all of a key's requests, so the list form reads it once a turn): lease ms, quota nano, 5h/1d/7d limit
--       nano, concurrency, rpm, tpm   (0 = unlimited); 5 estimated cost nano (held until settled)
-- Returns 1 (admitted, a lease taken), 2 (admitted, no lease: the key has no concurrency limit) or {0, reason,
-- retry-after ms (-1: waiting cannot help), window, 1 when only what requests in flight hold reaches the limit}. (A
-- number is the cheapest answer for the fused script to pass on.)
-- Check order: quota, windows, concurrency, rpm, tpm; nothing is reserved unless every check passes.
-- Several calls of one turn run its list form instead, admit-many.lua (fuse.ts): a change here is a change there.
local now = tonumber(ARGV[1])
local id = ARGV[2]
local est = tonumber(ARGV[3])
local terms = {}
for v in string.gmatch(ARGV[4], '%S+') do terms[#terms + 1] = tonumber(v) end
local lease_ms = terms[1]
local quota = terms[2]
local conc = terms[6]
local rpm = terms[7]
local tpm = terms[8]
local cost = tonumber(ARGV[5])
local minute = math.floor(now / MINUTE_MS)
local function int(x) return string.format('%d', x) end

-- What requests in flight hold counts as spent: concurrent requests cannot all pass a limit they reach together.
local h, held = nil, 0
if quota > 0 or terms[3] > 0 or terms[4] > 0 or terms[5] > 0 then
  h = holds(KEYS[5])
  held = h.at(minute)
end
if quota > 0 then
  local spent = tonumber(redis.call('HGET', KEYS[4], 'spend') or '0')
  if spent >= quota then return {0, 'quota_exhausted', -1, ''} end
  if spent + held >= quota then return {0, 'quota_exhausted', HELD_RETRY_MS, '', 1} end
end

-- Fixed windows that start at the first spend; with several exhausted, report the one resetting last.
local names = {'5h', '1d', '7d'}
local lens = {WINDOW_5H_MS, WINDOW_1D_MS, WINDOW_7D_MS}
local wait, win, by_held = -1, '', 0
for i = 1, 3 do
  local limit = terms[2 + i]
  if limit > 0 then
    local s = redis.call('HMGET', KEYS[4], 's' .. names[i], 'u' .. names[i])
    local used, ends = 0, 0
    if s[1] then
      ends = tonumber(s[1]) + lens[i]
      if now < ends then used = tonumber(s[2] or '0') end
    end
    local w = -1
    if used >= limit then w = ends - now elseif used + held >= limit then w = HELD_RETRY_MS end
    if w > wait then
      wait, win = w, names[i]
      by_held = used < limit and 1 or 0
    end
  end
end
if win ~= '' then return {0, 'window_exhausted', wait, win, by_held} end

-- A zset's size counting its stale entries too, exact (pruned first) whenever it reaches `limit`. Below the limit the
-- exact size is below it too, so pruning waits: it runs every 64th entry, which bounds what a zset holds.
local function size(key, limit, stale)
  local n = redis.call('ZCARD', key)
  if n >= limit or n % 64 == 63 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(stale))
    n = redis.call('ZCARD', key)
  end
  return n
end

-- Leases: score = expiry. Expired ones go first, so a crashed process never holds a slot for long.
local leases = 0
if conc > 0 then
  leases = size(KEYS[1], conc, now)
  if leases >= conc and not redis.call('ZSCORE', KEYS[1], id) then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    local w = tonumber(first[2]) - now
    if w > CONCURRENCY_RETRY_MS then w = CONCURRENCY_RETRY_MS end
    if w < 1 then w = 1 end
    return {0, 'concurrency', w, ''}
  end
end

-- Exact sliding 60 s window: an entry admitted at t leaves it at t + 60 s.
if rpm > 0 then
  if size(KEYS[2], rpm, now - RPM_WINDOW_MS) >= rpm and not redis.call('ZSCORE', KEYS[2], id) then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    local w = tonumber(oldest[2]) + RPM_WINDOW_MS - now
    if w < 1 then w = 1 end
    return {0, 'rpm', w, ''}
  end
end

if tpm > 0 then
  if est > tpm then return {0, 'tpm', -1, ''} end
  local used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used + est > tpm then return {0, 'tpm', MINUTE_MS - (now % MINUTE_MS), ''} end
end

local answer = 2
if conc > 0 then
  -- None held: the set is new (zadd.lua).
  if leases == 0 then zadd_new(KEYS[1], {int(now + lease_ms), id})
  else redis.call('ZADD', KEYS[1], int(now + lease_ms), id) end
  local keep = lease_ms + LEASE_KEEP_MS
  if redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], int(keep)) end
  answer = 1
end
if rpm > 0 then
  redis.call('ZADD', KEYS[2], int(now), id)
  redis.call('PEXPIRE', KEYS[2], RPM_KEEP_MS)
end
-- Tokens are counted even without a tpm limit, so a limit set later sees the real rate at once.
-- The minute's bucket gets its life when this creates it (settle and release never create one).
if est > 0 and redis.call('INCRBY', KEYS[3], ARGV[3]) == est then redis.call('PEXPIRE', KEYS[3], TPM_KEEP_MS) end
if cost > 0 then
  h = h or holds(KEYS[5])
  h.add(minute, cost)
  h.write()
end
return answer
