-- Helpers shared by every script (prepended by scripts.go).
--
-- Times are microseconds since the epoch from Redis TIME, never the
-- caller's clock. They exceed 2^31, so they are formatted with num(): Lua
-- would print them in exponent notation and lose digits.
--
-- A record is a string of netstring-like fields "<len>:<bytes>". The first
-- HEAD fields are the ones scripts change; the rest (ttl, agent,
-- requested_by, tool, teams, codec, payload) is kept as an opaque tail.

local ST, CREATED, EXPIRES, DECIDED, NEED, APPROVALS, DECISION = 2, 3, 4, 5, 6, 7, 8
local HEAD = 8

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function num(n)
  return string.format('%.0f', n)
end

-- dec splits up to n fields (all when n is nil) and returns them with the
-- undecoded rest of v.
local function dec(v, n)
  local f, p, len = {}, 1, #v
  while p <= len and (n == nil or #f < n) do
    local c = string.find(v, ':', p, true)
    local l = tonumber(string.sub(v, p, c - 1))
    f[#f + 1] = string.sub(v, c + 1, c + l)
    p = c + l + 1
  end
  return f, string.sub(v, p)
end

local function enc(f)
  local t = {}
  for i = 1, #f do
    t[i] = #f[i] .. ':' .. f[i]
  end
  return table.concat(t)
end

-- settle_head moves a decoded head to a final state with a decision.
local function settle_head(h, state, decision, now)
  h[ST] = state
  h[DECIDED] = num(now)
  h[DECISION] = decision
end

-- expire_head moves a decoded head of a due pending request to expired.
local function expire_head(h, now)
  h[ST] = 'expired'
  h[DECIDED] = num(now)
end

-- pending_head reads the record at key for a transition of a pending
-- request. It returns a reply when there is nothing to transition:
-- {'nf'} (no record, or a held one), {'settled', record}, or
-- {'due', record} after expiring a due request in place (it stays in the
-- expiry index for ClaimExpired); else nil, the decoded head, the rest,
-- now and the record.
local function pending_head(key)
  local v = redis.call('GET', key)
  if not v then
    return {'nf'}
  end
  local h, rest = dec(v, HEAD)
  if h[ST] == 'creating' then
    return {'nf'}
  end
  if h[ST] ~= 'pending' then
    return {'settled', v}
  end
  local now = now_us()
  if now >= tonumber(h[EXPIRES]) then
    expire_head(h, now)
    v = enc(h) .. rest
    redis.call('SET', key, v)
    return {'due', v}
  end
  return nil, h, rest, now, v
end

-- first_score returns the lowest score of the sorted set key (the earliest
-- time of an expiry index, a due shard or an escalation set), or '' when
-- it is empty.
local function first_score(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #first > 0 then
    return first[2]
  end
  return ''
end

-- list_open returns {id, record, ...} for the ids whose record is pending
-- and not yet due at now.
local function list_open(prefix, ids, now)
  local out = {}
  for _, id in ipairs(ids) do
    local v = redis.call('GET', prefix .. id)
    if v then
      local h = dec(v, HEAD)
      if h[ST] == 'pending' and tonumber(h[EXPIRES]) > now then
        out[#out + 1] = id
        out[#out + 1] = v
      end
    end
  end
  return out
end

-- The outbox (docs/STATE.md "Outbox"): a transition with effects outside
-- Redis records them in the session's outbox hash, in the same script:
-- field = request id, value = '<lease end, µs>|<mark>'. The mark names
-- the transition (state, decision time, number of approvals), so that the
-- acknowledgement of an older transition never removes a newer one's
-- entry. Until the lease ends only the caller of the transition carries
-- the effects out; then any replica may claim them.
local function ob_mark(h)
  return h[ST] .. ':' .. h[DECIDED] .. ':' .. #dec(h[APPROVALS])
end

local function ob_put(key, id, h, now, lease)
  redis.call('HSET', key, id, num(now + tonumber(lease)) .. '|' .. ob_mark(h))
end

-- gone records the ids of removed grant entries (revoked or expired) in
-- the set key for ttl ms, so that grant_add never stores them again (an
-- outbox retry of the approval that made one must not undo its removal).
-- Entries without the 'g1 ' prefix (legacy) have no id and are skipped.
local function gone(key, entries, ttl)
  local n = 0
  for _, e in ipairs(entries) do
    local id = string.match(e, '^g1 (%S+) ')
    if id then
      redis.call('SADD', key, id)
      n = n + 1
    end
  end
  if n > 0 then
    redis.call('PEXPIRE', key, ttl)
  end
end

-- The stop signal (docs/STATE.md "Keys"): '<reason>' when it names no
-- rejection (a stop written before stops kept them), else
-- '<reason>\0<ids>', the ids of the hard rejections behind it as fields,
-- oldest first, at most MAX_STOP_IDS (session.MaxStopRejections; the
-- conformance suite checks both stores keep the same number).
local MAX_STOP_IDS = 8

local function stop_dec(v)
  local z = string.find(v, '\0', 1, true)
  if not z then
    return v, {}
  end
  return string.sub(v, 1, z - 1), dec(string.sub(v, z + 1))
end

-- stop_add sets the stop signal at key to reason with ids, or adds ids to
-- the one in force (which keeps its reason), keeping the newest
-- MAX_STOP_IDS.
local function stop_add(key, reason, ids)
  local v = redis.call('GET', key)
  local have = {}
  if v then
    reason, have = stop_dec(v)
  end
  local known = {}
  for _, id in ipairs(have) do
    known[id] = true
  end
  for _, id in ipairs(ids) do
    if not known[id] then
      known[id] = true
      have[#have + 1] = id
    end
  end
  while #have > MAX_STOP_IDS do
    table.remove(have, 1)
  end
  if #have == 0 then
    redis.call('SET', key, reason)
  else
    redis.call('SET', key, reason .. '\0' .. enc(have))
  end
end

-- The grant index (docs/STATE.md "Grants"): the grants of a session or an
-- agent are one hash, field = bucket '<len(tool)>:<tool><program>' →
-- the bucket's entries (fields, see enc), and '#<id>' → the bucket of the
-- grant with that id. The program is the literal first word all of a
-- grant's patterns begin with, '' (the tool's own bucket) otherwise;
-- Go computes it for new grants (session.GrantProgram), g_program only
-- for the entries it migrates from the old single-string list.

-- g_program is session.GrantProgram of a grant's patterns.
local function g_program(patterns)
  if type(patterns) ~= 'table' or #patterns == 0 then
    return ''
  end
  local w
  for i, p in ipairs(patterns) do
    if type(p) ~= 'string' then
      return '' -- foreign data (a null): the tool's own bucket
    end
    local f = string.match(p, '^([^ ]*)')
    if f == '' or string.find(f, '[%*%?%[\\]') then
      return ''
    end
    if i == 1 then
      w = f
    elseif f ~= w then
      return ''
    end
  end
  return w
end

-- g_bucket_of returns the bucket and id (nil for a legacy entry) of an
-- entry of the old list: a 'g1' entry by its tool and patterns, a legacy
-- one (session: the tool; agent: '<len>:<tool><pattern>') in its tool's
-- own bucket.
local function g_bucket_of(e, session_list)
  local id, json = string.match(e, '^g1 (%S+) %d+ %d+ (.*)$')
  local tool, prog = nil, ''
  if json then
    local ok, g = pcall(cjson.decode, json)
    if ok and type(g) == 'table' and type(g.tool) == 'string' then
      tool, prog = g.tool, g_program(g.patterns)
    end
  elseif session_list then
    tool = e
  else
    local c = string.find(e, ':', 1, true)
    local n = c and tonumber(string.sub(e, 1, c - 1))
    if n then
      tool = string.sub(e, c + 1, c + n)
    end
  end
  -- An entry nothing can read stays where the listing finds it (and
  -- reports it unreadable), as it did in the old list.
  tool = tool or ''
  return #tool .. ':' .. tool .. prog, id
end

-- g_put stores the entries of bucket b of the index idx (the field goes
-- with its last entry).
local function g_put(idx, b, entries)
  if #entries == 0 then
    redis.call('HDEL', idx, b)
  else
    redis.call('HSET', idx, b, enc(entries))
  end
end

-- G_MOVED is what the old list's key holds once its owner's grants are in
-- the index (docs/STATE.md "Upgrading to the grant index"): not a list of
-- fields (no ':'), so a broker of the old layout that reads it fails —
-- its Lookup closed, its revoke, add and expiry with an error — instead
-- of finding no grant there and answering "not found" for a grant that
-- lives on in the index. It lasts G_MOVED_MS, longer than any rolling
-- upgrade, and the index's readers take it for an empty list.
local G_MOVED = '!grants moved to the grant index; upgrade every broker'
local G_MOVED_MS = 86400000

-- g_migrate moves the grant list old (one string of entries, the layout
-- before the index) into the index idx, each entry to its bucket, and
-- leaves G_MOVED in its place; with mark, it leaves G_MOVED also where
-- there was no list (a grant is about to be stored in the index). An
-- entry whose id the index holds already is dropped, a legacy one already
-- in its bucket too. The index keeps the longer lifetime of the two keys
-- (none if either has none).
local function g_migrate(old, idx, session_list, mark)
  local v = redis.call('GET', old)
  if not v or v == G_MOVED then
    if mark then
      redis.call('SET', old, G_MOVED, 'PX', G_MOVED_MS)
    end
    return
  end
  local ttl, ittl = redis.call('PTTL', old), redis.call('PTTL', idx)
  local had = ittl ~= -2
  local add, order = {}, {}
  for _, e in ipairs(dec(v)) do
    local b, id = g_bucket_of(e, session_list)
    if not id or redis.call('HSETNX', idx, '#' .. id, b) == 1 then
      if not add[b] then
        add[b] = dec(redis.call('HGET', idx, b) or '')
        order[#order + 1] = b
      end
      local dup = false
      if not id then
        for _, x in ipairs(add[b]) do
          dup = dup or x == e
        end
      end
      if not dup then
        add[b][#add[b] + 1] = e
      end
    end
  end
  for _, b in ipairs(order) do
    g_put(idx, b, add[b])
  end
  redis.call('SET', old, G_MOVED, 'PX', G_MOVED_MS)
  if ttl == -1 or (had and ittl == -1) then
    redis.call('PERSIST', idx)
  elseif ttl > ittl then
    redis.call('PEXPIRE', idx, ttl)
  end
end

-- g_fields returns the bucket fields of an HGETALL reply of an index
-- with their entries: {field, entries, …}.
local function g_fields(all)
  local out = {}
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 1) ~= '#' then
      out[#out + 1] = all[i]
      out[#out + 1] = dec(all[i + 1])
    end
  end
  return out
end
