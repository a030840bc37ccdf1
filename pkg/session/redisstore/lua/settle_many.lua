-- settle_many: settle several requests of one session (Stop, CancelSession),
-- each with compare-and-set; due ones are expired and skipped.
-- KEYS[1] expiry index of the session, KEYS[2] outbox of the session
-- ARGV[1] record key prefix, ARGV[2] state, ARGV[3] retention (ms),
-- ARGV[4] outbox lease (µs), then pairs: request id, decision (JSON)
-- → {due count, {id, record, ...}} for the requests it settled
local now = now_us()
local out, due = {}, 0
for i = 5, #ARGV, 2 do
  local id = ARGV[i]
  local k = ARGV[1] .. id
  local v = redis.call('GET', k)
  if v then
    local h, rest = dec(v, HEAD)
    if h[ST] == 'pending' then
      if now >= tonumber(h[EXPIRES]) then
        expire_head(h, now)
        redis.call('SET', k, enc(h) .. rest)
        due = due + 1
      else
        settle_head(h, ARGV[2], ARGV[i + 1], now)
        v = enc(h) .. rest
        redis.call('SET', k, v, 'PX', ARGV[3])
        redis.call('ZREM', KEYS[1], id)
        ob_put(KEYS[2], id, h, now, ARGV[4])
        out[#out + 1] = id
        out[#out + 1] = v
      end
    end
  end
end
return {due, out}
