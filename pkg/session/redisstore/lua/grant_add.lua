-- grant_add: add a grant to a grant list (a string of fields, so that the
-- hot path reads it with a plain GET) unless one with its id is there, and
-- remove the list's expired grants on the way (docs/STATE.md "Grants").
-- An entry is 'g1 <id> <created µs> <expires µs, 0: none> <json>'; other
-- entries are grants stored before grants were objects (legacy), kept.
-- A grant id in KEYS[2], the list's removed ids (revoked or expired, kept
-- for the retention ARGV[5] ms), is not added again: → {2}.
-- KEYS[1] grant list, KEYS[2] its removed ids; ARGV[1] id, ARGV[2] max age
-- (µs, '0': none), ARGV[3] json, ARGV[4] list TTL (ms) for a session list,
-- '' for an agent's, ARGV[5] retention (ms)
-- → {created 0|1, the entry with that id, purged entries...} or {2}
local now = now_us()
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return {2}
end
local v = redis.call('GET', KEYS[1]) or ''
local keep, purged, found, removed = {}, {}, nil, false
local forever, last = false, 0
local function note(exp)
  if exp == nil or exp == 0 then
    forever = true
  elseif exp > last then
    last = exp
  end
end
for _, e in ipairs(dec(v)) do
  local id, exp = string.match(e, '^g1 (%S+) %d+ (%d+) ')
  exp = tonumber(exp)
  if id and exp ~= 0 and exp <= now then
    purged[#purged + 1] = e
    removed = removed or id == ARGV[1]
  else
    keep[#keep + 1] = e
    note(exp)
    if id == ARGV[1] then
      found = e
    end
  end
end
gone(KEYS[2], purged, ARGV[5])
if removed then
  -- This very grant expired: it is not renewed (its expiry goes
  -- unreported here; ExpireGrants reports the others purged later).
  redis.call('SET', KEYS[1], enc(keep), 'KEEPTTL')
  return {2}
end
local created = 0
if not found then
  local exp = 0
  if ARGV[2] ~= '0' then
    exp = now + tonumber(ARGV[2])
  end
  found = 'g1 ' .. ARGV[1] .. ' ' .. num(now) .. ' ' .. num(exp) .. ' ' .. ARGV[3]
  keep[#keep + 1] = found
  note(exp)
  created = 1
end
if created == 1 or #purged > 0 then
  redis.call('SET', KEYS[1], enc(keep))
end
if ARGV[4] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
elseif forever then
  redis.call('PERSIST', KEYS[1])
else
  -- Every grant of the agent expires: Redis drops the list a day after
  -- the last, time enough for ExpireGrants to report each expiry first.
  redis.call('PEXPIREAT', KEYS[1], num(math.floor(last / 1000) + 86400000))
end
local out = {created, found}
for _, e in ipairs(purged) do
  out[#out + 1] = e
end
return out
