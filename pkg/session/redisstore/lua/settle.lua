-- settle: move a pending request to a final state with compare-and-set.
-- KEYS[1] expiry index of the session, KEYS[2] record, KEYS[3] stop signal,
-- KEYS[4] outbox of the session
-- ARGV[1] request id, ARGV[2] state, ARGV[3] decision (JSON),
-- ARGV[4] retention (ms), ARGV[5] outbox lease (µs)
-- A held request (creating) reads as not found; approving in a stopped
-- session is refused.
-- → {'ok'|'settled'|'due'|'stopped', record} or {'nf'}
local done, h, rest, now, v = pending_head(KEYS[2])
if done then
  return done
end
if ARGV[2] == 'approved' and redis.call('EXISTS', KEYS[3]) == 1 then
  return {'stopped', v}
end
settle_head(h, ARGV[2], ARGV[3], now)
v = enc(h) .. rest
redis.call('SET', KEYS[2], v, 'PX', ARGV[4])
redis.call('ZREM', KEYS[1], ARGV[1])
ob_put(KEYS[4], ARGV[1], h, now, ARGV[5])
return {'ok', v}
