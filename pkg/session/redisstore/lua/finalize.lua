-- finalize: end a lease. A session whose score is still the lease score is
-- rescheduled at its next expiry or removed; any other score means a Create
-- marked it meanwhile, and the mark stands.
-- KEYS[1] due shard; ARGV[1] lease score, then pairs: session, next ('' to
-- remove)
local lease = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) == lease then
    if ARGV[i + 1] == '' then
      redis.call('ZREM', KEYS[1], ARGV[i])
    else
      redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
    end
  end
end
return 1
