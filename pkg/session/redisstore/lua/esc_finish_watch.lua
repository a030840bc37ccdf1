-- esc_finish_watch: remove a page watch once its page is resolved. The
-- member carries the watch period, which the caller does not know: it is
-- found by its prefix and suffix ('w<step>|' <digits> ':<id>'; the
-- digits check keeps id 'b' from matching the member of id 'a:b').
-- KEYS[1] escalation steps of the session; ARGV[1] prefix, ARGV[2] suffix
-- → how many members it removed
local n = 0
local all = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, m in ipairs(all) do
  local mid = string.sub(m, #ARGV[1] + 1, #m - #ARGV[2])
  if string.sub(m, 1, #ARGV[1]) == ARGV[1] and string.sub(m, -#ARGV[2]) == ARGV[2]
      and string.match(mid, '^%d+$') then
    redis.call('ZREM', KEYS[1], m)
    n = n + 1
  end
end
return n
