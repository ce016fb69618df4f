// The lease script: the fleet bucket of policy/fleet_bucket.rs as one atomic Redis call
// (docs/coordination.md, "Redis"), sent by redis-store.js through redis-script.js (by digest).

const LAYOUT = '2'; // the bucket hash's layout: another version's is started afresh
const FAIRNESS_TAU_MS = 1000; // policy::fleet_bucket::FAIRNESS_TAU: over how long a member's grants count
const RATE_TAU_S = 10; // policy::fleet_bucket::RATE_TAU: over how long the fleet's rate is counted
const REPORT_PRESENCE_MS = 2000; // policy::fleet_bucket::REPORT_PRESENCE: a reporting member still counts
const SLOT_MS = 20; // policy::fleet_bucket::window::SLOT_MS: the grain of the last second's spend
const SERVED_ALIKE = 1.25; // policy::fleet_bucket::SERVED_ALIKE: granted alike, the oldest read decides

// The fleet bucket of policy/fleet_bucket.rs (the contract: docs/coordination.md; exported for
// js-tests/fleet-script.test.mjs, not by the package). KEYS[1]: the
// group's bucket (a hash: tokens, at, spent, when it was born, everything held, each member's hold as 'h:'..id, and
// each short member's claim, its end and since when its oldest read waited as 'c:'..id, 'u:'..id, 'o:'..id, and what each was granted lately
// and when as 's:'..id, 'w:'..id); KEYS[2]: when each member's hold
// ends; KEYS[3]: the short members in the order they queued (by a counter: two asks in one
// millisecond keep their order) (sorted sets, all in the bucket's hash slot). ARGV: want (CU),
// rate (CU/s; 0 = plan unknown: grant all and only count), burst (CU), what the asker still
// holds (CU), how long a grant stays spendable (ms), the asker's largest charge (CU), the asker's
// id, what it gives back of its hold (CU; back into the tokens, at most its hold; absent: 0),
// what it needs now (CU/s, kept as 'd:'..id while it is a member; absent: unsaid), what it spent alone
// in the last second (CU: taken from the tokens, even below zero; absent: none), the most the
// fleet may send in one second (CU, a plan kept per second: what was spent in the last second, as
// learned from each member's hold and what it still holds, kept in 'win' by slot, plus everything
// held stays within it; absent or 0: none), and what was spent alone by tenth of a second of
// age (ten numbers, comma-separated, youngest first; counted where each fell; may be empty), and how
// long the asker's oldest read has waited (ms; absent or -1: unsaid, kept as 'o:'..id with its claim, as
// since when on the server's clock), and what its reads waiting for the plan cost (CU; absent:
// unsaid, kept as 'l:'..id while it is a member). Server time, so machines' clocks never matter. Returns strings (Redis would truncate Lua
// numbers): granted, ms until the rest could be (a short member queues: the refill goes first
// to the short members granted alike lately whose oldest read has waited longer, else to those
// granted less lately), the fleet's rate (CU/s, decayed over 10 s), the most one member may
// hold (0: no bound), what the other members need (the sum of their 'd:'; -1 when one said
// none: an older version), 1 when the window was kept (the asker may ask its whole plan as rate),
// and what the other members' lines cost (the sum of their 'l:'; -1 when one said none).
export const LEASE_SCRIPT = `
local want, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local held, hold, least, member = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local released = tonumber(ARGV[8] or '0')
local demand = ARGV[9] and tonumber(ARGV[9])
if demand and not (demand >= 0 and demand < math.huge) then demand = nil end -- unsaid, as an older member
local alone = tonumber(ARGV[10] or '0')
if not (alone and alone >= 0 and alone < math.huge) then alone = 0 end -- what makes no sense is nothing
local window = tonumber(ARGV[11] or '0')
if not (window and window > 0 and window < math.huge) then window = 0 end
local ages = {} -- what was spent alone by tenth of a second of age (ARGV[12]; absent: unsaid)
for a in string.gmatch(ARGV[12] or '', '[^,]+') do
  local n = tonumber(a)
  ages[#ages + 1] = (n and n >= 0 and n < math.huge) and n or 0
end
if #ages ~= 10 then ages = {} end
local waited = tonumber(ARGV[13] or '')
if not (waited and waited >= 0 and waited < math.huge) then waited = nil end -- unsaid, as an older member
local line = tonumber(ARGV[14] or '')
if not (line and line >= 0 and line < math.huge) then line = nil end -- unsaid, as an older member
if not (want and rate and burst and held and hold and least) or want < 0 or rate < 0 or burst < 0
  or held < 0 or hold < 0 or least < 0 or not member or member == '' or not released or released < 0 then
  return redis.error_reply('bad lease ask')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local since = waited and now - waited -- since when the asker's oldest read has waited
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'spent', 'v', 'held', 'born', 'win')
local tokens, at, spent, total = tonumber(s[1]), tonumber(s[2]) or now, tonumber(s[3]) or 0, tonumber(s[5]) or 0
local born = tonumber(s[6]) or (s[2] and now - 60000 or now) -- a bucket an older script made: long born
local win = {} -- the last second's spend: { slot, CU }, oldest first (policy/fleet_bucket/window.rs)
if s[4] ~= '${LAYOUT}' then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  tokens, spent, total, born = nil, 0, 0, now
elseif s[7] then
  for slot, cu in string.gmatch(s[7], '(%d+):([^,]+)') do win[#win + 1] = { tonumber(slot), tonumber(cu) } end
end
local function spend(at_ms, cu)
  if not (cu and cu > 0 and cu < math.huge) then return end
  local slot = math.floor(at_ms / ${SLOT_MS})
  local i = #win
  while i >= 1 and win[i][1] > slot do i = i - 1 end
  if i >= 1 and win[i][1] == slot then win[i][2] = win[i][2] + cu else table.insert(win, i + 1, { slot, cu }) end
end
local function recent() -- what counts now (a spend counts for a second after its slot); older slots dropped
  local first, kept, sum = math.floor(now / ${SLOT_MS}) - ${1000 / SLOT_MS}, {}, 0
  for _, e in ipairs(win) do if e[1] >= first then kept[#kept + 1] = e sum = sum + e[2] end end
  win = kept
  return sum
end
local function frees_in(cu) -- ms until cu of what counts has left the window
  if not (cu > 0) then return 0 end
  local freed, last = 0, 0
  for _, e in ipairs(win) do
    last = (e[1] + ${1000 / SLOT_MS + 1}) * ${SLOT_MS} - now
    freed = freed + e[2]
    if freed >= cu then break end
  end
  return math.max(0, math.ceil(last))
end
local function forget(id)
  local h = tonumber(redis.call('HGET', KEYS[1], 'h:' .. id)) or 0
  total = total - h
  redis.call('HDEL', KEYS[1], 'h:' .. id, 's:' .. id, 'w:' .. id, 'd:' .. id, 'l:' .. id)
  return h
end
local function decayed(s, w) -- what was granted lately ('s:'), as of when ('w:'), decayed to now
  return (tonumber(s) or 0) * math.exp(-math.max(0, now - (tonumber(w) or now)) / ${FAIRNESS_TAU_MS})
end
local function served(id)
  local f = redis.call('HMGET', KEYS[1], 's:' .. id, 'w:' .. id)
  return decayed(f[1], f[2])
end
-- A hold that ended unasked may have been spent to its end: counted so.
local ended = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES')
for i = 1, #ended, 2 do spend(tonumber(ended[i + 1]), forget(ended[i])) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local mine = served(member)
if redis.call('ZSCORE', KEYS[2], member) then
  local its = tonumber(redis.call('HGET', KEYS[1], 'h:' .. member)) or 0
  released = math.min(released, its)
  forget(member)
  -- What it spent since its last ask: its hold, less what it holds and gives back.
  spend(now, its - math.max(0, held) - released)
else
  released = 0
end
redis.call('ZREM', KEYS[2], member)
local others = math.max(0, total)
-- What the other members need, and what their lines cost, each while every one said its own.
local present = redis.call('ZRANGE', KEYS[2], 0, -1)
local function sum(prefix)
  if #present == 0 then return 0 end
  local fields, total = {}, 0
  for i, id in ipairs(present) do fields[i] = prefix .. id end
  for _, d in ipairs(redis.call('HMGET', KEYS[1], unpack(fields))) do
    local n = d and tonumber(d)
    if not n then return -1 end -- unsaid (an older member), or not a number: unknown
    total = total + n
  end
  return total
end
local needs, lines = sum('d:'), sum('l:')
if demand then redis.call('HSET', KEYS[1], 'd:' .. member, demand) else redis.call('HDEL', KEYS[1], 'd:' .. member) end
if line then redis.call('HSET', KEYS[1], 'l:' .. member, line) else redis.call('HDEL', KEYS[1], 'l:' .. member) end
local dt = math.max(0, now - at)
local granted, short, share = want, 0, 0
if hold == 0 or rate <= 0 then alone = 0 end -- a report is all spent alone; an unknown plan only counts
if hold == 0 then
  -- A report of what a member spent alone (policy::lease, its store too slow): counted in full,
  -- taken from the tokens even below zero; nothing held.
  tokens = math.min((tokens or burst) + dt * rate / 1000, math.max(0, burst - others)) - want
  spend(now, want)
  share = burst / (redis.call('ZCARD', KEYS[2]) + 1)
  -- Still a member, holding nothing, for REPORT_PRESENCE_MS: each one's share counts it.
  redis.call('HSET', KEYS[1], 'h:' .. member, 0, 's:' .. member, mine + want, 'w:' .. member, now)
  redis.call('ZADD', KEYS[2], now + ${REPORT_PRESENCE_MS}, member)
  total = others
elseif rate > 0 then
  local cap = math.max(0, math.max(burst, least) - others - held)
  local uncapped = (tokens or burst) + dt * rate / 1000 + released
  -- What the asker spent alone in the last second is still in the provider's window. With a
  -- window, it counts there, where it fell (by age, when told): taken from the tokens as well, a
  -- fleet rejoining a restarted Redis stood still for up to a second. Without one, it is taken from the tokens whatever they are (even below zero), so a bucket
  -- starting full does not pay its burst on top.
  local told = 0
  if window > 0 then
    for i, cu in ipairs(ages) do spend(now - (i - 1) * 100, cu) told = told + cu end
    spend(now, math.max(0, alone - told))
    tokens = math.min(cap, uncapped)
  else
    spend(now, alone)
    tokens = math.min(cap, uncapped) - alone
  end
  -- A plan kept per second: room within the window too.
  local within = math.huge
  if window > 0 then within = window - recent() - others - held end
  local avail = math.min(tokens, within)
  share = burst / (redis.call('ZCARD', KEYS[2]) + 1)
  local target = math.min(want, math.max(0, math.max(share, least) - held))
  local ahead, queued = 0, false
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    -- One read of what the queue needs of each member: its claim's end, amount and since, its grants lately.
    local f = redis.call('HMGET', KEYS[1], 'u:' .. id, 'c:' .. id, 'o:' .. id, 's:' .. id, 'w:' .. id)
    if (tonumber(f[1]) or 0) <= now then
      redis.call('ZREM', KEYS[3], id)
      redis.call('HDEL', KEYS[1], 'c:' .. id, 'u:' .. id, 'o:' .. id)
    elseif id == member then
      queued = true
    else
      -- One line for the fleet: of two granted alike lately (SERVED_ALIKE) that both said, the
      -- one whose oldest read has waited longer first; else the one granted less lately (of two
      -- alike, the one queued first).
      local theirs, theirs_since = decayed(f[4], f[5]), tonumber(f[3])
      local first = theirs < mine or (theirs == mine and not queued)
      if since and theirs_since and theirs_since ~= since and theirs <= mine * ${SERVED_ALIKE} and mine <= theirs * ${SERVED_ALIKE} then
        first = theirs_since < since
      end
      if first then ahead = ahead + (tonumber(f[2]) or 0) end
    end
  end
  -- A full bucket waits for nobody (the window's room is no refill that would be lost: it waits for the queue).
  if uncapped >= cap and tokens <= within and avail >= target and target > 0 then ahead = 0 end
  local room = avail - ahead
  if room >= target or held + room >= least then granted = math.max(0, math.min(target, room)) else granted = 0 end
  tokens = tokens - granted
  local missing = target - granted
  if missing > 0 then
    short = math.ceil(math.max(0, ahead + missing - tokens) * 1000 / rate)
    if window > 0 then short = math.max(short, frees_in(ahead + missing - (within - granted))) end
    redis.call('HSET', KEYS[1], 'c:' .. member, missing, 'u:' .. member, now + short + 250)
    if since then redis.call('HSET', KEYS[1], 'o:' .. member, since) else redis.call('HDEL', KEYS[1], 'o:' .. member) end
    redis.call('ZADD', KEYS[3], 'NX', redis.call('HINCRBY', KEYS[1], 'seq', 1), member)
  elseif queued then
    redis.call('ZREM', KEYS[3], member)
    redis.call('HDEL', KEYS[1], 'c:' .. member, 'u:' .. member, 'o:' .. member)
  end
  redis.call('HSET', KEYS[1], 'h:' .. member, held + granted, 's:' .. member, mine + granted, 'w:' .. member, now)
  redis.call('ZADD', KEYS[2], now + hold, member)
  total = others + held + granted
else
  tokens, total = burst, others
end
spent = spent * math.exp(-dt / 10000) + granted + alone
recent()
local kept = {}
for i, e in ipairs(win) do kept[i] = e[1] .. ':' .. string.format('%.17g', e[2]) end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now, 'spent', spent, 'v', '${LAYOUT}', 'held', total, 'born', born,
  'win', table.concat(kept, ','))
redis.call('PEXPIRE', KEYS[1], 60000)
redis.call('PEXPIRE', KEYS[2], 60000)
redis.call('PEXPIRE', KEYS[3], 60000)
local function text(x) return string.format('%.17g', x) end
-- The fleet's rate: spent over the weight a rate kept since the bucket was born has (policy::fleet_bucket::fleet_rate).
local weight = math.max(1, ${RATE_TAU_S} * (1 - math.exp(-(now - born) / (${RATE_TAU_S} * 1000))))
return { text(granted), text(short), text(spent / weight), text(share), text(needs), (window > 0 and rate > 0) and '1' or '0', text(lines) }`;


// The script's ARGV for one ask (the contract above): the optional tail goes only as far as its last
// value said, so a short ask stays short.
export function leaseArguments(numbers, member, released, demand, alone, window, ages, waited, line) {
  const args = numbers.map(String).concat(member, String(released));
  const byAge = window > 0 && alone > 0 && ages && ages.length === 10 ? Array.from(ages, String).join(',') : '';
  const told = (x) => typeof x === 'number' && x >= 0 && Number.isFinite(x);
  const said = told(waited) || told(line);
  if (demand >= 0 || alone > 0 || window > 0 || said) args.push(String(demand));
  if (alone > 0 || window > 0 || said) args.push(String(alone));
  if (window > 0 || said) args.push(String(window));
  if (byAge || said) args.push(byAge);
  if (told(line)) args.push(told(waited) ? String(waited) : '-1', String(line));
  else if (said) args.push(String(waited));
  return args;
}
