//! What every step of one logical request needs and nothing changes
//! while it runs: the runtime, the call and its method-table entry, when it
//! started and must end, how one attempt is made and where events go.
//! One borrowed value instead of six arguments at every step.

use crate::policy::classify::Observation;
use crate::pool::events::PipelineEvent;
use crate::pool::pipeline::Call;
use crate::rpc::methods::{method_info, MethodInfo};
use crate::runtime::AttemptTarget;
use crate::time::Instant;
use std::future::Future;
use std::pin::Pin;

/// One logical request's fixed facts (`R`: the runtime, `F`: its attempt function).
pub(crate) struct RequestContext<'c, R, F> {
    /// Clock, sleeps, randomness.
    pub runtime: &'c R,
    /// Performs one attempt against the target it is given.
    pub attempt: &'c F,
    /// What is asked.
    pub call: Call<'c>,
    /// The method table's entry for `call.method`.
    pub info: MethodInfo,
    /// When the request started (attempt records count from here).
    pub start: Instant,
    /// When it must have ended.
    pub deadline: Instant,
    /// Where the pipeline's events go.
    pub emit: &'c dyn Fn(PipelineEvent),
}

impl<'c, R, F> RequestContext<'c, R, F> {
    /// The context of `call`, started at `start`, ending `deadline`.
    pub fn new(
        runtime: &'c R,
        attempt: &'c F,
        call: Call<'c>,
        (start, deadline): (Instant, Instant),
        emit: &'c dyn Fn(PipelineEvent),
    ) -> Self {
        RequestContext { runtime, attempt, call, info: method_info(call.method), start, deadline, emit }
    }
}

/// One attempt's future, boxed, and the attempt function that makes it:
/// the pipeline's walk (`execute`, `poll_heads`, the hedge race, the chain
/// check) is compiled once per runtime and payload, not once per caller's
/// attempt closure. The wasm build has four callers (a read, a batch,
/// `executeRpcWithRetry`, the head poll), and each copy of the walk was
/// several KB of the module every page loads; a box per attempt costs
/// nothing beside an HTTP exchange.
pub(crate) type BoxedAttempt<'f, P> = Pin<Box<dyn Future<Output = Observation<P>> + 'f>>;

/// `attempt`, its futures boxed (see [`BoxedAttempt`]).
pub(crate) fn boxed_attempts<'f, P, F, Fut>(attempt: F) -> impl Fn(AttemptTarget) -> BoxedAttempt<'f, P>
where
    F: Fn(AttemptTarget) -> Fut,
    Fut: Future<Output = Observation<P>> + 'f,
{
    move |target| Box::pin(attempt(target))
}
