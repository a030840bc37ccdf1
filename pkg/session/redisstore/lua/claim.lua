-- claim: expire up to max due requests of one session and hand them out;
-- held ones (never opened) are deleted instead.
-- Removing the id from the expiry index is the compare-and-set that makes
-- each request claimed exactly once.
-- KEYS[1] expiry index of the session, KEYS[2] outbox of the session
-- ARGV[1] record key prefix, ARGV[2] max, ARGV[3] retention (ms),
-- ARGV[4] outbox lease (µs): each expired request's timeout is recorded
-- in the outbox, so that it is reported even if the claimer dies.
-- → {next expiry (µs) or '', {id, record, ...}}
local now = now_us()
local ids = redis.call('ZRANGE', KEYS[1], '-inf', num(now), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local k = ARGV[1] .. id
  local v = redis.call('GET', k)
  if v then
    -- Only the fields up to "decided" change; the outbox mark reads the
    -- approvals: decode no further.
    local h, rest = dec(v, APPROVALS)
    if h[ST] == 'creating' then
      -- Held until its expiry: nobody was told it is pending.
      redis.call('DEL', k)
    elseif h[ST] == 'pending' then
      expire_head(h, now)
      v = enc(h) .. rest
    end
    if h[ST] == 'expired' then
      redis.call('SET', k, v, 'PX', ARGV[3])
      ob_put(KEYS[2], id, h, now, ARGV[4])
      out[#out + 1] = id
      out[#out + 1] = v
    end
  end
end
return {first_score(KEYS[1]), out}
