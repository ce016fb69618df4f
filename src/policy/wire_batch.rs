//! Auto-batching on the wire: concurrent attempts to one endpoint share an
//! HTTP request as a JSON-RPC batch, while every request keeps its own
//! pipeline (quota per item, classification per item, retries and
//! failover of only the item that failed). Only the transport's exchange
//! is shared; this is the per-endpoint decision of when.
//!
//! ```text
//!   offer(attempt) ── off, not batchable, refused, or fewer than
//!                     `gate` exchanges in flight (and no wait) ─────► Send (alone, now)
//!                  └─ otherwise ─► Queue; the queue at `max_size` ─► flush now
//!   an exchange ends (in flight − 1) ── a queue ─► flush: up to `limit` items, one exchange
//!   the first queued item's wait (`wait`, when set) ends ─► flush
//!   HTTP 413, or the whole batch "too large" ─► limit = half the batch; items again
//!   items answered "too large", or cut off (fewer replies than items) ─► limit = the items answered; those again
//!   one item left out of a full answer ─► that item's reply is missing (its pipeline retries it)
//!   a batch refused as a whole (a 200 that is no array; a 4xx but 401/403/408/429) ─► refused: alone from now on
//! ```
//!
//! The default (`wait` zero) is Nagle's rule for requests: an attempt goes
//! alone while fewer than `gate` exchanges are out to its endpoint, so a
//! lone request never waits; past that, attempts queue until an exchange
//! comes back and then go together. At one request in flight nothing
//! changes; at hundreds, `gate` HTTP requests carry them all. A `wait`
//! (viem's `batch.wait`) holds every batchable attempt up to that long to
//! gather more, at the cost of that latency when alone.
//!
//! Sends are never batchable (a batch is one unit on the wire: a lost
//! reply would leave every send in it outcome-unknown, and replay safety
//! wants each on its own), nor are the chain check, a wrapped provider's
//! calls (the provider batches by itself), nor calls a caller may abort
//! (aborting one must not cut the others' exchange).

use crate::text::contains;
use std::time::Duration;

/// Most items in any JSON-RPC batch (geth refuses more than 1,000).
pub const MAX_ITEMS: usize = 1000;

/// Most items in one auto-batch by default (nodes limit batches: geth to
/// 1,000 items, several providers to 100 or fewer; "too large" answers
/// teach the endpoint's own limit).
pub const DEFAULT_MAX_SIZE: usize = 100;

/// Exchanges in flight to one endpoint before attempts queue for a batch.
pub const DEFAULT_GATE: u32 = 4;

/// How attempts are batched on the wire (`batch` option).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WireBatchConfig {
    /// Most items in one batch.
    pub max_size: usize,
    /// How long a queued attempt waits to gather more (zero: only while
    /// `gate` exchanges are out).
    pub wait: Duration,
    /// Exchanges in flight to an endpoint before attempts queue.
    pub gate: u32,
}

impl Default for WireBatchConfig {
    fn default() -> Self {
        WireBatchConfig { max_size: DEFAULT_MAX_SIZE, wait: Duration::ZERO, gate: DEFAULT_GATE }
    }
}

/// What to do with an attempt offered to the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Send it alone now (it counts as an exchange in flight).
    Send,
    /// Queue it; `flush`: the queue is full, send it as a batch now.
    Queue {
        /// The queue reached the batch size: flush it now.
        flush: bool,
    },
}

/// One endpoint's wire: exchanges in flight, attempts queued, what it was
/// taught about batches.
#[derive(Clone, Debug)]
pub struct WireBatch {
    config: WireBatchConfig,
    in_flight: u32,
    queued: usize,
    /// Most items this endpoint takes in one batch (learned).
    limit: usize,
    /// The endpoint refused a batch as a whole: never again.
    refused: bool,
}

impl WireBatch {
    /// A wire with nothing in flight.
    pub fn new(config: WireBatchConfig) -> Self {
        let limit = config.max_size.max(1);
        WireBatch { config, in_flight: 0, queued: 0, limit, refused: false }
    }

    /// Where an attempt goes (`batchable`: the transport's rules above).
    pub fn offer(&mut self, batchable: bool) -> Offer {
        let alone = !batchable || self.refused || self.limit < 2;
        if alone || (self.config.wait.is_zero() && self.in_flight < self.config.gate && self.queued == 0) {
            self.in_flight += 1;
            return Offer::Send;
        }
        self.queued += 1;
        Offer::Queue { flush: self.queued >= self.limit }
    }

    /// How many queued items go now as one batch (zero: none), counted as
    /// an exchange in flight: after an exchange ended (`ended`), a full
    /// queue, or a queued item's wait.
    pub fn flush(&mut self) -> usize {
        let n = self.queued.min(self.limit);
        if n > 0 {
            self.queued -= n;
            self.in_flight += 1;
        }
        n
    }

    /// An exchange (alone or a batch) ended; returns how many queued items
    /// go next as one batch (see [`WireBatch::flush`]). With a wait set,
    /// the queue waits for its own timer unless it is full.
    pub fn ended(&mut self) -> usize {
        self.in_flight = self.in_flight.saturating_sub(1);
        if !self.config.wait.is_zero() && self.queued < self.limit {
            return 0;
        }
        self.flush()
    }

    /// Items put back in the queue (a batch too large, or refused): they
    /// go out again with the next flush.
    pub fn requeue(&mut self, n: usize) {
        self.queued += n;
    }

    /// Queued items that left the queue without being sent (their caller
    /// went away, or they go alone after a refusal).
    pub fn dequeued(&mut self, n: usize) {
        self.queued = self.queued.saturating_sub(n);
    }

    /// An exchange of `size` items was "too large": batches of at most
    /// half of it from now on.
    pub fn too_large(&mut self, size: usize) {
        self.limit = (size / 2).max(1).min(self.limit);
    }

    /// The endpoint refused a batch as a whole: attempts go alone from now on.
    pub fn refuse(&mut self) {
        self.refused = true;
    }

    /// Whether batches still go to this endpoint.
    pub fn batches(&self) -> bool {
        !self.refused && self.limit >= 2
    }

    /// Most items in one batch now.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Exchanges in flight now.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Attempts queued now.
    pub fn queued(&self) -> usize {
        self.queued
    }
}

/// How a batch was answered as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchAnswer {
    /// Too large, or refused: its items go again (with the next flush, in
    /// smaller batches or alone).
    Again,
    /// A reply per item: each item's own (see [`WireBatch::items_answered`]).
    PerItem,
    /// A status for the whole (429, 503, …): every item sees it, as alone.
    Every,
}

/// Times an item may go again. Each time lowers the endpoint's limit (a
/// batch is at most the limit), so ten bring any limit down to one
/// (alone); this only bounds it.
pub const MAX_AGAIN: u32 = 12;

impl WireBatch {
    /// How long a queued attempt waits to gather more before its queue
    /// goes (`None`: only until an exchange ends). The wire arms one timer
    /// when the first attempt joins an empty queue.
    pub fn wait(&self) -> Option<Duration> {
        (!self.config.wait.is_zero()).then_some(self.config.wait)
    }

    /// A batch of `size` came back with HTTP `status`; `array`: its body
    /// was a JSON array; `error`: the message of the one JSON-RPC error
    /// object that came instead, if so. HTTP 413, or an error saying "too
    /// large", halves the limit. Any other 200 that is not an array (an
    /// error, one object, not JSON) is a node that does not take batches:
    /// its items go alone, now and from now on (a node answering a batch
    /// with one object failed 3,121 of 5,000 reads as malformed).
    pub fn answered(&mut self, size: usize, status: u16, array: bool, error: Option<&str>) -> BatchAnswer {
        match status {
            413 => {
                self.too_large(size);
                BatchAnswer::Again
            }
            200 if array => BatchAnswer::PerItem,
            // A client error for the batch as a whole (a node or proxy that takes no arrays:
            // 400, 404, 405, 415, 422, 501), not one that would meet each item alone too (401,
            // 403: the key; 408, 429: time and rate): a new user's node answering 400 failed
            // 186 of 200 reads.
            400..=499 | 501 if !matches!(status, 401 | 403 | 408 | 429) => {
                if error.is_some_and(says_batch_too_large) {
                    self.too_large(size);
                } else {
                    self.refuse();
                }
                BatchAnswer::Again
            }
            200 => {
                if error.is_some_and(says_batch_too_large) {
                    self.too_large(size);
                } else {
                    self.refuse();
                }
                BatchAnswer::Again
            }
            _ => BatchAnswer::Every,
        }
    }

    /// A batch of `size` items answered with an array of `replies`
    /// entries; `items`: what it said of each item, and how many times that
    /// item already went again. Returns, per item, whether it goes again
    /// (otherwise its reply, or its absence, is its own).
    ///
    /// A node over its batch limit either truncates its answer (fewer
    /// replies than items) or answers the items past the limit with "batch
    /// too large": the items it did answer *are* its limit, so the limit
    /// becomes that count (halved only when fewer than two were answered).
    /// Halving every time, a node limited to 10 settled at 8 after three
    /// rounds of re-sends from 64. An item left out of a full answer (as
    /// many replies as items) is no limit: that reply alone is missing
    /// (`Reply::WrongId`, retried by its own pipeline); treated as a limit, one
    /// item a node always leaves out turned batching off for the node.
    /// Items go again at most [`MAX_AGAIN`] times.
    pub fn items_answered(&mut self, size: usize, replies: usize, items: &[(ItemReply, u32)]) -> Vec<bool> {
        let answered = items.iter().filter(|(reply, _)| *reply == ItemReply::Answered).count();
        let truncated = replies < size;
        let cut = items.iter().any(|(reply, _)| match reply {
            ItemReply::TooLarge => true,
            ItemReply::Missing => truncated,
            ItemReply::Answered => false,
        });
        if cut {
            let learned = if answered >= 2 { answered } else { size / 2 };
            self.limit = learned.max(1).min(self.limit);
        }
        items
            .iter()
            .map(|&(reply, times)| {
                let cut_off = reply == ItemReply::TooLarge || (reply == ItemReply::Missing && truncated);
                cut_off && times < MAX_AGAIN
            })
            .collect()
    }
}

/// What a batch's array of replies said of one item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemReply {
    /// Its own reply (a result, or an error of its own).
    Answered,
    /// An error saying the batch was too large.
    TooLarge,
    /// No reply with its id.
    Missing,
}

/// Whether a JSON-RPC error message (or an HTTP 413) says a batch was too
/// large: geth "batch too large", Erigon and others "batch limit … exceeded",
/// "too many requests in batch", and such.
pub fn says_batch_too_large(message: &str) -> bool {
    let m = &message.to_ascii_lowercase();
    contains(m, "batch")
        && (contains(m, "too large")
            || contains(m, "too big")
            || contains(m, "exceed")
            || contains(m, "limit")
            || contains(m, "too many")
            || contains(m, "maximum"))
}

#[cfg(test)]
mod tests;
