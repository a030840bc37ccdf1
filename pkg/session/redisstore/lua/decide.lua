-- decide: apply one vote with compare-and-set on pending.
-- KEYS[1] expiry index of the session, KEYS[2] record, KEYS[3] stop signal,
-- KEYS[4] outbox of the session
-- ARGV[1] request id, ARGV[2] approver, ARGV[3] '1' approve | '0' deny,
-- ARGV[4] decision (JSON), ARGV[5] retention (ms), ARGV[6] stop reason
-- ('' for none; a deny only): set in this same step, so that a reject_hard
-- without its stop signal cannot exist; the request id joins the stop's
-- rejections (an existing stop keeps its reason). ARGV[7] outbox lease (µs),
-- ARGV[8] the approvals-list entry of an approval: '<id> <scope>', or the
-- bare id of a vote without a scope (record.go); a re-vote is matched
-- on the id, the part before the first space.
-- An applied vote records its effects in the outbox.
-- A held request (creating) reads as not found. An approval in a stopped
-- session is refused: nothing of it is approved until a new turn.
-- → {'ok'|'settled'|'dup'|'due'|'stopped', record} or {'nf'}
local done, h, rest, now, v = pending_head(KEYS[2])
if done then
  return done
end
local ap = dec(h[APPROVALS])
for _, a in ipairs(ap) do
  if (string.match(a, '^[^ ]*')) == ARGV[2] then
    return {'dup', v}
  end
end
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then
  return {'stopped', v}
end
local final = false
if ARGV[3] == '0' then
  settle_head(h, 'rejected', ARGV[4], now)
  final = true
  if ARGV[6] ~= '' then
    stop_add(KEYS[3], ARGV[6], {ARGV[1]})
  end
else
  ap[#ap + 1] = ARGV[8]
  h[APPROVALS] = enc(ap)
  if #ap >= tonumber(h[NEED]) then
    settle_head(h, 'approved', ARGV[4], now)
    final = true
  end
end
v = enc(h) .. rest
if final then
  redis.call('SET', KEYS[2], v, 'PX', ARGV[5])
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[2], v)
end
ob_put(KEYS[4], ARGV[1], h, now, ARGV[7])
return {'ok', v}
