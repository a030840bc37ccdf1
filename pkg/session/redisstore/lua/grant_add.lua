-- grant_add: add an entry to a grant list (a string of fields, so that the
-- hot path reads it with a plain GET) unless it is there already.
-- KEYS[1] grant list; ARGV[1] entry, ARGV[2] TTL (ms) or '' for none
local v = redis.call('GET', KEYS[1]) or ''
local present = false
for _, e in ipairs(dec(v)) do
  if e == ARGV[1] then
    present = true
    break
  end
end
if not present then
  v = v .. enc({ARGV[1]})
end
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[1], v, 'PX', ARGV[2])
elseif not present then
  redis.call('SET', KEYS[1], v)
end
return 1
