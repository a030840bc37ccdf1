-- grant_expire: remove the expired grants of a grant index (every
-- bucket) and return them; each expired grant is returned by exactly one
-- call. Their ids go to KEYS[2], the removed ids, for ARGV[1] ms. The old
-- single-string list KEYS[3], if any, is migrated into the index first.
-- KEYS[1] grant index, KEYS[2] removed ids, KEYS[3] old list; ARGV[1]
-- retention (ms), ARGV[2] 's' for a session's grants, 'a' for an agent's
-- → {exists 0|1, purged entries...}
local now = now_us()
g_migrate(KEYS[3], KEYS[1], ARGV[2] == 's')
local f = g_fields(redis.call('HGETALL', KEYS[1]))
if #f == 0 then
  return {0}
end
local out = {1}
for i = 1, #f, 2 do
  local keep, n = {}, #out
  for _, e in ipairs(f[i + 1]) do
    local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
    exp = tonumber(exp)
    if id and exp ~= 0 and exp <= now then
      out[#out + 1] = e
      redis.call('HDEL', KEYS[1], '#' .. id)
    else
      keep[#keep + 1] = e
    end
  end
  if #out > n then
    g_put(KEYS[1], f[i], keep)
  end
end
if #out > 1 then
  local ids = {}
  for i = 2, #out do
    ids[#ids + 1] = out[i]
  end
  gone(KEYS[2], ids, ARGV[1])
end
return out
