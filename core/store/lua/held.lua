-- A key's USD holds: the held hash has a field per admission minute, the nano-dollars its requests in flight hold; one
-- older than HOLD_MINUTES lapses (a crashed process's) and is deleted.

-- The held hash `key`, read once for the admissions of a turn: at(minute) is what is held then (lapsed fields are deleted
-- at once), add(minute, nano) holds more, write() sends what was added. The hash lives while its newest field counts.
local function holds(key)
  local all = redis.call('HGETALL', key)
  local fields, adds, order = {}, {}, {}
  for i = 1, #all, 2 do fields[tonumber(all[i])] = tonumber(all[i + 1]) end
  local h = {}
  function h.at(minute)
    local sum, gone = 0, {}
    for m, nano in pairs(fields) do
      if m > minute - HOLD_MINUTES then sum = sum + nano else gone[#gone + 1] = m end
    end
    for i, m in ipairs(gone) do
      fields[m], adds[m] = nil, nil
      gone[i] = string.format('%d', m)
    end
    if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
    return sum
  end
  function h.add(minute, nano)
    fields[minute] = (fields[minute] or 0) + nano
    if not adds[minute] then order[#order + 1] = minute end
    adds[minute] = (adds[minute] or 0) + nano
  end
  function h.write()
    local new = false
    for _, m in ipairs(order) do
      local a = adds[m]
      if a then
        adds[m] = nil
        if redis.call('HINCRBY', key, string.format('%d', m), string.format('%d', a)) == a then new = true end
      end
    end
    if new then redis.call('PEXPIRE', key, (HOLD_MINUTES + 1) * MINUTE_MS) end
  end
  return h
end

-- The hold of `nano` taken in minute `field` goes (a lapsed one is gone already): at a settlement or a release.
local function unhold(key, field, nano)
  if redis.call('HEXISTS', key, field) == 1 and redis.call('HINCRBY', key, field, string.format('%d', -nano)) <= 0 then
    redis.call('HDEL', key, field)
  end
end
