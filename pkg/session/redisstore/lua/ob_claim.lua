-- ob_claim: lease up to max outbox entries of one session whose lease ran
-- out (the replica that made the transition died, or failed before it
-- acknowledged them) and return their records; entries whose record is
-- gone (past its retention) are dropped.
-- KEYS[1] outbox of the session
-- ARGV[1] record key prefix, ARGV[2] max, ARGV[3] lease (µs)
-- → {earliest lease end left (µs) or '', {id, record, ...}}
local now = now_us()
local all = redis.call('HGETALL', KEYS[1])
local out, n, first = {}, 0, nil
local lease = num(now + tonumber(ARGV[3]))
for i = 1, #all, 2 do
  local id, val = all[i], all[i + 1]
  local bar = string.find(val, '|', 1, true)
  local ends = tonumber(string.sub(val, 1, bar - 1))
  if ends <= now and n < tonumber(ARGV[2]) then
    local v = redis.call('GET', ARGV[1] .. id)
    if v then
      redis.call('HSET', KEYS[1], id, lease .. string.sub(val, bar))
      out[#out + 1] = id
      out[#out + 1] = v
      n = n + 1
      ends = tonumber(lease)
    else
      redis.call('HDEL', KEYS[1], id)
      ends = nil
    end
  end
  if ends and (first == nil or ends < first) then
    first = ends
  end
end
if first then
  return {num(first), out}
end
return {'', out}
