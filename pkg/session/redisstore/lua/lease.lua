-- lease: take the due sessions of one due-index shard for a while, so that
-- other reapers skip them; a reaper that dies loses nothing, the lease
-- runs out.
-- KEYS[1] due shard; ARGV[1] max sessions, ARGV[2] lease (µs)
-- → {lease score, {session, old score, ...}} or {''}
local now = now_us()
local m = redis.call('ZRANGE', KEYS[1], '-inf', num(now), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
if #m == 0 then
  return {''}
end
local lease = num(now + tonumber(ARGV[2]))
for i = 1, #m, 2 do
  redis.call('ZADD', KEYS[1], lease, m[i])
end
return {lease, m}
