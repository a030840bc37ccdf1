-- breaker_reset: lift a breaker's trip and forget its counts.
-- KEYS[1] the trips hash, KEYS[2] the breaker's index of hit sets;
-- ARGV[1] the breaker.
-- → the trip lifted, or '' when it was not tripped
local sets = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, k in ipairs(sets) do
  redis.call('DEL', k)
end
redis.call('DEL', KEYS[2])
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then
  return ''
end
redis.call('HDEL', KEYS[1], ARGV[1])
return v
