-- mark: make sure a session is in the due index no later than now + delay.
-- A score between now and now + lease may be a reaper's lease on the
-- session: that reaper may not have seen the new request, and only a
-- changed score keeps its finalize from dropping or rescheduling the
-- session, so such a score becomes now (look again at once; if it was not
-- a lease, the visit is merely early).
-- KEYS[1] due shard; ARGV[1] session id, ARGV[2] delay (µs, >= 0),
-- ARGV[3] lease (µs)
local now = now_us()
local target = now + tonumber(ARGV[2])
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur then
  cur = tonumber(cur)
  if cur > now and cur <= now + tonumber(ARGV[3]) then
    target = now
  end
end
redis.call('ZADD', KEYS[1], 'LT', num(target), ARGV[1])
return 1
