-- next_due: the earliest score of a due shard.
-- KEYS[1] due shard → {now (µs), earliest score or ''}
local now = now_us()
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first > 0 then
  return {num(now), first[2]}
end
return {num(now), ''}
