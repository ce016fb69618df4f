//! One request's attempts through the fetch transport, with the foreign
//! error (a wrapped provider's own) behind each endpoint's last failure:
//! reported as the `cause` of the error the caller gets.

use std::cell::RefCell;

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use super::fetch::{FetchCall, FetchTransport};
use crate::error::Failure;
use crate::policy::classify::{Observation, TransportFailure};
use crate::pool::Pipeline;
use crate::runtime::AttemptTarget;

/// The attempts of one request through the fetch transport, remembering
/// the foreign error behind each endpoint's last failure (a wrapped
/// provider's own error, kept as the `cause` of the error reported).
pub(super) struct Traced<'a> {
    pipeline: &'a Pipeline,
    transport: &'a FetchTransport,
    call: &'a FetchCall,
    foreign: RefCell<Vec<(usize, JsValue)>>,
}

impl<'a> Traced<'a> {
    /// The attempts of `call` through `transport`, none once `pipeline` is closed.
    pub(super) fn new(pipeline: &'a Pipeline, transport: &'a FetchTransport, call: &'a FetchCall) -> Self {
        Traced { pipeline, transport, call, foreign: RefCell::new(Vec::new()) }
    }

    /// One attempt; nothing is sent once the relayer is closed.
    pub(super) async fn attempt(&self, target: AttemptTarget) -> Observation<JsValue> {
        if self.pipeline.is_closed() {
            return Observation::Transport(TransportFailure::Aborted);
        }
        let (observation, error) = self.transport.send_traced(self.call, target).await;
        let mut foreign = self.foreign.borrow_mut();
        foreign.retain(|(e, _)| *e != target.endpoint);
        if let Some(error) = error {
            foreign.push((target.endpoint, error));
        }
        observation
    }

    /// The foreign error behind the failure's reported attempt, if any.
    pub(super) fn cause_for(&self, failure: &Failure<JsValue>) -> Option<JsValue> {
        let reported = failure.last_endpoint();
        self.foreign.borrow().iter().find(|(e, _)| Some(*e) == reported).map(|(_, error)| error.clone())
    }
}

/// A failure descriptor with the wrapped provider's own error attached
/// (the JS wrapper makes it the `cause` of the innermost error).
pub(super) fn with_cause(descriptor: JsValue, cause: Option<JsValue>) -> JsValue {
    if let Some(cause) = cause {
        let _ = Reflect::set(&descriptor, &"upstreamError".into(), &cause);
    }
    descriptor
}
