-- grant_expire: remove the expired grants of a grant list and return them;
-- each expired grant is returned by exactly one call.
-- Their ids go to KEYS[2], the list's removed ids, for ARGV[1] ms.
-- KEYS[1] grant list, KEYS[2] its removed ids; ARGV[1] retention (ms)
-- → {exists 0|1, purged entries...}
local now = now_us()
local v = redis.call('GET', KEYS[1])
if not v then
  return {0}
end
local keep, out = {}, {1}
for _, e in ipairs(dec(v)) do
  local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
  exp = tonumber(exp)
  if id and exp ~= 0 and exp <= now then
    out[#out + 1] = e
  else
    keep[#keep + 1] = e
  end
end
if #out > 1 then
  local ids = {}
  for i = 2, #out do
    ids[#ids + 1] = out[i]
  end
  gone(KEYS[2], ids, ARGV[1])
  if #keep == 0 then
    redis.call('DEL', KEYS[1])
  else
    redis.call('SET', KEYS[1], enc(keep), 'KEEPTTL')
  end
end
return out
