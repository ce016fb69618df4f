//! The request pipeline and the endpoint state it routes over.
//!
//! Layer order (this issue builds the core; the rest plug in at the marked
//! seams): dedup → cache → backpressure → quota → **retry (deadline,
//! attempt limit, budget)** → **route (failover, cooldown)** → timeout →
//! transport.

pub mod events;
pub mod pipeline;
pub mod route;

pub use events::PipelineEvent;
pub use pipeline::{Pipeline, Success, SuccessValue};
