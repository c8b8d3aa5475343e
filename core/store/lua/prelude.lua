-- What the list forms share (fuse.ts puts it before a fused script, index.ts before a list form run alone): Redis's
-- globals as locals, and N, T and presized.
local KEYS, ARGV, redis, tonumber, tostring, string, math, table, ipairs, pairs, unpack, type, setmetatable, pcall =
  KEYS, ARGV, redis, tonumber, tostring, string, math, table, ipairs, pairs, unpack, type, setmetatable, pcall
-- N[s]: tonumber(s), parsed once per distinct string and script call.
local N = setmetatable({}, {__index = function(parsed, s)
  local v = tonumber(s)
  if v ~= nil then parsed[s] = v end
  return v
end})
-- presized(n): a table with n array slots from the start (not regrown at every power of two); up to 200.
local ZEROS = string.rep('\0', 200)
local function presized(n)
  if n <= #ZEROS then return {string.byte(ZEROS, 1, n)} end
  return {}
end
-- batched(cmd, key, list): cmd on key with the list as its arguments, at most 1000 a call (unpack's stack).
local function batched(cmd, key, list)
  for j = 1, #list, 1000 do redis.call(cmd, key, unpack(list, j, math.min(j + 999, #list))) end
end
-- T[s]: a list of numbers apart by spaces, parsed once per distinct string and script call.
local T = setmetatable({}, {__index = function(parsed, s)
  local t = {}
  for v in string.gmatch(s, '%S+') do t[#t + 1] = tonumber(v) end
  parsed[s] = t
  return t
end})
-- The spend windows' names and lengths, in the order of the admit terms and the acct hash (rules: units.ts WINDOWS).
local WINDOW_NAMES, WINDOW_LENS = {'5h', '1d', '7d'}, {WINDOW_5H_MS, WINDOW_1D_MS, WINDOW_7D_MS}
