-- Settles requests once per request id, for what limits read (rules/ledger.ts): the lease and hold go, tpm takes the
-- actual tokens, spend and windows grow; the record and rollups follow in a batch (log-key.lua).
-- settle_many(n, K, A, NK, NA): the settlements of one turn (fuse.ts), answering as one by one in order would, what they
-- share read once and written once as sums ('%d': exact). Call i's keys from KEYS[K[i] + 1], NA[i] ARGV likewise:
-- KEYS: 1 marker hash of the admission minute (request id -> 'd' settled, 'k' settled and its record kept: log-key.lua,
--       'r' released: release.lua), 2 lease zset, 3 tpm bucket of the admission minute, 4 acct hash, 5 log hash,
--       6 log index, 7 held hash (held.lua)
-- ARGV: 1 request id, 2 its lease member: '' none, '1' the request id (a lease the gateway took), else '=' and it,
--       3 tpm delta ('' = no admission), 4 record time, 5 estimated tokens of the admission, 6 cost nano,
--       7 "<marker ttl ms> <acct ttl ms>" (the same for every call: parsed once a turn), 8 the cost the admission holds,
--       "<admission minute> <nano>" ('' = none), 9 (only for a record older than its marker's life) the request id as
--       JSON text
-- Answers per call 1 when recorded; for a repeat, 0 when its record is kept, 2 when only the marker says it was settled
-- (its record may never have reached a batch). A record older than a marker's life is looked for in the log.
-- rules/ledger.ts spendInWindows over a key's settlements of the turn (`calls`), in order: one past a window's end (or of
-- a key with none) starts it again. starts: the windows' stored starts. Per window {start, reset, add}.
local function spend_in_windows(starts, calls, A)
  local win = {}
  for w = 1, 3 do win[w] = {start = starts[w] and N[starts[w]] or nil, reset = false, add = 0} end
  for _, i in ipairs(calls) do
    local cost, clock = N[ARGV[A[i] + 6]], N[ARGV[A[i] + 4]]
    for w = 1, 3 do
      local x = win[w]
      if not x.start or clock >= x.start + WINDOW_LENS[w] then
        x.start, x.reset, x.add = clock, true, cost
      else
        x.add = x.add + cost
      end
    end
  end
  return win
end

local function settle_many(n, K, A, NK, NA)
  local function int(x) return string.format('%d', x) end
  local out = presized(n)

  -- Markers: one HMGET per marker hash, before the turn; each call then sees the marks of the calls before it.
  local byMarkers, markerOrder = {}, {}
  for i = 1, n do
    local key = KEYS[K[i] + 1]
    local m = byMarkers[key]
    if not m then
      m = {ids = {}, mark = {}, set = {}}
      byMarkers[key] = m
      markerOrder[#markerOrder + 1] = key
    end
    m.ids[#m.ids + 1] = ARGV[A[i] + 1]
  end
  for _, key in ipairs(markerOrder) do
    local m = byMarkers[key]
    for j = 1, #m.ids, 1000 do
      local v = redis.call('HMGET', key, unpack(m.ids, j, math.min(j + 999, #m.ids)))
      for n = 1, #v do m.mark[m.ids[j + n - 1]] = v[n] end
    end
  end

  local leases, buckets, accts, helds = {}, {}, {}, {}
  local leaseOrder, bucketOrder, acctOrder, heldOrder = {}, {}, {}, {}
  for i = 1, n do
    local k, a = K[i], A[i]
    local m = byMarkers[KEYS[k + 1]]
    local id = ARGV[a + 1]
    local mark = m.mark[id]
    if mark == 'k' or (not mark and NA[i] >= 9 and logged(KEYS[k + 5], KEYS[k + 6], ARGV[a + 9], ARGV[a + 4])) then
      out[i] = 0
    elseif mark == 'd' then
      out[i] = 2
    else
      out[i] = 1
      m.mark[id] = 'd'
      m.set[#m.set + 1] = id
      m.set[#m.set + 1] = 'd'
      m.ttl = T[ARGV[a + 7]][1]
      local lease = ARGV[a + 2]
      if lease ~= '' then
        local key = KEYS[k + 2]
        local l = leases[key]
        if not l then
          l = {}
          leases[key] = l
          leaseOrder[#leaseOrder + 1] = key
        end
        l[#l + 1] = lease == '1' and id or string.sub(lease, 2)
      end
      -- Only a bucket that still exists can be read by a tpm check; a gone one needs no correction.
      if ARGV[a + 3] ~= '' then
        local key = KEYS[k + 3]
        local b = buckets[key]
        if not b then
          b = {live = redis.call('EXISTS', key) == 1, delta = 0}
          buckets[key] = b
          bucketOrder[#bucketOrder + 1] = key
        end
        -- After a release (release.lua) the estimate has left the bucket already: add every actual token.
        if b.live then b.delta = b.delta + N[ARGV[a + 3]] + (mark == 'r' and N[ARGV[a + 5]] or 0) end
      end
      -- The hold goes (after a release it has gone already): per field, the turn's sum.
      if ARGV[a + 8] ~= '' and mark ~= 'r' then
        local key = KEYS[k + 7]
        local hd = helds[key]
        if not hd then
          hd = {fields = {}, order = {}}
          helds[key] = hd
          heldOrder[#heldOrder + 1] = key
        end
        local field, nano = string.match(ARGV[a + 8], '^(%d+) (%d+)$')
        if not hd.fields[field] then hd.order[#hd.order + 1] = field end
        hd.fields[field] = (hd.fields[field] or 0) + N[nano]
      end
      if ARGV[a + 6] ~= '0' then
        local key = KEYS[k + 4]
        local t = accts[key]
        if not t then
          -- calls: for the windows (call by call, below); spend: the turn's sum.
          t = {calls = {}, spend = 0}
          accts[key] = t
          acctOrder[#acctOrder + 1] = key
        end
        t.ttl = T[ARGV[a + 7]][2]
        t.calls[#t.calls + 1] = i
        t.spend = t.spend + N[ARGV[a + 6]]
      end
    end
  end

  for _, key in ipairs(markerOrder) do
    local m = byMarkers[key]
    if #m.set > 0 then
      batched('HSET', key, m.set)
      redis.call('PEXPIRE', key, m.ttl)
    end
  end

  for _, key in ipairs(leaseOrder) do batched('ZREM', key, leases[key]) end

  for _, key in ipairs(bucketOrder) do
    local delta = buckets[key].delta
    if delta ~= 0 then redis.call('INCRBY', key, int(delta)) end
  end

  -- Holds only shrink here: a field that one of the calls would have emptied is emptied by their sum too.
  for _, key in ipairs(heldOrder) do
    local hd = helds[key]
    for _, field in ipairs(hd.order) do unhold(key, field, hd.fields[field]) end
  end

  -- Spend: the lifetime total, and the windows.
  for _, key in ipairs(acctOrder) do
    local t = accts[key]
    local win = spend_in_windows(redis.call('HMGET', key, 's5h', 's1d', 's7d'), t.calls, A)
    redis.call('HINCRBY', key, 'spend', int(t.spend))
    for w = 1, 3 do
      local x, name = win[w], WINDOW_NAMES[w]
      if x.reset then redis.call('HSET', key, 's' .. name, int(x.start), 'u' .. name, int(x.add))
      elseif x.add ~= 0 then redis.call('HINCRBY', key, 'u' .. name, int(x.add)) end
    end
    redis.call('PEXPIRE', key, t.ttl)
  end
  return out
end
