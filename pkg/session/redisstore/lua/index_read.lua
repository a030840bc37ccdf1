-- index_read: the sessions of an agent or team index that may still have
-- an open request (score, the latest expiry, not past by more than slack).
-- KEYS[1] index; ARGV[1] slack (µs) → {session, ...}
return redis.call('ZRANGE', KEYS[1], '(' .. num(now_us() - tonumber(ARGV[1])), '+inf', 'BYSCORE')
