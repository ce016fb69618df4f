// The fleet's nonce book on Redis (docs/transactions.md, "Across processes"): workers in several
// processes sending from one account take distinct nonces from one book, atomically. The script
// and its contract (model: src/tx/fleet_nonce.rs; tested on a real redis-server in
// js-tests/fleet-nonces.test.mjs); fleet-store.js attaches it for the engine (src/tx/engine_fleet.rs).
//
// The rule it keeps is the local book's (src/tx/nonce.rs): a nonce whose bytes may have reached
// a node is never handed out again. Across processes that needs one more step: a worker marks its
// nonce `live` (where the journal will hold its signed bytes) *before* it broadcasts, and the
// script refuses `live` for a reservation that lapsed. So a reservation whose worker died before
// `live` was never broadcast, and only such a one is recycled when its hold runs out.
//
//   allocate(member, hold) ─► the lowest hole, else next (next + 1): reserved by member until now + hold
//                             ('init' while the book has no next: resync first)
//   live(member, n)        ─► reserved by member, hold not run out ─► live (never recycled)
//                             else 'lost' (do not broadcast: allocate again)
//   release(member, n)     ─► reserved by member ─► a hole, handed out first ('live' for a live
//                             one, 'lost' for one not reserved by member)
//   abandon(member, n)     ─► live (no node has it, every node refuses it) ─► a hole
//   settle(member, n)      ─► forgotten (mined, or replaced by another sender)
//   resync(member, p)      ─► refused ('busy', ms) while any reservation is unbroadcast and held;
//                             else next = max(next, p), holes below p dropped (someone else sent)
//   a reservation whose hold ran out ─► a hole (swept at every call)
//
// A member id names one reservation (one send), never a process: a send whose hold lapsed must
// not match a later reservation of the same nonce by its own process.
// KEYS[1]: the book (a hash: v, next), KEYS[2]: its nonces out (a hash: nonce -> 'r|member|until'
// or 'l|member'), KEYS[3]: its holes (a sorted set by nonce); all in one hash slot. ARGV: op,
// member, a number (the nonce, the pending count, or for `allocate` the hold in ms). Server time.
// Replies are arrays of strings: { 'ok', n } and the refusals above; a malformed call is an
// error reply. A book of another layout is never reset ('layout'): its reservations may be live.
export const NONCE_LAYOUT = '1';

export const NONCE_SCRIPT = `
local op, member, arg = ARGV[1], ARGV[2], tonumber(ARGV[3])
if not member or member == '' or string.find(member, '|', 1, true) or not arg or arg < 0 or arg ~= math.floor(arg) or arg > 9007199254740991 then
  return redis.error_reply('bad nonce call')
end
local v = redis.call('HGET', KEYS[1], 'v')
if v and v ~= '${NONCE_LAYOUT}' then return { 'layout', v } end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function text(x) return string.format('%d', x) end
local function parse(entry)
  local kind, who, untilms = string.match(entry, '^(%a)|([^|]+)|?(%d*)$')
  return kind, who, tonumber(untilms)
end
-- Reservations whose hold ran out were never marked live, so never broadcast: holes again.
local out = redis.call('HGETALL', KEYS[2])
local held_until = nil
for i = 1, #out, 2 do
  local kind, _, untilms = parse(out[i + 1])
  if kind == 'r' then
    if untilms <= now then
      redis.call('HDEL', KEYS[2], out[i])
      redis.call('ZADD', KEYS[3], tonumber(out[i]), out[i])
    elseif not held_until or untilms < held_until then
      held_until = untilms
    end
  end
end
local function touch()
  redis.call('HSET', KEYS[1], 'v', '${NONCE_LAYOUT}')
  for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, 86400000) end
end
local next = tonumber(redis.call('HGET', KEYS[1], 'next'))
if op == 'allocate' then
  if not next then return { 'init' } end
  local n
  local lowest = redis.call('ZPOPMIN', KEYS[3])
  if lowest[1] then
    n = tonumber(lowest[1])
  else
    n = next
    redis.call('HSET', KEYS[1], 'next', text(next + 1))
  end
  redis.call('HSET', KEYS[2], text(n), 'r|' .. member .. '|' .. text(now + arg))
  touch()
  return { 'ok', text(n) }
end
local entry = redis.call('HGET', KEYS[2], text(arg))
local kind, who = nil, nil
if entry then kind, who = parse(entry) end
if op == 'live' then
  if kind == 'r' and who == member then
    redis.call('HSET', KEYS[2], text(arg), 'l|' .. member)
    touch()
    return { 'ok', text(arg) }
  end
  if kind == 'l' and who == member then return { 'ok', text(arg) } end
  return { 'lost', text(arg) }
elseif op == 'release' then
  if kind == 'l' then return { 'live', text(arg) } end
  if kind == 'r' and who == member then
    redis.call('HDEL', KEYS[2], text(arg))
    redis.call('ZADD', KEYS[3], arg, text(arg))
    touch()
    return { 'ok', text(arg) }
  end
  return { 'lost', text(arg) }
elseif op == 'abandon' then
  if kind == 'l' then
    redis.call('HDEL', KEYS[2], text(arg))
    redis.call('ZADD', KEYS[3], arg, text(arg))
    touch()
  end
  return { 'ok', text(arg) }
elseif op == 'settle' then
  redis.call('HDEL', KEYS[2], text(arg))
  redis.call('ZREM', KEYS[3], text(arg))
  touch()
  return { 'ok', text(arg) }
elseif op == 'resync' then
  if held_until then return { 'busy', text(held_until - now) } end
  local to = math.max(next or arg, arg)
  redis.call('HSET', KEYS[1], 'next', text(to))
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. text(arg))
  touch()
  return { 'ok', text(to) }
end
return redis.error_reply('bad nonce call')`;

/** The three keys of one account's book under `prefix` (`account`: a hash of chain and address, never a secret). */
export function nonceKeys(prefix, account) {
  const book = `${prefix}n:{${account}}`;
  return [book, `${book}:out`, `${book}:holes`];
}
