-- esc_claim: lease up to max due escalation steps of one session and hand
-- them out with their records. Members: 's<step>:<id>' a step to run,
-- 'w<step>|<watch µs>:<id>' a page step that paged, watching for its
-- request to settle, 'd<step>|<µs>:<id>' a step that ran, scored at the
-- request's expiry (when it is dropped). Reading the record's state here is the check that keeps steps of
-- settled requests from running: they are dropped in this same step.
-- KEYS[1] escalation steps of the session
-- ARGV[1] record key prefix, ARGV[2] max, ARGV[3] lease (µs),
-- ARGV[4] look-ahead bound on the due members read (max * 4)
-- → {earliest score left (µs) or '', {member, record, ...}}
local now = now_us()
local due = redis.call('ZRANGE', KEYS[1], '-inf', num(now), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[4]))
local out, n = {}, 0
local lease = num(now + tonumber(ARGV[3]))
for _, m in ipairs(due) do
  if n >= tonumber(ARGV[2]) then
    break
  end
  local c = string.find(m, ':', 1, true)
  local kind, id = string.sub(m, 1, 1), string.sub(m, c + 1)
  local v = nil
  if kind ~= 'd' then
    v = redis.call('GET', ARGV[1] .. id)
  end
  if kind == 'd' then
    -- A done step, kept for the audit until the request's expiry: now.
    redis.call('ZREM', KEYS[1], m)
  elseif not v then
    -- Gone (held until its expiry and dropped, or past its retention).
    redis.call('ZREM', KEYS[1], m)
  else
    local h = dec(v, EXPIRES)
    local open = h[ST] == 'pending' and now < tonumber(h[EXPIRES])
    if h[ST] == 'creating' then
      -- Not asked yet: look again after a lease.
      redis.call('ZADD', KEYS[1], lease, m)
    elseif kind == 's' then
      if open then
        redis.call('ZADD', KEYS[1], lease, m)
        out[#out + 1] = m
        out[#out + 1] = v
        n = n + 1
      else
        redis.call('ZREM', KEYS[1], m)
      end
    else
      local sep = string.find(m, '|', 1, true)
      if open then
        -- The watch period is kept in the member: w<step>|<µs>:<id>.
        redis.call('ZADD', KEYS[1], num(now + tonumber(string.sub(m, sep + 1, c - 1))), m)
      else
        redis.call('ZADD', KEYS[1], lease, m)
        out[#out + 1] = m
        out[#out + 1] = v
        n = n + 1
      end
    end
  end
end
return {first_score(KEYS[1]), out}
