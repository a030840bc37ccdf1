-- revoke: delete a grant list and report how many grants it held.
-- KEYS[1] grant list → count
local v = redis.call('GET', KEYS[1])
if not v then
  return 0
end
redis.call('DEL', KEYS[1])
return #dec(v)
