-- retract: delete a request that Create stored but could not index, unless
-- it was voted on or settled meanwhile.
-- KEYS[1] expiry index of the session, KEYS[2] record; ARGV[1] request id
-- → 1 deleted, 0 left alone
local v = redis.call('GET', KEYS[2])
if not v then
  return 0
end
local h = dec(v, HEAD)
if (h[ST] ~= 'pending' and h[ST] ~= 'creating') or h[APPROVALS] ~= '' then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
