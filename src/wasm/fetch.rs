//! The fetch transport: one HTTP POST per attempt. The decisions stay
//! here — which body, how long the attempt may take, what the reply means —
//! and the I/O is one call per attempt into the wrapper's `httpSender`
//! (pkg-template/src/http.js): `fetch` under an `AbortController` cut at
//! the attempt's timeout, the body read with a size bound; the result comes
//! back through `deliverHttp` (`delivery.rs`). Doing that I/O
//! from wasm took ~25 boundary crossings and five wasm closures per
//! attempt, which cost more than the whole policy layer (benches/README.md).
//!
//! The response stays a JS value: the body is parsed by the host's own
//! `JSON.parse`, and only `id`, `error.code`, `error.message`, the status
//! and `Retry-After` are read. The `result` goes back to the caller
//! untouched, with no round trip through Rust data structures.

use js_sys::{Function, JsString, Object, Promise, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use std::rc::Rc;

use super::delivery::Delivery;
use super::keys::{self, Key};
use super::reply::{summarise, summarise_batch, transport_failure};
use super::wire::{Route, Wire};
use crate::policy::classify::{Observation, Reply, TransportFailure};
use crate::policy::wire_batch::WireBatchConfig;
use crate::redact::EndpointUrl;
use crate::rpc::methods::method_info;
use crate::runtime::{AttemptTarget, Purpose, Transport};

/// One encoded JSON-RPC call, built once per logical request.
pub struct FetchCall {
    /// The JSON text of the request, kept as a JS string: params cross into
    /// wasm memory at most once, in bounded chunks (a 20 MiB request must
    /// not grow wasm memory, which never shrinks, by several times that).
    pub body: JsString,
    /// `method` + the params' JSON (large params: their keccak-256), the
    /// identity of the request for dedup and the cache.
    pub key: String,
    /// The `id` written into it, checked against the reply.
    pub id: f64,
    /// The caller's `AbortSignal`, if any: aborting it cancels the attempt
    /// in flight and stops the retry loop.
    pub signal: Option<AbortSignal>,
    /// For a JSON-RPC batch: the id of each item, in order.
    pub batch: Option<Vec<f64>>,
    /// Whether it may share an HTTP request with others (`wire.rs`): a
    /// read no caller can abort; never a send.
    pub batchable: bool,
}

/// One endpoint as the transport sees it: how an attempt reaches it.
pub enum FetchEndpoint {
    /// A URL: the wrapper's `httpSender(url, headers, maxBytes)`, made once
    /// per endpoint (the URL and its secrets stay inside it).
    Http(Function),
    /// A wrapped provider's call function, used instead of fetch.
    Provider(Function),
}

impl FetchEndpoint {
    /// The sender for a URL endpoint: `http_sender(url, headers, maxBytes)`
    /// with the headers as one plain object (content type first, then the
    /// URL's `user:pass@` as Basic authorization, so an endpoint's own
    /// headers can override either).
    pub fn http(
        http_sender: &Function,
        url: &EndpointUrl,
        headers: &[(String, String)],
        max_bytes: u32,
    ) -> Result<Self, JsValue> {
        let object = Object::new();
        Reflect::set(&object, &"content-type".into(), &"application/json".into())?;
        Reflect::set(&object, &"accept".into(), &"application/json".into())?;
        if let Some(authorization) = url.authorization() {
            Reflect::set(&object, &"authorization".into(), &authorization.into())?;
        }
        let url = url.url();
        for (name, value) in headers {
            Reflect::set(&object, &name.to_ascii_lowercase().into(), &value.into())?;
        }
        let sender = http_sender.call3(&JsValue::UNDEFINED, &url.into(), &object, &max_bytes.into())?;
        sender
            .dyn_into::<Function>()
            .map(FetchEndpoint::Http)
            .map_err(|_| JsValue::from_str("httpSender returned no function"))
    }
}

impl FetchCall {
    /// An empty call, for attempts whose body the transport chooses itself
    /// (the chain-id check).
    pub fn none() -> Self {
        FetchCall { body: JsString::from(""), key: String::new(), id: 0.0, signal: None, batch: None, batchable: false }
    }
}

/// A method name as a JSON string. Method names are plain identifiers, which
/// need no escaping; anything else goes through the host's `JSON.stringify`
/// (one call into JS saved per request on the common path).
pub fn method_json(method: &str) -> Result<String, JsValue> {
    if method.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Ok(format!("\"{method}\""));
    }
    Ok(JSON::stringify(&JsValue::from_str(method))?.as_string().unwrap_or_default())
}

/// One JSON-RPC request object as a JS string (the one place the envelope
/// is written; batches join several). The params' JSON is never copied
/// into wasm memory.
pub fn envelope(id: f64, method: &str, params_json: &JsString) -> Result<JsString, JsValue> {
    let method_json = method_json(method)?;
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{method_json},\"params\":", id as u64);
    Ok(JsString::from(head).concat(params_json).concat(&JsValue::from_str("}")))
}

/// Params up to this many UTF-16 units are part of the key as they are;
/// longer ones are hashed (a multicall's calldata still dedups and caches).
const KEY_INLINE: u32 = 4096;
/// Large params are hashed this many UTF-16 units at a time, so the copy
/// into wasm memory stays small whatever their size.
const KEY_CHUNK: u32 = 32 * 1024;

/// The dedup/cache identity of `method` with params `json`.
fn request_key(method: &str, json: &JsString) -> String {
    let length = json.length();
    if length <= KEY_INLINE {
        return format!("{method}\u{0}{}", String::from(json));
    }
    let mut hasher = alloy_primitives::Keccak256::new();
    let mut start = 0;
    while start < length {
        let end = (start + KEY_CHUNK).min(length);
        hasher.update(String::from(json.slice(start, end)).as_bytes());
        start = end;
    }
    // The digest in hex by hand: B256's Display unwraps a hex encoding, whose error's Debug
    // brings char escaping and Unicode's tables into the module (src/text.rs).
    let mut key = format!("{method}\u{0}#{length}:");
    for byte in hasher.finalize() {
        for nibble in [byte >> 4, byte & 15] {
            key.push(char::from(b"0123456789abcdef"[usize::from(nibble)]));
        }
    }
    key
}

/// A call as one attempt sends it (`FetchTransport::prepare`).
enum Prepared<'a> {
    /// The caller's call or the chain-id check, as built.
    As(&'a FetchCall),
    /// The caller's call behind the check, built for this attempt.
    Checked(FetchCall),
}

impl Prepared<'_> {
    fn call(&self) -> &FetchCall {
        match self {
            Prepared::As(call) => call,
            Prepared::Checked(call) => call,
        }
    }
}

/// Sends calls to the relayer's endpoint URLs.
pub struct FetchTransport {
    endpoints: Vec<FetchEndpoint>,
    max_response_bytes: u32,
    /// The `eth_chainId` call that checks an endpoint before its first request.
    chain_call: FetchCall,
    /// Each URL endpoint's wire, when batching (`wire.rs`).
    wires: Vec<Option<Rc<Wire>>>,
}

impl FetchTransport {
    /// A transport over `endpoints` (index = endpoint index), batching
    /// concurrent reads to a URL endpoint on the wire when `batch` is set.
    pub fn new(endpoints: Vec<FetchEndpoint>, max_response_bytes: u32, batch: Option<WireBatchConfig>) -> Self {
        let body = JsString::from("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"eth_chainId\",\"params\":[]}");
        let chain_call = FetchCall { body, key: String::new(), id: 0.0, signal: None, batch: None, batchable: false };
        let wires = endpoints
            .iter()
            .map(|endpoint| match (endpoint, batch) {
                (FetchEndpoint::Http(sender), Some(config)) => {
                    Some(Wire::new(sender.clone(), max_response_bytes, config))
                }
                _ => None,
            })
            .collect();
        FetchTransport { endpoints, max_response_bytes, chain_call, wires }
    }

    /// What an attempt of `purpose` sends: the caller's call, the chain-id
    /// check, or `call` behind the check in one batch (the check's id is 0,
    /// a call's never is).
    fn prepare<'a>(&'a self, call: &'a FetchCall, purpose: Purpose) -> Prepared<'a> {
        match purpose {
            Purpose::Request => Prepared::As(call),
            Purpose::ChainId => Prepared::As(&self.chain_call),
            Purpose::CheckedRequest => {
                let body = JsString::from("[")
                    .concat(&self.chain_call.body)
                    .concat(&",".into())
                    .concat(&call.body)
                    .concat(&"]".into());
                let batch = Some(vec![0.0, call.id]);
                let signal = call.signal.clone();
                Prepared::Checked(FetchCall { body, key: String::new(), id: 0.0, signal, batch, batchable: false })
            }
        }
    }

    /// Encodes a call; fails (with the JS error) if `params` cannot be
    /// serialised, e.g. a BigInt or a cycle.
    pub fn encode(method: &str, params: &JsValue, id: f64, signal: Option<AbortSignal>) -> Result<FetchCall, JsValue> {
        let params_json = if params.is_undefined() || params.is_null() {
            JsString::from("[]")
        } else {
            JSON::stringify(params)?.dyn_into::<JsString>().unwrap_or_else(|_| JsString::from("[]"))
        };
        let body = envelope(id, method, &params_json)?;
        let key = request_key(method, &params_json);
        let batchable = signal.is_none() && method_info(method).known_read;
        Ok(FetchCall { body, key, id, signal, batch: None, batchable })
    }

    /// One attempt, with the foreign error behind a wrapped provider's
    /// failure (kept as the `cause` of the error the caller gets).
    pub async fn send_traced(
        &self,
        call: &FetchCall,
        target: AttemptTarget,
    ) -> (Observation<JsValue>, Option<JsValue>) {
        let prepared = self.prepare(call, target.purpose);
        let call = prepared.call();
        if let Some(FetchEndpoint::Provider(provider)) = self.endpoints.get(target.endpoint) {
            if !call.signal.as_ref().is_some_and(|s| s.aborted()) {
                return match self.provider_exchange(provider, call, target).await {
                    Ok(traced) => traced,
                    Err(error) => (Observation::Transport(transport_failure(&error, false)), Some(error)),
                };
            }
        }
        (self.observe(call, target).await, None)
    }

    /// One exchange of `call` as prepared (the purpose already applied).
    async fn observe(&self, call: &FetchCall, target: AttemptTarget) -> Observation<JsValue> {
        match self.exchange(call, target).await {
            Ok(observation) => observation,
            Err(error) => Observation::Transport(transport_failure(&error, false)),
        }
    }

    async fn exchange(&self, call: &FetchCall, target: AttemptTarget) -> Result<Observation<JsValue>, JsValue> {
        let Some(endpoint) = self.endpoints.get(target.endpoint) else {
            return Ok(Observation::Transport(TransportFailure::Network("no such endpoint".into())));
        };
        if call.signal.as_ref().is_some_and(|s| s.aborted()) {
            return Ok(Observation::Transport(TransportFailure::Aborted));
        }
        let sender = match endpoint {
            FetchEndpoint::Provider(provider) => return Ok(self.provider_exchange(provider, call, target).await?.0),
            FetchEndpoint::Http(sender) => sender,
        };
        let timeout_ms = crate::time::millis_f64(target.timeout).max(1.0);
        let _in_flight = match self.wires.get(target.endpoint).and_then(Option::as_ref) {
            Some(wire) => match wire.route(call.batchable && call.batch.is_none(), &call.body, call.id, timeout_ms) {
                Route::Alone(in_flight) => Some(in_flight),
                Route::Queued(waiting) => return Ok(waiting.await),
            },
            None => None,
        };
        let signal = call.signal.as_ref().map_or(JsValue::UNDEFINED, |s| s.into());
        let mut delivery = Delivery::new();
        let controller =
            sender.call4(&JsValue::UNDEFINED, &call.body, &timeout_ms.into(), &signal, &delivery.id().into())?;
        delivery.abort_with(controller);
        let out = delivery.await;
        let Some(status) = keys::get(&out, Key::Status).as_f64() else {
            let timed_out = keys::get(&out, Key::TimedOut).as_bool() == Some(true);
            return Ok(Observation::Transport(transport_failure(&keys::get(&out, Key::Error), timed_out)));
        };
        let status = status as u16;
        let retry_after = keys::get(&out, Key::RetryAfter).as_string();
        let reply = match keys::get(&out, Key::Text).dyn_into::<js_sys::JsString>() {
            Ok(text) if text.length() <= self.max_response_bytes => match &call.batch {
                Some(ids) => summarise_batch(&text, ids),
                None => summarise(&text, call.id),
            },
            // No text: too large, or (read only then) a number JS cannot hold exactly.
            _ if keys::get(&out, Key::Inexact).as_bool() == Some(true) => Reply::InexactNumber,
            _ => Reply::TooLarge,
        };
        Ok(Observation::Http { status, retry_after, reply })
    }
}

impl FetchTransport {
    /// One attempt through a wrapped provider: the JS adapter answers with
    /// the JSON text a node would have sent, or with an observation of the
    /// provider's failure (it enforces the attempt timeout itself).
    async fn provider_exchange(
        &self,
        provider: &js_sys::Function,
        call: &FetchCall,
        target: AttemptTarget,
    ) -> Result<(Observation<JsValue>, Option<JsValue>), JsValue> {
        let timeout_ms = crate::time::millis_f64(target.timeout);
        let promise = provider.call2(&JsValue::UNDEFINED, &call.body, &timeout_ms.into())?;
        let out = JsFuture::from(Promise::resolve(&promise)).await?;
        if let Ok(text) = keys::get(&out, Key::Text).dyn_into::<js_sys::JsString>() {
            let reply = match &call.batch {
                Some(ids) => summarise_batch(&text, ids),
                None => summarise(&text, call.id),
            };
            return Ok((Observation::Http { status: 200, retry_after: None, reply }, None));
        }
        let observation = Reflect::get(&out, &JsValue::from_str("observation")).unwrap_or(JsValue::UNDEFINED);
        let error = Reflect::get(&out, &JsValue::from_str("error")).ok().filter(|e| !e.is_undefined());
        Ok((super::observation::observation_from_js(&observation), error))
    }
}

impl Transport for FetchTransport {
    type Payload = JsValue;
    type Call = FetchCall;

    async fn send(&self, call: &FetchCall, target: AttemptTarget) -> Observation<JsValue> {
        let prepared = self.prepare(call, target.purpose);
        let call = prepared.call();
        self.observe(call, target).await
    }
}
