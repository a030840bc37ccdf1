-- count_due: how many requests of a session are due, and its earliest
-- expiry (so that a session with nothing to claim needs no claim call).
-- KEYS[1] expiry index of the session → {count, earliest expiry or ''}
local n = redis.call('ZCOUNT', KEYS[1], '-inf', num(now_us()))
return {n, first_score(KEYS[1])}
