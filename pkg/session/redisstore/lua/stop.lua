-- stop: set the session's stop signal and return its open requests, which
-- the caller then settles with settle_many. Creates that run after this
-- script see the signal and store nothing.
-- KEYS[1] stop signal, KEYS[2] expiry index of the session
-- ARGV[1] reason, ARGV[2] record key prefix, ARGV[3..] ids of the hard
-- rejections behind the stop (added to those of a stop in force, which
-- keeps its reason)
-- → {due count, {id, record, ...}}
stop_add(KEYS[1], ARGV[1], {unpack(ARGV, 3)})
local now = now_us()
local ids = redis.call('ZRANGE', KEYS[2], '(' .. num(now), '+inf', 'BYSCORE')
local due = redis.call('ZCOUNT', KEYS[2], '-inf', num(now))
return {due, list_open(ARGV[2], ids, now)}
