-- A sorted set as a turn's calls see it one by one: size and members read once (ZCARD, ZMSCORE), additions written with
-- one ZADD (write); what needs Redis's own view (prune, first) writes them first.
-- zset(key, members, skiplist): `members` are the ids the turn may ask about or add (one ZMSCORE); others cost a ZSCORE
-- each. `skiplist`: a set this creates starts as a skiplist (zadd.lua).
-- Its fields are read in place: n, its size; has[m],
-- m's score when it holds m, else false (asked of Redis the first time for a member the turn did not name).
local function zset(key, members, skiplist)
  -- args: the additions not written yet (score and member, as ZADD takes them; a member added twice goes twice, the
  -- last score winning as in Redis), their lowest score minAdd; low: the lowest score Redis holds (read when first
  -- needed).
  local z = {args = {}, minAdd = math.huge, low = nil}
  local asked = {__index = function(has, m)
    local v = redis.call('ZSCORE', key, m)
    has[m] = v
    return v
  end}
  z.has = setmetatable({}, asked)
  for i = 1, #members, 1000 do
    local v = redis.pcall('ZMSCORE', key, unpack(members, i, math.min(i + 999, #members)))
    -- A Redis before 6.2 has no ZMSCORE: has asks ZSCORE member by member instead.
    if v.err then break end
    for j = 1, #v do z.has[members[i + j - 1]] = v[j] end
  end
  z.n = redis.call('ZCARD', key)
  -- A skiplist whose key Redis does not hold: the next write creates it.
  z.none = skiplist and z.n == 0
  -- text: the score as ZADD takes it when the caller holds it already (an argument as sent), so it is not formatted.
  function z.add(score, m, text)
    if not z.has[m] then z.n = z.n + 1 end
    z.has[m] = score
    local args = z.args
    local n = #args
    args[n + 1], args[n + 2] = text or string.format('%d', score), m
    if score < z.minAdd then z.minAdd = score end
  end
  function z.write()
    local args = z.args
    if #args == 0 then return false end
    if z.none then
      zadd_new(key, args)
      z.none = false
    else
      batched('ZADD', key, args)
    end
    if z.low and z.minAdd < z.low then z.low = z.minAdd end
    z.args, z.minAdd = {}, math.huge
    return true
  end
  -- Drops the entries scored up to `upto`; the members the turn knows keep their scores, those pruned are gone.
  function z.prune(upto)
    z.write()
    redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', upto))
    z.n = redis.call('ZCARD', key)
    z.none = skiplist and z.n == 0
    z.low = nil
    for m, v in pairs(z.has) do
      if v and N[v] <= upto then z.has[m] = false end
    end
  end
  -- ZREMRANGEBYSCORE -inf upto, called only when an entry may be that old: the lowest score is read once (and the
  -- turn's additions are known), so the calls of a turn that remove nothing cost nothing.
  function z.expire(upto)
    if z.low == nil then
      local f = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      z.low = f[2] and N[f[2]] or math.huge
    end
    if z.low <= upto or z.minAdd <= upto then
      z.prune(upto)
    end
  end
  -- The lowest-scored entry's score (nil when empty).
  function z.first()
    z.write()
    local f = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    return f[2] and N[f[2]] or nil
  end
  return z
end
