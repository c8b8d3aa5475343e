-- Shared by account-acquire.lua (prepended by lua/index.ts): which candidate account a request takes.
-- The same rules as rules/accounts.ts pickAccount (the memory store); a change there is a change here.

-- Stride scheduling (rules/accounts.ts stride, effectivePasses): a pick moves the pass on by PASS_STRIDE / weight; a never-used
-- account joins just before the lowest pass, one that sat out counts as at most two strides behind the furthest.
local function stride(w)
  if w > 0 then return math.floor(PASS_STRIDE / w + 0.5) end
  return PASS_STRIDE
end

-- Lowest priority number, then lowest load (cross-multiplied: exact), then a weight above 0, then the lowest pass,
-- then least recently used.
local function order(a, b)
  if a.priority ~= b.priority then return a.priority < b.priority and -1 or 1 end
  local la, lb = a.busy * b.conc, b.busy * a.conc
  if la ~= lb then return la < lb and -1 or 1 end
  if (a.weight > 0) ~= (b.weight > 0) then return a.weight > 0 and -1 or 1 end
  if a.eff ~= b.eff then return a.eff < b.eff and -1 or 1 end
  if a.used ~= b.used then return a.used < b.used and -1 or 1 end
  return 0
end

local function free(x) return not x.cooling and x.busy < x.conc end

-- c: the n candidates {priority, weight, conc, busy, cooling, cool, pass, used, holds}, each given its effective pass
-- (eff); prefer (0 = none), pinned, roll (text, parsed only for ties). Returns the candidate and whether the request
-- holds its slot already, or nil, the refusal and its retry-after ms (-1: none).
local function pick_account(c, n, prefer, pinned, roll, now)
  local low, high, longest = nil, nil, 0
  for i = 1, n do
    longest = math.max(longest, stride(c[i].weight))
    local p = c[i].pass
    if p then
      if not low or p < low then low = p end
      if not high or p > high then high = p end
    end
  end
  for i = 1, n do
    if not low then c[i].eff = -1
    elseif not c[i].pass then c[i].eff = low - 1
    else c[i].eff = math.max(c[i].pass, high - 2 * longest) end
  end

  for i = 1, n do
    if c[i].holds and (not pinned or i == prefer) then return i, true end
  end

  if prefer > 0 and free(c[prefer]) then return prefer, false end
  if pinned then
    if c[prefer].cooling then return nil, 'cooling', c[prefer].cool - now end
    return nil, 'busy', -1
  end

  -- The best free candidate (the first of its ties) and how many tie with it; the ties are listed only when there are.
  local best, ties = nil, 0
  for i = 1, n do
    if free(c[i]) then
      local cmp = -1
      if best then cmp = order(c[i], c[best]) end
      if cmp < 0 then best, ties = i, 1 elseif cmp == 0 then ties = ties + 1 end
    end
  end

  if ties == 1 then return best, false end
  if ties > 1 then
    local tied = {best}
    for i = best + 1, n do
      if free(c[i]) and order(c[i], c[best]) == 0 then tied[#tied + 1] = i end
    end
    roll = tonumber(roll)
    -- Among exact ties: chosen with probability weight / total weight.
    local total = 0
    for _, i in ipairs(tied) do total = total + c[i].weight end
    if total > 0 then
      local target, acc, pick = roll * total, 0, nil
      for _, i in ipairs(tied) do
        if c[i].weight > 0 then
          acc = acc + c[i].weight
          pick = i
          if target < acc then break end
        end
      end
      return pick, false
    end
    local k = math.floor(roll * #tied) + 1
    if k > #tied then k = #tied end
    return tied[k], false
  end

  if n == 0 then return nil, 'none', -1 end
  local soonest
  for i = 1, n do
    if not c[i].cooling then return nil, 'busy', -1 end
    local w = c[i].cool - now
    if not soonest or w < soonest then soonest = w end
  end
  return nil, 'cooling', soonest
end
