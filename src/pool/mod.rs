//! The request pipeline and the endpoint state it routes over.
//!
//! Layer order: cache → dedup (`request.rs`) → backpressure (bounded wait queue) →
//! retry (deadline, attempt limit, budget) → route (chain, method,
//! freshness, breaker, quota, concurrency, strategy) → timeout → transport.

pub mod batch;
pub mod cache;
pub mod dedup;
pub mod endpoint;
pub mod events;
pub mod notify;
pub mod outage;
pub mod pipeline;
pub mod request;
pub mod route_request;
pub mod router;
pub mod single;
pub mod strategy;

/// The pool's options live below the configuration that gathers them.
pub use crate::options;
pub use events::PipelineEvent;
pub use pipeline::{Call, Pipeline, Success, SuccessValue};
