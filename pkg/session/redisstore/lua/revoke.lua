-- revoke: delete a grant index (and the old single-string list, if any)
-- and return its live entries (expired ones were no longer grants).
-- Every id goes to KEYS[2], the removed ids, for ARGV[1] ms.
-- KEYS[1] grant index, KEYS[2] removed ids, KEYS[3] old list; ARGV[1]
-- retention (ms), ARGV[2] 's' for a session's grants, 'a' for an agent's
-- → {entries...}
g_migrate(KEYS[3], KEYS[1], ARGV[2] == 's')
local f = g_fields(redis.call('HGETALL', KEYS[1]))
if #f == 0 then
  return {}
end
redis.call('DEL', KEYS[1])
local now = now_us()
local all, out = {}, {}
for i = 2, #f, 2 do
  for _, e in ipairs(f[i]) do
    all[#all + 1] = e
    local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
    exp = tonumber(exp)
    if not id or exp == 0 or exp > now then
      out[#out + 1] = e
    end
  end
end
gone(KEYS[2], all, ARGV[1])
return out
