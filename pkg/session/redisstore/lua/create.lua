-- create: store a request, pending (Create) or held (Prepare), unless its id
-- exists or the session is stopped.
-- KEYS[1] expiry index of the session, KEYS[2] record, KEYS[3] stop signal
-- ARGV[1] request id, ARGV[2] ttl (µs), ARGV[3] approvals required,
-- ARGV[4] record tail, ARGV[5] state ('pending' or 'creating')
-- → {1, record} created, {0, record} existing, {2} stopped
local v = redis.call('GET', KEYS[2])
if v then
  return {0, v}
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {2}
end
local now = now_us()
local exp = now + tonumber(ARGV[2])
v = enc({'1', ARGV[5], num(now), num(exp), '', ARGV[3], '', ''}) .. ARGV[4]
redis.call('SET', KEYS[2], v)
redis.call('ZADD', KEYS[1], num(exp), ARGV[1])
return {1, v}
