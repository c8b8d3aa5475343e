-- Takes an account out of scheduling until a time and marks it probing; a later end wins over an earlier one.
-- KEYS: 1 state hash   ARGV: 1 until (ms), 2 reason, 3 key ttl ms (covers the cool-down, then the idle time)
local cur = redis.call('HGET', KEYS[1], 'cool')
if not cur or tonumber(ARGV[1]) > tonumber(cur) then
  redis.call('HSET', KEYS[1], 'cool', ARGV[1], 'why', ARGV[2])
end
redis.call('HSET', KEYS[1], 'probe', '1')
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
