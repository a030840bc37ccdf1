-- breaker_hit: count a batch of breaker hits and trip the breakers they
-- bring to their threshold (docs/STATE.md "Breakers").
-- KEYS[1] the trips hash; per hit i (from 0): KEYS[2+2i] the sorted set of
-- its breaker and rule (agent → last hit µs), KEYS[3+2i] its breaker's
-- index (hit set key → last hit µs).
-- ARGV per hit: breaker, agent, threshold, window µs, the trip's JSON.
-- → the trips made, each "<µs>\n<agents, oldest hit first, space-separated>\n<JSON>"
local now = now_us()
local out = {}
for i = 0, (#KEYS - 1) / 2 - 1 do
  local hk, ik = KEYS[2 + 2 * i], KEYS[3 + 2 * i]
  local a = 5 * i
  local name, agent = ARGV[a + 1], ARGV[a + 2]
  local n, win, js = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), ARGV[a + 5]
  local ttl = math.ceil(win / 1000)
  -- The window holds hits newer than now - win; at most n agents are kept
  -- (the most recent): n is all a trip needs.
  redis.call('ZADD', hk, now, agent)
  redis.call('ZREMRANGEBYSCORE', hk, '-inf', num(now - win))
  redis.call('ZREMRANGEBYRANK', hk, 0, -(n + 1))
  redis.call('PEXPIRE', hk, ttl)
  redis.call('ZADD', ik, now, hk)
  redis.call('ZREMRANGEBYSCORE', ik, '-inf', num(now - win))
  redis.call('PEXPIRE', ik, ttl)
  if redis.call('HEXISTS', KEYS[1], name) == 0 then
    local agents = redis.call('ZRANGE', hk, 0, -1)
    if #agents >= n then
      local v = num(now) .. '\n' .. table.concat(agents, ' ') .. '\n' .. js
      redis.call('HSET', KEYS[1], name, v)
      out[#out + 1] = v
    end
  end
end
return out
