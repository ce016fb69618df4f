// The fleet's nonce book on Redis (docs/transactions.md, "Across processes"): workers in several
// processes sending from one account take distinct nonces from one book, atomically. The script
// and its contract (model: src/tx/fleet_nonce.rs; tested on a real redis-server in
// js-tests/fleet-nonces.test.mjs); redis-store.js attaches it for the engine (src/tx/engine_fleet.rs).
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
//
// The journal (model: src/tx/fleet_nonce/journal.rs) keeps, for each live nonce, the record that
// lets another relayer finish it (signed bytes, hashes, the transaction a speed-up re-signs;
// never a key) and the relayer (`owner`) that answers for it until its lease runs out:
//
//   live(member, n, record, owner, lease) ─► as live above, and the record journaled in the same step
//   write(owner, n, record, lease)   ─► the owner's entry: record replaced, lease renewed; else 'lost'
//   renew(owner, n, lease)           ─► the owner's entry: lease renewed; else 'lost'
//   orphans(owner, lease)            ─► every entry whose lease ran out, or owner's own (a reloaded
//                                      page keeps its name), now belongs to owner:
//                                      { 'orphans', n, record, n, record, … }
//   settle / abandon                 ─► the entry is gone
//
// KEYS[1]: the book (a hash: v, next), KEYS[2]: its nonces out (a hash: nonce -> 'r|member|until'
// or 'l|member'), KEYS[3]: its holes (a sorted set by nonce), KEYS[4]: its journal (a hash:
// nonce -> record, 'o:'nonce -> 'owner|until'); all in one hash slot. ARGV: op, member (the owner
// for journal ops), a number (the nonce, the pending count, or for `allocate` the hold in ms),
// then for journal ops the record, the owner and the lease in ms. Server time. Replies are
// arrays of strings: { 'ok', n } and the refusals above; a malformed call is an error reply. A
// book of another layout is never reset ('layout'): its reservations may be live.
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
local record, owner, lease = ARGV[4] or '', ARGV[5] or '', tonumber(ARGV[6] or '0') or 0
local function forget(n)
  if KEYS[4] then redis.call('HDEL', KEYS[4], text(n), 'o:' .. text(n)) end
end
local function owned(n)
  local o = KEYS[4] and redis.call('HGET', KEYS[4], 'o:' .. text(n))
  if not o then return false end
  local who = string.match(o, '^([^|]+)|')
  return who == member
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
  local journaled = record ~= '' and KEYS[4]
  if journaled and (owner == '' or string.find(owner, '|', 1, true) or lease <= 0) then
    return redis.error_reply('bad nonce call') -- before any write: a refused call changes nothing
  end
  if (kind == 'r' or kind == 'l') and who == member then
    redis.call('HSET', KEYS[2], text(arg), 'l|' .. member)
    if journaled then
      redis.call('HSET', KEYS[4], text(arg), record, 'o:' .. text(arg), owner .. '|' .. text(now + lease))
    end
    touch()
    return { 'ok', text(arg) }
  end
  return { 'lost', text(arg) }
elseif op == 'write' or op == 'renew' then
  if lease <= 0 or (op == 'write' and record == '') then return redis.error_reply('bad nonce call') end
  if not owned(arg) then return { 'lost', text(arg) } end
  if op == 'write' then redis.call('HSET', KEYS[4], text(arg), record) end
  redis.call('HSET', KEYS[4], 'o:' .. text(arg), member .. '|' .. text(now + lease))
  touch()
  return { 'ok', text(arg) }
elseif op == 'orphans' then
  if lease <= 0 or not KEYS[4] then return redis.error_reply('bad nonce call') end
  local reply = { 'orphans' }
  local entries = redis.call('HGETALL', KEYS[4])
  for i = 1, #entries, 2 do
    local n = string.match(entries[i], '^o:(%d+)$')
    local who, untilms = string.match(entries[i + 1], '^([^|]+)|(%d+)$')
    untilms = tonumber(untilms)
    if n and untilms and (untilms <= now or who == member) then
      local kept = redis.call('HGET', KEYS[4], n)
      if kept then
        redis.call('HSET', KEYS[4], entries[i], member .. '|' .. text(now + lease))
        table.insert(reply, n)
        table.insert(reply, kept)
      end
    end
  end
  if #reply > 1 then touch() end
  return reply
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
  forget(arg)
  if kind == 'l' then
    redis.call('HDEL', KEYS[2], text(arg))
    redis.call('ZADD', KEYS[3], arg, text(arg))
    touch()
  end
  return { 'ok', text(arg) }
elseif op == 'settle' then
  forget(arg)
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

/** The four keys of one account's book and journal under `prefix` (`account`: a hash of chain and address, never a secret). */
export function nonceKeys(prefix, account) {
  const book = `${prefix}n:{${account}}`;
  return [book, `${book}:out`, `${book}:holes`, `${book}:journal`];
}
