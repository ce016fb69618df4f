//! The response cache: per-method lifetimes decided by the method table
//! (immutable results long, `latest` briefly, never `pending` or
//! submissions), bounded in entries with the oldest evicted first.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use crate::time::Instant;

/// A bounded TTL cache keyed by the request's canonical text.
pub struct ResponseCache<P> {
    entries: HashMap<String, (P, Instant, u64)>,
    order: VecDeque<(String, u64)>,
    max_entries: usize,
    seq: u64,
    hits: u64,
}

impl<P: Clone> ResponseCache<P> {
    /// A cache of at most `max_entries` results.
    pub fn new(max_entries: usize) -> Self {
        ResponseCache {
            entries: HashMap::new(),
            order: VecDeque::new(),
            max_entries: max_entries.max(1),
            seq: 0,
            hits: 0,
        }
    }

    /// A fresh result for `key`, if any.
    pub fn get(&mut self, now: Instant, key: &str) -> Option<P> {
        match self.entries.get(key) {
            Some((value, expires, _)) if now < *expires => {
                self.hits += 1;
                Some(value.clone())
            }
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores `value` for `ttl`.
    pub fn put(&mut self, now: Instant, key: String, value: P, ttl: Duration) {
        self.seq += 1;
        self.order.push_back((key.clone(), self.seq));
        self.entries.insert(key, (value, now + ttl, self.seq));
        while self.entries.len() > self.max_entries {
            let Some((oldest, seq)) = self.order.pop_front() else { break };
            if self.entries.get(&oldest).is_some_and(|(_, _, s)| *s == seq) {
                self.entries.remove(&oldest);
            }
        }
        // Keep the order queue from growing with overwritten keys.
        if self.order.len() > self.max_entries * 4 {
            let entries = &self.entries;
            self.order.retain(|(k, s)| entries.get(k).is_some_and(|(_, _, cur)| cur == s));
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Results served from cache.
    pub fn hits(&self) -> u64 {
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::at;

    #[test]
    fn entries_expire_and_the_oldest_is_evicted() {
        let mut c = ResponseCache::new(2);
        c.put(at(0), "a".into(), 1, Duration::from_millis(100));
        assert_eq!(c.get(at(99), "a"), Some(1));
        assert_eq!(c.get(at(100), "a"), None);
        c.put(at(0), "b".into(), 2, Duration::from_secs(10));
        c.put(at(0), "c".into(), 3, Duration::from_secs(10));
        c.put(at(0), "d".into(), 4, Duration::from_secs(10));
        assert_eq!((c.get(at(1), "b"), c.get(at(1), "c"), c.get(at(1), "d")), (None, Some(3), Some(4)));
        assert_eq!(c.len(), 2);
        for i in 0..100 {
            c.put(at(0), "c".into(), i, Duration::from_secs(10));
        }
        assert_eq!(c.get(at(1), "c"), Some(99));
        assert!(c.order.len() <= 8);
    }

    #[test]
    fn the_order_queue_is_compacted_past_four_times_the_entries_and_keeps_the_live_ones() {
        let mut c = ResponseCache::new(2);
        assert!(c.is_empty());
        c.put(at(0), "d".into(), 0, Duration::from_secs(10));
        assert!(!c.is_empty());
        let mut longest = 0;
        for i in 0..20 {
            c.put(at(0), "c".into(), i, Duration::from_secs(10));
            longest = longest.max(c.order.len());
        }
        assert_eq!(longest, 8, "compacted only once past 2 × 4");
        c.put(at(0), "e".into(), 5, Duration::from_secs(10));
        assert_eq!(
            (c.get(at(1), "d"), c.get(at(1), "c"), c.get(at(1), "e")),
            (None, Some(19), Some(5)),
            "after compaction the oldest live entry is still the one evicted"
        );
    }
}
