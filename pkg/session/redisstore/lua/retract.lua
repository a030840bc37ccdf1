-- retract: delete a request that Create or Prepare stored but could not
-- index, unless it moved on meanwhile: voted on, settled, or (stored held)
-- opened by an agent's retry on another replica.
-- KEYS[1] expiry index of the session, KEYS[2] record; ARGV[1] request id,
-- ARGV[2] the state the caller stored it in
-- → 1 deleted, 0 left alone
local v = redis.call('GET', KEYS[2])
if not v then
  return 0
end
local h = dec(v, HEAD)
if h[ST] ~= ARGV[2] or h[APPROVALS] ~= '' then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
