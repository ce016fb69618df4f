//! JSON-RPC batches, converted: the items from JS, one batch body per
//! round, the reply split per item, the outcomes to `{ status, value |
//! reason }`. Which items are sent again, and when a round is the last, is
//! decided in `pool/batch.rs`. Replies are matched by id: missing,
//! duplicated (first wins) or extra ids cannot shift answers onto the
//! wrong request.

use std::rc::Rc;

use js_sys::{Array, JsString, Reflect, JSON};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::contract::kind;
use super::core::Core;
use super::descriptors::{self, Obj, CODE_INVALID_PARAMS};
use super::fetch::{envelope, FetchCall};
use super::js_runtime::JsRuntime;
use crate::policy::classify::Reply;
use crate::pool::batch::{execute_batch, ItemOutcome, ItemReply, MAX_BATCH};
use crate::pool::PipelineEvent;
use crate::runtime::Payload;

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// One validated item.
struct Item {
    method: String,
    params: JsValue,
}

/// Item `pos` of a round's ordered reply.
fn split(replies: &JsValue, pos: usize) -> ItemReply<JsValue> {
    match replies.batch_item(pos) {
        Some(Reply::Result(value)) => ItemReply::Result(value),
        Some(Reply::Error(error)) => ItemReply::Error(error),
        _ => ItemReply::Missing,
    }
}

fn settled(value: Option<JsValue>, reason: Option<JsValue>) -> JsValue {
    match (value, reason) {
        (_, Some(reason)) => Obj::new().set("status", "rejected").set("reason", reason).build(),
        (value, None) => Obj::new().set("status", "fulfilled").set("value", value.unwrap_or(JsValue::NULL)).build(),
    }
}

impl Core {
    fn encode_batch(
        &self,
        items: &[Item],
        positions: &[usize],
        signal: Option<AbortSignal>,
    ) -> Result<FetchCall, JsValue> {
        let mut body = JsString::from("[");
        let mut ids = Vec::with_capacity(positions.len());
        for (n, &i) in positions.iter().enumerate() {
            let item = &items[i];
            let id = self.take_id();
            let params = if item.params.is_undefined() { Array::new().into() } else { item.params.clone() };
            let params_json =
                JSON::stringify(&params).ok().and_then(|s| s.dyn_into::<JsString>().ok()).ok_or_else(|| {
                    descriptors::simple_error(
                        kind::INVALID_REQUEST,
                        CODE_INVALID_PARAMS,
                        "batch params cannot be encoded as JSON",
                    )
                })?;
            if n > 0 {
                body = body.concat(&JsValue::from_str(","));
            }
            body = body.concat(&envelope(id, &item.method, &params_json)?.into());
            ids.push(id);
        }
        let body = body.concat(&JsValue::from_str("]"));
        Ok(FetchCall { body, key: String::new(), id: 0.0, signal, batch: Some(ids), batchable: false })
    }

    /// Runs `items` (an array of `{ method, params }`) as JSON-RPC batches;
    /// resolves to one `{ status, value | reason }` per item, in order.
    pub(super) async fn batch(self: Rc<Self>, items: JsValue, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
        if self.closed() {
            return Err(self.closed_error());
        }
        let invalid = |m: &str| descriptors::simple_error(kind::INVALID_REQUEST, CODE_INVALID_PARAMS, m);
        if !Array::is_array(&items) {
            return Err(invalid("batch() takes an array of { method, params }"));
        }
        let list = Array::from(&items);
        if list.length() == 0 || list.length() as usize > MAX_BATCH {
            return Err(invalid("a batch holds between 1 and 1000 calls"));
        }
        let mut parsed = Vec::with_capacity(list.length() as usize);
        for (i, item) in list.iter().enumerate() {
            let Some(method) = get(&item, "method").as_string().filter(|m| !m.is_empty()) else {
                return Err(invalid(&format!("batch item {i} needs a non-empty string `method`")));
            };
            parsed.push(Item { method, params: get(&item, "params") });
        }
        let methods: Vec<&str> = parsed.iter().map(|item| item.method.as_str()).collect();
        let encode = |positions: &[usize]| self.encode_batch(&parsed, positions, signal.clone());
        let emit = |e: PipelineEvent| self.emit(&e, "batch");
        let outcome = execute_batch(&self.pipeline, &JsRuntime, &*self, &methods, encode, split, &emit).await?;
        if outcome.batch_failure.is_some() && self.closed() {
            return Err(self.closed_error());
        }
        let whole = outcome
            .batch_failure
            .map(|failure| descriptors::failure(&failure, &self.redactor, self.pipeline.config().max_attempts()));
        let results: Array = outcome
            .items
            .into_iter()
            .map(|item| match item {
                ItemOutcome::Answered(value) => settled(Some(value), None),
                ItemOutcome::Failed(failure) => settled(None, Some(descriptors::failure(&failure, &self.redactor, 1))),
                ItemOutcome::Unanswered => {
                    let d = descriptors::simple_error(
                        kind::HTTP,
                        descriptors::CODE_UNAVAILABLE,
                        "the node left this batch item unanswered",
                    );
                    settled(None, Some(d))
                }
                ItemOutcome::BatchFailed => settled(None, whole.clone()),
            })
            .collect();
        Ok(results.into())
    }
}
