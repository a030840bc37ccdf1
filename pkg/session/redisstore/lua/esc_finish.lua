-- esc_finish: end a claimed escalation step: remove it, or turn a page
-- step that paged into a watch ('w<step>|<watch µs>:<id>', first looked at
-- after the watch). A step already finished (by a caller whose lease ran
-- out meanwhile) stays as that caller left it.
-- KEYS[1] escalation steps of the session
-- ARGV[1] the claimed member, ARGV[2] the watch member or ''
-- ARGV[3] watch (µs)
-- → 1 when it changed something, else 0
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[1], num(now_us() + tonumber(ARGV[3])), ARGV[2])
end
return 1
