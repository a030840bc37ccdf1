-- ob_ack: remove outbox entries whose effects were carried out, unless a
-- later transition of the request replaced the entry (another mark).
-- KEYS[1] outbox of the session; ARGV pairs: request id, mark
-- → how many entries it removed
local n = 0
for i = 1, #ARGV, 2 do
  local val = redis.call('HGET', KEYS[1], ARGV[i])
  if val then
    local bar = string.find(val, '|', 1, true)
    if string.sub(val, bar + 1) == ARGV[i + 1] then
      redis.call('HDEL', KEYS[1], ARGV[i])
      n = n + 1
    end
  end
end
return n
