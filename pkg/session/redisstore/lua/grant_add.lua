-- grant_add: add a grant to the bucket ARGV[6] of a grant index (a hash
-- of buckets, each a string of fields, so that the hot path reads the
-- buckets it needs with one HMGET) unless one with its id is there, and
-- remove that bucket's expired grants on the way (docs/STATE.md "Grants").
-- An entry is 'g1 <id> <created µs> <expires µs, 0: none> <json>'; other
-- entries are grants stored before grants were objects (legacy), kept.
-- A grant id in KEYS[2], the list's removed ids (revoked or expired, kept
-- for the retention ARGV[5] ms), is not added again: → {2}. The old
-- single-string list KEYS[3], if any, is migrated into the index first.
-- KEYS[1] grant index, KEYS[2] removed ids, KEYS[3] old list; ARGV[1] id,
-- ARGV[2] max age (µs, '0': none), ARGV[3] json, ARGV[4] index TTL (ms)
-- for a session, '' for an agent, ARGV[5] retention (ms), ARGV[6] bucket,
-- ARGV[7] 's' for a session's grants, 'a' for an agent's
-- → {created 0|1, the entry with that id, purged entries...} or {2}
local now = now_us()
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return {2}
end
g_migrate(KEYS[3], KEYS[1], ARGV[7] == 's', true)
local existed = redis.call('EXISTS', KEYS[1]) == 1
-- A grant stored already is found in its bucket, whatever a retry says.
local b = redis.call('HGET', KEYS[1], '#' .. ARGV[1]) or ARGV[6]
local keep, purged, found, removed = {}, {}, nil, false
for _, e in ipairs(dec(redis.call('HGET', KEYS[1], b) or '')) do
  local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
  exp = tonumber(exp)
  if id and exp ~= 0 and exp <= now then
    purged[#purged + 1] = e
    removed = removed or id == ARGV[1]
    redis.call('HDEL', KEYS[1], '#' .. id)
  else
    keep[#keep + 1] = e
    if id == ARGV[1] then
      found = e
    end
  end
end
gone(KEYS[2], purged, ARGV[5])
if removed then
  -- This very grant expired: it is not renewed (its expiry goes
  -- unreported here; ExpireGrants reports the others purged later).
  g_put(KEYS[1], b, keep)
  return {2}
end
local created, exp = 0, 0
if not found then
  if ARGV[2] ~= '0' then
    exp = now + tonumber(ARGV[2])
  end
  found = 'g1 ' .. ARGV[1] .. ' ' .. num(now) .. ' ' .. num(exp) .. ' ' .. ARGV[3]
  keep[#keep + 1] = found
  redis.call('HSET', KEYS[1], '#' .. ARGV[1], b)
  created = 1
end
if created == 1 or #purged > 0 then
  g_put(KEYS[1], b, keep)
end
if ARGV[4] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
elseif created == 1 and exp == 0 then
  redis.call('PERSIST', KEYS[1])
elseif created == 1 then
  -- An agent's grants expire: Redis drops the index a day after the
  -- last one's expiry, time enough for ExpireGrants to report each
  -- expiry first. The lifetime only grows: an index without one (a grant
  -- without expiry, or a legacy one) keeps none.
  local at = redis.call('PEXPIRETIME', KEYS[1])
  local want = math.floor(exp / 1000) + 86400000
  if not (existed and at == -1) and at < want then
    redis.call('PEXPIREAT', KEYS[1], num(want))
  end
end
local out = {created, found}
for _, e in ipairs(purged) do
  out[#out + 1] = e
end
return out
