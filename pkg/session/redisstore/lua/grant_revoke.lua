-- grant_revoke: remove one grant from a grant index, by id (found through
-- its '#<id>' field) or, for a legacy entry, by its exact text in the
-- bucket ARGV[4], unless it has expired. The id goes to KEYS[2], the
-- removed ids, for ARGV[3] ms. The old single-string list KEYS[3], if
-- any, is migrated into the index first.
-- KEYS[1] grant index, KEYS[2] removed ids, KEYS[3] old list; ARGV[1] id,
-- ARGV[2] legacy entry or '', ARGV[3] retention (ms), ARGV[4] bucket of a
-- legacy entry, ARGV[5] 's' for a session's grants, 'a' for an agent's
-- → the removed entry, or false
local now = now_us()
g_migrate(KEYS[3], KEYS[1], ARGV[5] == 's')
local b = redis.call('HGET', KEYS[1], '#' .. ARGV[1])
if not b and ARGV[2] ~= '' then
  b = ARGV[4]
end
if not b then
  return false
end
local keep, hit = {}, nil
for _, e in ipairs(dec(redis.call('HGET', KEYS[1], b) or '')) do
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
redis.call('HDEL', KEYS[1], '#' .. ARGV[1])
g_put(KEYS[1], b, keep)
return hit
