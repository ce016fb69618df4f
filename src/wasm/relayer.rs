//! `WasmRelayer`: the class the JS `FaultTolerantRelayer` wraps.
//!
//! State lives in one `Rc<Core>`; every exported async method clones the
//! `Rc` into its future, so requests run concurrently on the JS event loop
//! while sharing the pipeline's budget, breakers, quota and routing state.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::config;
use super::core::Core;
use super::descriptors::{self, Redactor};
use super::fetch::{FetchEndpoint, FetchTransport};
use super::js_runtime::JsRuntime;
use super::news::with_realm;
use super::node_bridge::CoreNode;
use super::stats;
use super::tx_fields;
use crate::config::{ConfigError, RelayerConfig};

use crate::policy::Classifier;
use crate::pool::request::Front;
use crate::pool::Pipeline;
use crate::runtime::Runtime;
use crate::tx::TxOptions;

/// The relayer core exposed to JS. Use the `FaultTolerantRelayer` wrapper;
/// this class is its engine.
#[wasm_bindgen]
pub struct WasmRelayer {
    pub(super) core: Rc<Core>,
    /// What the transaction module's engine calls (`node_bridge.rs`).
    pub(super) node: Rc<CoreNode>,
}

#[wasm_bindgen]
impl WasmRelayer {
    /// Validates `upstreams` and `options`; throws a config descriptor
    /// naming the bad field. `listener(event)` receives pipeline events;
    /// `http_sender(url, headers, maxBytes)` makes the per-endpoint HTTP
    /// exchange (the wrapper's `httpSender`, see `fetch.rs`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        upstreams: JsValue,
        options: JsValue,
        listener: JsValue,
        http_sender: JsValue,
    ) -> Result<WasmRelayer, JsValue> {
        let (specs, providers): (Vec<_>, Vec<_>) =
            config::upstreams(&upstreams).map_err(|e| descriptors::config_error(&e))?.into_iter().unzip();
        let (raw, rules) = config::options(&options).map_err(|e| descriptors::config_error(&e))?;
        // The transaction module reads `transactions` when it loads; a bad one is refused here, at once.
        if options.is_object() {
            let value = js_sys::Reflect::get(&options, &"transactions".into()).unwrap_or(JsValue::UNDEFINED);
            tx_fields::tx_options(&value, TxOptions::default(), "transactions")
                .map_err(|e| descriptors::config_error(&ConfigError::new(&e.field, e.reason)))?;
        }
        let relayer_config = RelayerConfig::build(specs, raw).map_err(|e| descriptors::config_error(&e))?;
        let http_sender = http_sender.dyn_into::<Function>().map_err(|_| {
            descriptors::config_error(&ConfigError::new("httpSender", "the engine needs the wrapper's HTTP sender"))
        })?;
        let max_bytes = relayer_config.max_response_bytes;
        let endpoints = relayer_config
            .endpoints
            .iter()
            .zip(providers)
            .map(|(s, provider)| match provider {
                Some(provider) => Ok(FetchEndpoint::Provider(provider)),
                None => FetchEndpoint::http(&http_sender, &s.url, &s.headers, max_bytes),
            })
            .collect::<Result<Vec<_>, JsValue>>()?;
        let transport = FetchTransport::new(endpoints, relayer_config.max_response_bytes, relayer_config.pool.batch);
        let redactor = Redactor::new(relayer_config.endpoints.iter().map(|s| s.url.clone()).collect());
        let front = Front::new(relayer_config.pool.cache.max_entries);
        let classifier = Classifier::with_rules(rules);
        let now = JsRuntime.now();
        let pipeline = with_realm(|realm| Pipeline::in_realm(relayer_config, classifier, now, Some(realm)));
        super::store::send_due_asks();
        let core = Core {
            pipeline,
            transport,
            redactor,
            listener: RefCell::new(listener.dyn_into::<Function>().ok()),
            next_id: Cell::new(1.0),
            front,
        };
        let core = Rc::new(core);
        Ok(WasmRelayer { node: Rc::new(CoreNode::new(core.clone())), core })
    }

    /// One logical JSON-RPC request under every policy. Resolves to the
    /// node's `result` untouched; rejects with an error descriptor.
    /// `signal` (an `AbortSignal` or undefined) cancels it.
    pub fn request(&self, method: String, params: JsValue, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        super::promise(async move { core.request(method, params, signal).await })
    }

    /// Exactly one attempt against endpoint `endpoint` (for the provider
    /// handed to `executeRpcWithRetry` operations). Rejections carry an
    /// `observation` the outer retry loop classifies.
    #[wasm_bindgen(js_name = attemptOnce)]
    pub fn attempt_once(&self, endpoint: usize, method: String, params: JsValue, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        super::promise(async move { core.attempt_once(endpoint, method, params, signal).await })
    }

    /// Runs `op(endpointIndex, attempt, timeoutMs)` under the retry
    /// policies. `op` must resolve to `{ ok: true, value }` or `{ ok: false,
    /// observation, error }` (the JS wrapper guarantees it). `signal`
    /// cancels the loop.
    pub fn execute(&self, op: Function, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        super::promise(async move { core.execute(op, signal).await })
    }

    /// A JSON-RPC batch of `[{ method, params }]`; resolves to one
    /// `{ status: 'fulfilled', value } | { status: 'rejected', reason }` per item.
    pub fn batch(&self, items: JsValue, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        super::promise(async move { core.batch(items, signal).await })
    }

    /// Redacted endpoint labels, in order.
    pub fn endpoints(&self) -> Array {
        self.core.redactor.labels()
    }

    /// A snapshot of endpoints, quota groups, budget, queue and cache.
    pub fn stats(&self) -> JsValue {
        stats::snapshot(&self.core)
    }

    /// Stops accepting requests; attempts in flight end at their next step.
    pub fn close(&self) {
        self.core.close();
    }
}
