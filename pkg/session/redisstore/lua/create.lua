-- create: store a request held (Prepare), unless its id
-- exists or the session is stopped.
-- KEYS[1] expiry index of the session, KEYS[2] record, KEYS[3] stop signal,
-- KEYS[4] escalation steps of the session
-- ARGV[1] request id, ARGV[2] ttl (µs), ARGV[3] approvals required,
-- ARGV[4] record tail, ARGV[5] state ('creating': held),
-- ARGV[6..] when each escalation step is due after creation (µs): the
-- steps are scheduled with the request, so that none exists without its
-- ladder (members 's<step>:<id>', see esc_claim.lua).
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
for i = 6, #ARGV do
  redis.call('ZADD', KEYS[4], num(now + tonumber(ARGV[i])), 's' .. (i - 6) .. ':' .. ARGV[1])
end
return {1, v}
