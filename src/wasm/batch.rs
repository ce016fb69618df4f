//! JSON-RPC batches: one HTTP request for many calls, costs summed, each
//! item answered on its own. An item that fails for a retryable reason (a
//! transient error, or missing from the reply) is sent again in a smaller
//! batch, within the same deadline and attempt limit; items that failed for
//! good are reported with their own typed error. Replies are matched by id:
//! missing, duplicated (first wins) or extra ids cannot shift answers onto
//! the wrong request.

use std::rc::Rc;
use std::time::Duration;

use js_sys::{Array, JsString, Reflect, JSON};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::core::Core;
use super::descriptors::{self, Obj, CODE_INVALID_PARAMS};
use super::fetch::{envelope, error_info, json_parse, reply_id, FetchCall};
use super::js_runtime::JsRuntime;
use crate::error::{AttemptRecord, Failure, FailureDetail, StopReason};
use crate::policy::classify::{Observation, Reply};
use crate::pool::{Call, PipelineEvent, SuccessValue};
use crate::rpc::methods::method_info;
use crate::runtime::{AttemptTarget, Runtime};

/// Most items in one batch (geth refuses more than 1,000).
pub const MAX_BATCH: u32 = 1000;

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// One validated item.
struct Item {
    method: String,
    params: JsValue,
}

/// Reduces a batch reply to one entry per item, in item order: the reply
/// object with our id, or `undefined` when the node left it out.
pub fn summarise(text: &js_sys::JsString, ids: &[f64]) -> Reply<JsValue> {
    let Ok(value) = json_parse(text) else { return Reply::NotJson };
    if !Array::is_array(&value) {
        // A single error object: the node refused the whole batch.
        if value.is_object() && !get(&value, "error").is_undefined() {
            return Reply::Error(error_info(&get(&value, "error"), &|t, k| get(t, k)));
        }
        return Reply::Malformed;
    }
    let replies = Array::from(&value);
    let reply_ids: Vec<Option<f64>> = replies.iter().map(|reply| reply_id(&get(&reply, "id"))).collect();
    let ordered = Array::new_with_length(ids.len() as u32);
    for (pos, k) in crate::rpc::batch_match::match_replies(ids, &reply_ids).into_iter().enumerate() {
        if let Some(k) = k {
            ordered.set(pos as u32, replies.get(k as u32));
        }
    }
    Reply::Result(ordered.into())
}

fn settled(value: Option<JsValue>, reason: Option<JsValue>) -> JsValue {
    match (value, reason) {
        (_, Some(reason)) => Obj::new().set("status", "rejected").set("reason", reason).build(),
        (value, None) => Obj::new().set("status", "fulfilled").set("value", value.unwrap_or(JsValue::NULL)).build(),
    }
}

impl Core {
    fn encode_batch(&self, items: &[(usize, &Item)], signal: Option<AbortSignal>) -> Result<FetchCall, JsValue> {
        let mut body = JsString::from("[");
        let mut ids = Vec::with_capacity(items.len());
        for (n, (_, item)) in items.iter().enumerate() {
            let id = self.take_id();
            let params = if item.params.is_undefined() { Array::new().into() } else { item.params.clone() };
            let params_json =
                JSON::stringify(&params).ok().and_then(|s| s.dyn_into::<JsString>().ok()).ok_or_else(|| {
                    descriptors::simple_error(
                        "invalidRequest",
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
        Ok(FetchCall { body, key: String::new(), id: 0.0, signal, batch: Some(ids) })
    }

    /// Runs `items` (an array of `{ method, params }`) as JSON-RPC batches;
    /// resolves to one `{ status, value | reason }` per item, in order.
    pub(super) async fn batch(self: Rc<Self>, items: JsValue, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
        if self.closed() {
            return Err(self.closed_error());
        }
        let invalid = |m: &str| descriptors::simple_error("invalidRequest", CODE_INVALID_PARAMS, m);
        if !Array::is_array(&items) {
            return Err(invalid("batch() takes an array of { method, params }"));
        }
        let list = Array::from(&items);
        if list.length() == 0 || list.length() > MAX_BATCH {
            return Err(invalid("a batch holds between 1 and 1000 calls"));
        }
        let mut parsed = Vec::with_capacity(list.length() as usize);
        for (i, item) in list.iter().enumerate() {
            let Some(method) = get(&item, "method").as_string().filter(|m| !m.is_empty()) else {
                return Err(invalid(&format!("batch item {i} needs a non-empty string `method`")));
            };
            parsed.push(Item { method, params: get(&item, "params") });
        }
        let mut out: Vec<Option<JsValue>> = vec![None; parsed.len()];
        let mut pending: Vec<usize> = (0..parsed.len()).collect();
        let rounds = self.pipeline.config().max_attempts();
        let started = JsRuntime.now();
        for round in 0..rounds {
            let last_round =
                round + 1 == rounds || JsRuntime.now().saturating_since(started) >= self.pipeline.config().deadline;
            let chunk: Vec<(usize, &Item)> = pending.iter().map(|&i| (i, &parsed[i])).collect();
            let call = self.encode_batch(&chunk, signal.clone())?;
            let cost: f64 = chunk.iter().map(|(_, it)| method_info(&it.method).cost).sum();
            let emit = |e: PipelineEvent| self.emit(&e, "batch");
            let attempt = |target: AttemptTarget| self.send(&call, target);
            let batch_call = Call { method: "batch", wants_latest: true, cost: Some(cost) };
            let outcome = self.pipeline.execute(&JsRuntime, batch_call, attempt, &emit).await;
            let (replies, answered_by) = match outcome {
                Ok(success) => match success.value {
                    SuccessValue::Result(v) => (Array::from(&v), success.endpoint),
                    SuccessValue::AlreadyKnown => (Array::new(), success.endpoint),
                },
                Err(_) if self.closed() => return Err(self.closed_error()),
                Err(failure) => {
                    let reason = descriptors::failure(&failure, &self.redactor, self.pipeline.config().max_attempts());
                    for &i in &pending {
                        out[i] = Some(settled(None, Some(reason.clone())));
                    }
                    pending.clear();
                    break;
                }
            };
            let mut retry = Vec::new();
            for (pos, &(i, item)) in chunk.iter().enumerate() {
                let reply = replies.get(pos as u32);
                if reply.is_undefined() {
                    if last_round {
                        let d = descriptors::simple_error(
                            "http",
                            descriptors::CODE_UNAVAILABLE,
                            "the node left this batch item unanswered",
                        );
                        out[i] = Some(settled(None, Some(d)));
                    } else {
                        retry.push(i);
                    }
                    continue;
                }
                let error = get(&reply, "error");
                if error.is_undefined() || error.is_null() {
                    out[i] = Some(settled(Some(get(&reply, "result")), None));
                    continue;
                }
                let info = error_info(&error, &|t, k| get(t, k));
                let obs: Observation<JsValue> =
                    Observation::Http { status: 200, retry_after: None, reply: Reply::Error(info.clone()) };
                let verdict = self.pipeline.classify(&item.method, &obs, JsRuntime.unix_time());
                let retryable = verdict.class.retryable_anywhere();
                if retryable && !last_round {
                    retry.push(i);
                    continue;
                }
                let record = AttemptRecord {
                    endpoint: answered_by,
                    verdict,
                    started_after: Duration::ZERO,
                    elapsed: Duration::ZERO,
                };
                let failure: Failure<JsValue> = Failure {
                    reason: StopReason::NotRetryable,
                    last: Some(FailureDetail::Rpc(info)),
                    attempts: vec![record],
                    reported: None,
                };
                out[i] = Some(settled(None, Some(descriptors::failure(&failure, &self.redactor, 1))));
            }
            pending = retry;
            if pending.is_empty() {
                break;
            }
        }
        let results: Array = out.into_iter().map(|r| r.unwrap_or(JsValue::NULL)).collect();
        Ok(results.into())
    }
}
