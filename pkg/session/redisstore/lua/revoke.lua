-- revoke: delete a grant list and return its live entries (expired ones
-- were no longer grants).
-- Every id of the list goes to KEYS[2], its removed ids, for ARGV[1] ms.
-- KEYS[1] grant list, KEYS[2] its removed ids; ARGV[1] retention (ms)
-- → {entries...}
local v = redis.call('GET', KEYS[1])
if not v then
  return {}
end
redis.call('DEL', KEYS[1])
gone(KEYS[2], dec(v), ARGV[1])
local now = now_us()
local out = {}
for _, e in ipairs(dec(v)) do
  local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
  exp = tonumber(exp)
  if not id or exp == 0 or exp > now then
    out[#out + 1] = e
  end
end
return out
