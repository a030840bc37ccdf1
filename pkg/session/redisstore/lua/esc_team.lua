-- esc_team: route an open request to one more team (an escalation step's
-- add_team): the team joins the record's teams field.
-- KEYS[1] record; ARGV[1] team
-- → {'ok'|'has'|'settled'|'due', record} or {'nf'}
local done, _, _, _, v = pending_head(KEYS[1])
if done then
  return done
end
local f = dec(v)
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
