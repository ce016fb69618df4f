//! What every step of one logical request needs and nothing changes
//! while it runs: the runtime, the call and its method-table entry, when it
//! started and must end, how one attempt is made and where events go.
//! One borrowed value instead of six arguments at every step.

use crate::pool::events::PipelineEvent;
use crate::pool::pipeline::Call;
use crate::rpc::methods::{method_info, MethodInfo};
use crate::time::Instant;

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
