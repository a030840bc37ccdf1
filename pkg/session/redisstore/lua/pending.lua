-- pending: the open requests of a session (pending, not yet due), all of
-- them or those named.
-- KEYS[1] expiry index of the session
-- ARGV[1] record key prefix, ARGV[2..] request ids (none: every open one)
-- → {due count, {id, record, ...}}
local now = now_us()
local ids
if #ARGV > 1 then
  ids = {}
  for i = 2, #ARGV do
    ids[#ids + 1] = ARGV[i]
  end
else
  ids = redis.call('ZRANGE', KEYS[1], '(' .. num(now), '+inf', 'BYSCORE')
end
local due = redis.call('ZCOUNT', KEYS[1], '-inf', num(now))
return {due, list_open(ARGV[1], ids, now)}
