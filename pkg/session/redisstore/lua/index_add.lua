-- index_add: note that a session has a request pending for an agent or a
-- team. The score is the latest expiry of those requests (GT keeps the
-- maximum), so a member whose score has passed names no open request and
-- can be dropped without any coordination; each add drops them, and the
-- key itself expires after the last one.
-- KEYS[1] index; ARGV[1] session id, ARGV[2] ttl (µs), ARGV[3] slack (µs)
local now = now_us()
local ttl, slack = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'GT', num(now + ttl), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. num(now - slack))
local keep = math.ceil((ttl + slack) / 1000)
local pttl = redis.call('PTTL', KEYS[1])
if pttl < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 1
