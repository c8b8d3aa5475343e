-- Ends an account's probing state after a success, unless it is still cooling down at `now`
-- (a request that began before the cool-down proves nothing). KEYS: 1 state hash   ARGV: 1 now ('' = unknown)
if ARGV[1] ~= '' then
  local cool = redis.call('HGET', KEYS[1], 'cool')
  if cool and tonumber(cool) > tonumber(ARGV[1]) then return 0 end
end
return redis.call('HDEL', KEYS[1], 'probe')
