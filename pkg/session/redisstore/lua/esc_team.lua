-- esc_team: route an open request to one more team (an escalation step's
-- add_team): the team joins the record's teams field.
-- KEYS[1] record; ARGV[1] team
-- → {'ok'|'has'|'settled'|'due', record} or {'nf'}
local v = redis.call('GET', KEYS[1])
if not v then
  return {'nf'}
end
local f = dec(v)
if f[ST] == 'creating' then
  return {'nf'}
end
if f[ST] ~= 'pending' then
  return {'settled', v}
end
local now = now_us()
if now >= tonumber(f[EXPIRES]) then
  -- Due: expire it here, as decide does; the reaper reports it.
  local h, rest = dec(v, HEAD)
  h[ST] = 'expired'
  h[DECIDED] = num(now)
  v = enc(h) .. rest
  redis.call('SET', KEYS[1], v)
  return {'due', v}
end
local TEAMS = 13 -- the teams field (record.go: fTeams + 1)
local teams = dec(f[TEAMS])
for _, t in ipairs(teams) do
  if t == ARGV[1] then
    return {'has', v}
  end
end
teams[#teams + 1] = ARGV[1]
f[TEAMS] = enc(teams)
v = enc(f)
redis.call('SET', KEYS[1], v)
return {'ok', v}
