-- grant_revoke: remove one grant from a grant list, by id (or, for a
-- legacy entry, by its exact text), unless it has expired.
-- The id goes to KEYS[2], the list's removed ids, for ARGV[3] ms.
-- KEYS[1] grant list, KEYS[2] its removed ids; ARGV[1] id, ARGV[2] legacy
-- entry or '', ARGV[3] retention (ms)
-- → the removed entry, or false
local now = now_us()
local v = redis.call('GET', KEYS[1])
if not v then
  return false
end
local keep, hit = {}, nil
for _, e in ipairs(dec(v)) do
  local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
  exp = tonumber(exp)
  local live = not id or exp == 0 or exp > now
  if not hit and live and ((id and id == ARGV[1]) or (not id and ARGV[2] ~= '' and e == ARGV[2])) then
    hit = e
  else
    keep[#keep + 1] = e
  end
end
if not hit then
  return false
end
gone(KEYS[2], {hit}, ARGV[3])
if #keep == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], enc(keep), 'KEEPTTL')
end
return hit
