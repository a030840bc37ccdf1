-- new_turn: clear the session's stop signal, unless a hard rejection of
-- the session is still owed to the outside world: its outbox entry is not
-- acknowledged, so the agent may not have heard of it. A turn that began
-- before the agent learned of a reject_hard must not end its stop (the
-- rejection would reach the agent after the turn, with nothing stopping
-- its next calls); the stop stays and the rejections are returned for the
-- caller to carry out first. A tracked turn (ARGV[2] '1': ARGV[3..] name
-- every hard rejection the agent heard of) clears the stop only when it
-- names every rejection behind it; otherwise it returns those it missed.
-- KEYS[1] stop signal, KEYS[2] outbox of the session
-- ARGV[1] record key prefix, ARGV[2] '1' tracked | '0', ARGV[3..] seen ids
-- → {'ok', 1 | 0 (whether a stop was set)}, {'owed', {id, record, ...}}
-- or {'unheard', {id, ...}}
local function hard_rejection(decision)
  local ok, d = pcall(cjson.decode, decision)
  return ok and type(d) == 'table' and d['reason_code'] == 'rejected' and d['reject_mode'] == 'reject_hard'
end

local owed = {}
local ob = redis.call('HGETALL', KEYS[2])
for i = 1, #ob, 2 do
  -- value '<lease end>|<mark>', the mark starting with the state
  if string.find(ob[i + 1], '|rejected:', 1, true) then
    local v = redis.call('GET', ARGV[1] .. ob[i])
    if v then
      local h = dec(v, HEAD)
      if h[ST] == 'rejected' and hard_rejection(h[DECISION]) then
        owed[#owed + 1] = ob[i]
        owed[#owed + 1] = v
      end
    end
  end
end
if #owed > 0 then
  return {'owed', owed}
end
local v = redis.call('GET', KEYS[1])
if not v then
  return {'ok', 0}
end
if ARGV[2] == '1' then
  local seen, unheard = {}, {}
  for i = 3, #ARGV do
    seen[ARGV[i]] = true
  end
  local _, ids = stop_dec(v)
  for _, id in ipairs(ids) do
    if not seen[id] then
      unheard[#unheard + 1] = id
    end
  end
  if #unheard > 0 then
    return {'unheard', unheard}
  end
end
return {'ok', redis.call('DEL', KEYS[1])}
