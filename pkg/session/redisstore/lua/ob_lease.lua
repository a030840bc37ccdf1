-- ob_lease: take the sessions of one outbox index shard whose time has
-- come, for a while, so that other workers skip them (as the reaper's
-- lease does with the due index). Lease scores are odd (see ob_mark).
-- KEYS[1] outbox index shard; ARGV[1] max sessions, ARGV[2] lease (µs)
-- → {lease score, {session, old score, ...}} or {''}
local now = now_us()
local m = redis.call('ZRANGE', KEYS[1], '-inf', num(now), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
if #m == 0 then
  return {''}
end
local l = now + tonumber(ARGV[2])
if l % 2 == 0 then
  l = l + 1
end
local lease = num(l)
for i = 1, #m, 2 do
  redis.call('ZADD', KEYS[1], lease, m[i])
end
return {lease, m}
