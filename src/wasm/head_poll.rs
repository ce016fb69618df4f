//! Head polling in the browser and Node: a read that wants `latest` and
//! finds a round due (the pipeline decides) spawns the round on the event
//! loop, so no read ever waits for it. Only glue: the schedule, the choice
//! of endpoints and what the heads mean live in the core.

use std::rc::Rc;

use super::core::Core;
use super::js_runtime::JsRuntime;
use crate::pool::PipelineEvent;
use crate::runtime::Runtime;

impl Core {
    /// Starts a head-poll round in the background if one is due now.
    pub(super) fn poll_heads_if_due(self: &Rc<Self>) {
        if !self.pipeline.head_poll_due(JsRuntime.now()) {
            return;
        }
        let core = Rc::clone(self);
        super::spawn(async move {
            let Ok(call) = core.encode("eth_blockNumber", &js_sys::Array::new().into(), None) else { return };
            let emit = |e: PipelineEvent| core.emit(&e, "eth_blockNumber");
            let _ = core.pipeline.poll_heads(&JsRuntime, |target| core.send(&call, target), &emit).await;
        });
    }
}
