-- open: make a held request (state creating) pending, unless the session is
-- stopped or the request's expiry has passed.
-- KEYS[1] record, KEYS[2] stop signal, KEYS[3] outbox of the session
-- ARGV[1] request id, ARGV[2] outbox lease (µs): an opened request's
-- question is recorded in the outbox, so that it is asked even if the
-- opener dies.
-- → {'ok', record} opened, {'pending'|'settled'|'due', record} not opened,
-- {'stopped'}, {'nf'}
local v = redis.call('GET', KEYS[1])
if not v then
  return {'nf'}
end
local h, rest = dec(v, HEAD)
if h[ST] == 'pending' then
  return {'pending', v}
end
if h[ST] ~= 'creating' then
  return {'settled', v}
end
local now = now_us()
if now >= tonumber(h[EXPIRES]) then
  -- Left held: the claim script drops it.
  return {'due', v}
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'stopped'}
end
h[ST] = 'pending'
v = enc(h) .. rest
redis.call('SET', KEYS[1], v)
ob_put(KEYS[3], ARGV[1], h, now, ARGV[2])
return {'ok', v}
