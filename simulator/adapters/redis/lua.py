"""Lua shared by the engine's scripts."""

# Token amounts as decimal strings (non-negative integers, no leading zeros): `add`, `sub`
# (a >= b) and `less`. A Lua number is a double and a Redis integer has 64 bits: neither holds
# the 10^30 units of a large 18-decimal balance exactly.
DECIMALS = """
local function add(a, b)
  local out, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry
    if i > 0 then d = d + a:byte(i) - 48 end
    if j > 0 then d = d + b:byte(j) - 48 end
    out[#out + 1] = string.char(48 + d % 10)
    carry = (d >= 10) and 1 or 0
    i, j = i - 1, j - 1
  end
  local s = string.reverse(table.concat(out))
  if s == '' then return '0' end
  return s
end
local function sub(a, b)
  local out, borrow, i, j = {}, 0, #a, #b
  while i > 0 do
    local d = a:byte(i) - 48 - borrow
    if j > 0 then d = d - (b:byte(j) - 48) end
    if d < 0 then d = d + 10; borrow = 1 else borrow = 0 end
    out[#out + 1] = string.char(48 + d)
    i, j = i - 1, j - 1
  end
  local s = (string.reverse(table.concat(out)):gsub('^0+', ''))
  if s == '' then return '0' end
  return s
end
local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
"""
