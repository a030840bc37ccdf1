-- esc_done: the steps of one request that ran ('d<step>|<µs>:<id>'). The
-- session holds few members: they are scanned.
-- KEYS[1] escalation steps of the session; ARGV[1] request id
-- → {member, ...}
local out = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 1, 1) == 'd' then
    local c = string.find(m, ':', 1, true)
    if c and string.sub(m, c + 1) == ARGV[1] and string.match(string.sub(m, 2, c - 1), '^%d+|%d+$') then
      out[#out + 1] = m
    end
  end
end
return out
