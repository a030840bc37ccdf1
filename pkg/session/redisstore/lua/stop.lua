-- stop: set the session's stop signal and return its open requests, which
-- the caller then settles with settle_many. Creates that run after this
-- script see the signal and store nothing.
-- KEYS[1] stop signal, KEYS[2] expiry index of the session
-- ARGV[1] reason, ARGV[2] record key prefix
-- → {due count, {id, record, ...}}
redis.call('SET', KEYS[1], ARGV[1])
local now = now_us()
local ids = redis.call('ZRANGE', KEYS[2], '(' .. num(now), '+inf', 'BYSCORE')
local due = redis.call('ZCOUNT', KEYS[2], '-inf', num(now))
return {due, list_open(ARGV[2], ids, now)}
