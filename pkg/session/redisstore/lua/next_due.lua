-- next_due: the earliest score of a due shard.
-- KEYS[1] due shard → {now (µs), earliest score or ''}
local now = now_us()
return {num(now), first_score(KEYS[1])}
