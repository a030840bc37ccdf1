-- open: make a held request (state creating) pending, unless the session is
-- stopped or the request's expiry has passed.
-- KEYS[1] record, KEYS[2] stop signal
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
if now_us() >= tonumber(h[EXPIRES]) then
  -- Left held: the claim script drops it.
  return {'due', v}
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'stopped'}
end
h[ST] = 'pending'
v = enc(h) .. rest
redis.call('SET', KEYS[1], v)
return {'ok', v}
