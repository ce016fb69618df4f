//! One logical request in front of the pipeline: cache, then dedup, then
//! the pipeline — generic over the payload, so the order and its rules run
//! on the simulated runtime like the rest of the pool.
//!
//! ```text
//!   a lifetime for (method, block tag)?   (method table; never `pending`,
//!                                          never submissions; cache on)
//!     fresh entry for the key ──────────► its value (no upstream call)
//!   a read that may share (dedup on, read-only method, not `pending`)?
//!     the same key already running ─────► wait for its outcome; if its
//!                                          caller gave up without one,
//!                                          run it ourselves
//!     none ─────────────────────────────► lead: run, publish the outcome
//!                                          (unless our own caller aborted)
//!   otherwise (or `fresh`: the transaction layer) ► run
//!   run = pipeline; a non-empty result with a lifetime is cached;
//!         "already known" for a submission → the hash of the bytes sent
//! ```
//!
//! Cache before dedup: a fresh entry answers without joining anything,
//! and a leader caches its result before its followers wake.

use std::cell::RefCell;
use std::future::Future;

use super::cache::ResponseCache;
use super::dedup::{InFlight, Joined};
use super::pipeline::{Call, Pipeline, Success, SuccessValue};
use super::PipelineEvent;
use crate::error::Failure;
use crate::policy::classify::Observation;
use crate::rpc::methods::{cache_ttl, method_info, BlockTag};
use crate::rpc::raw_tx::hash_of_raw_hex;
use crate::runtime::{AttemptTarget, Payload, Runtime};

/// What a request's outcome is shared as between identical reads.
pub type Outcome<P> = Result<SuccessValue<P>, Failure<P>>;

/// One logical request as the front layer sees it.
#[derive(Clone, Copy)]
pub struct Read<'a> {
    /// The JSON-RPC method.
    pub method: &'a str,
    /// The identity of the call (method and params) for cache and dedup.
    pub key: &'a str,
    /// The block tag it reads at.
    pub tag: BlockTag,
    /// Straight to the pipeline, no cache and no sharing: the transaction
    /// layer needs answers fresh from a node.
    pub fresh: bool,
    /// The signed transaction this request broadcasts (`0x` hex), if it
    /// is a submission: a node that "already knows" it is answered with
    /// its hash, as a first broadcast would have been.
    pub sends: Option<&'a str>,
}

/// The cache and the table of shared in-flight reads of one relayer.
pub struct Front<P> {
    cache: RefCell<ResponseCache<P>>,
    in_flight: InFlight<Outcome<P>>,
}

impl<P: Payload + Clone> Front<P> {
    /// An empty front with a cache of at most `max_entries`.
    pub fn new(max_entries: usize) -> Self {
        Front { cache: RefCell::new(ResponseCache::new(max_entries)), in_flight: InFlight::default() }
    }

    /// Cache entries and hits (for stats).
    pub fn cache_stats(&self) -> (usize, u64) {
        let cache = self.cache.borrow();
        (cache.len(), cache.hits())
    }

    /// Reads sharing an upstream request right now.
    pub fn shared(&self) -> usize {
        self.in_flight.len()
    }

    /// Runs `read` through cache → dedup → `pipeline`. `attempt` performs
    /// one try, as for [`Pipeline::execute`]; `aborted` says whether the
    /// caller gave up (a leader that did publishes nothing: its followers
    /// run the request themselves).
    pub async fn request<R, F, Fut>(
        &self,
        pipeline: &Pipeline,
        runtime: &R,
        read: Read<'_>,
        attempt: F,
        aborted: &dyn Fn() -> bool,
        emit: &dyn Fn(PipelineEvent),
    ) -> Outcome<P>
    where
        R: Runtime,
        F: Fn(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>>,
    {
        let info = method_info(read.method);
        let options = &pipeline.config().pool;
        let ttl = cache_ttl(&info, read.tag, options.cache.latest_ttl, options.cache.immutable_ttl)
            .filter(|_| options.cache.enabled && !read.fresh);
        if ttl.is_some() {
            if let Some(hit) = self.cache.borrow_mut().get(runtime.now(), read.key) {
                return Ok(SuccessValue::Result(hit));
            }
        }
        let run = || async {
            let wants_latest = matches!(read.tag, BlockTag::Latest | BlockTag::Pending);
            let signed_chain = read.sends.and_then(crate::rpc::raw_tx::signed_chain_id);
            let call = Call { method: read.method, wants_latest, cost: None, signed_chain };
            // Boxed when a request gets here, not when it is made: a burst of
            // 100,000 calls made in one synchronous loop then holds 100,000
            // small futures until they first run, not 100,000 pipeline states
            // (a few KB each; wasm memory never shrinks), and calls refused
            // at once (overload) reuse the same memory.
            let execution = Box::pin(pipeline.execute(runtime, call, &attempt, emit));
            let outcome = execution.await.map(|s: Success<P>| match s.value {
                SuccessValue::AlreadyKnown => match read.sends.and_then(hash_of_raw_hex) {
                    Some(hash) => SuccessValue::Result(P::from_text(format!("{hash:#x}"))),
                    None => SuccessValue::AlreadyKnown,
                },
                value => value,
            });
            if let (Ok(SuccessValue::Result(value)), Some(ttl)) = (&outcome, ttl) {
                if !value.is_empty() {
                    self.cache.borrow_mut().put(runtime.now(), read.key.to_string(), value.clone(), ttl);
                }
            }
            outcome
        };
        if read.fresh || !(options.dedup && info.read_only && read.tag != BlockTag::Pending) {
            return run().await;
        }
        match self.in_flight.join(read.key) {
            Joined::Leader(guard) => {
                let outcome = run().await;
                if !aborted() {
                    guard.publish(&outcome);
                }
                outcome
            }
            Joined::Follower(wait) => match wait.await {
                Some(outcome) => outcome,
                None => run().await,
            },
        }
    }
}

#[cfg(test)]
mod tests;
