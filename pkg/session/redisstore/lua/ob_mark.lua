-- ob_mark: make sure a session is in the outbox index no later than when
-- the lease of the entry its transition records runs out (now + lease).
-- Pipelined before the transition: a worker may then find an empty outbox
-- (it drops the member), never an entry the index does not name.
-- Scores of worker leases are odd and all others even: a mark that finds a
-- lease moves the score off it by 1 µs (keeping its time), so that the
-- worker's finalize, which acts only on its own lease score, leaves the
-- session scheduled for the entry it may not have seen.
-- KEYS[1] outbox index shard; ARGV[1] session id, ARGV[2] lease (µs)
local t = now_us() + tonumber(ARGV[2])
if t % 2 == 1 then
  t = t + 1
end
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if cur then
  cur = tonumber(cur)
  if cur % 2 == 1 then
    redis.call('ZADD', KEYS[1], num(math.min(t, cur + 1)), ARGV[1])
    return 1
  end
end
redis.call('ZADD', KEYS[1], 'LT', num(t), ARGV[1])
return 1
