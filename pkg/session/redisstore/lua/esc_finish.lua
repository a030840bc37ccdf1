-- esc_finish: end a claimed escalation step: it is recorded as done
-- ('d<step>|<µs it finished>:<id>', kept until the request's expiry for
-- its audit record, see esc_done.lua) and, for a page step that paged,
-- replaced by its watch ('w<step>|<watch µs>:<id>', first looked at after
-- the watch). A step already finished (by a caller whose lease ran out
-- meanwhile) stays as that caller left it.
-- KEYS[1] escalation steps of the session
-- ARGV[1] the claimed member, ARGV[2] the watch member or '',
-- ARGV[3] watch (µs), ARGV[4] step, ARGV[5] request id,
-- ARGV[6] the request's expiry (µs)
-- → 1 when it changed something, else 0
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local now = now_us()
redis.call('ZADD', KEYS[1], ARGV[6], 'd' .. ARGV[4] .. '|' .. num(now) .. ':' .. ARGV[5])
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[1], num(now + tonumber(ARGV[3])), ARGV[2])
end
return 1
