//! The fetch transport: one HTTP POST per attempt, cut by an
//! `AbortController` when the attempt's timeout fires (the timer also
//! covers reading the body, so a body that never ends costs the timeout,
//! not forever).
//!
//! The response stays a JS value: the body is parsed by the host's own
//! `JSON.parse`, and only `id`, `error.code`, `error.message`, the status
//! and `Retry-After` are read. The `result` goes back to the caller
//! untouched, with no round trip through Rust data structures.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Promise, Reflect, JSON};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, Headers, RequestInit, Response};

use super::js_runtime::timer_millis;
use crate::policy::classify::{Observation, Reply, RpcErrorInfo, TransportFailure};
use crate::runtime::{AttemptTarget, Purpose, Transport};
use crate::time::duration_from_millis_f64;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (Window, workers and Node ≥ 18 alike).
    #[wasm_bindgen(js_name = fetch, catch)]
    fn global_fetch(input: &str, init: &RequestInit) -> Result<Promise, JsValue>;

    /// The host's `JSON.parse`, taking the JS string as is (no copy into
    /// wasm memory and back).
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    pub(super) fn json_parse(text: &JsValue) -> Result<JsValue, JsValue>;

    /// The host's UTF-8 decoder, producing a JS string (no copy into wasm).
    type Utf8Decoder;
    #[wasm_bindgen(constructor, js_class = "TextDecoder")]
    fn new() -> Utf8Decoder;
    #[wasm_bindgen(method, js_class = "TextDecoder", js_name = decode)]
    fn decode(this: &Utf8Decoder, bytes: &js_sys::Uint8Array) -> js_sys::JsString;
}

/// Reads a body without a declared length chunk by chunk, giving up (and
/// cancelling the stream) as soon as it passes `max` bytes: a node that
/// streams gigabytes costs at most `max` bytes of memory, not all of them.
async fn read_bounded(response: &Response, max: u32) -> Result<Option<js_sys::JsString>, JsValue> {
    let Some(body) = response.body() else { return Ok(Some(js_sys::JsString::from(""))) };
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let chunks = js_sys::Array::new();
    let mut total: u32 = 0;
    loop {
        let step = JsFuture::from(reader.read()).await?;
        if Reflect::get(&step, &"done".into())?.as_bool() == Some(true) {
            break;
        }
        let chunk: js_sys::Uint8Array = Reflect::get(&step, &"value".into())?.unchecked_into();
        total = total.saturating_add(chunk.length());
        if total > max {
            let _ = reader.cancel();
            return Ok(None);
        }
        chunks.push(&chunk);
    }
    let all = js_sys::Uint8Array::new_with_length(total);
    let mut offset = 0;
    for chunk in chunks.iter() {
        let chunk: js_sys::Uint8Array = chunk.unchecked_into();
        all.set(&chunk, offset);
        offset += chunk.length();
    }
    Ok(Some(Utf8Decoder::new().decode(&all)))
}

/// One encoded JSON-RPC call, built once per logical request.
pub struct FetchCall {
    /// The JSON text of the request.
    pub body: String,
    /// `method` + the params' JSON: the identity of the request for dedup
    /// and the cache.
    pub key: String,
    /// The `id` written into it, checked against the reply.
    pub id: f64,
    /// The caller's `AbortSignal`, if any: aborting it cancels the attempt
    /// in flight and stops the retry loop.
    pub signal: Option<AbortSignal>,
    /// For a JSON-RPC batch: the id of each item, in order.
    pub batch: Option<Vec<f64>>,
}

/// One endpoint as the transport sees it.
pub struct FetchEndpoint {
    /// Full URL (secrets included; never shown).
    pub url: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// A wrapped provider's call function, used instead of fetch.
    pub provider: Option<js_sys::Function>,
}

impl FetchCall {
    /// An empty call, for attempts whose body the transport chooses itself
    /// (the chain-id check).
    pub fn none() -> Self {
        FetchCall { body: String::new(), key: String::new(), id: 0.0, signal: None, batch: None }
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

/// Sends calls to the relayer's endpoint URLs.
pub struct FetchTransport {
    endpoints: Vec<FetchEndpoint>,
    max_response_bytes: u32,
    /// The `eth_chainId` call that checks an endpoint before its first request.
    chain_call: FetchCall,
}

impl FetchTransport {
    /// A transport over `endpoints` (index = endpoint index).
    pub fn new(endpoints: Vec<FetchEndpoint>, max_response_bytes: u32) -> Self {
        let body = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"eth_chainId\",\"params\":[]}".to_string();
        let chain_call = FetchCall { body, key: String::new(), id: 0.0, signal: None, batch: None };
        FetchTransport { endpoints, max_response_bytes, chain_call }
    }

    /// Encodes a call; fails (with the JS error) if `params` cannot be
    /// serialised, e.g. a BigInt or a cycle.
    pub fn encode(method: &str, params: &JsValue, id: f64, signal: Option<AbortSignal>) -> Result<FetchCall, JsValue> {
        let params_json = if params.is_undefined() || params.is_null() {
            "[]".to_string()
        } else {
            JSON::stringify(params)?.as_string().unwrap_or_else(|| "[]".into())
        };
        let method_json = method_json(method)?;
        let body =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{method_json},\"params\":{params_json}}}", id as u64);
        let key = format!("{method}\u{0}{params_json}");
        Ok(FetchCall { body, key, id, signal, batch: None })
    }

    async fn exchange(&self, call: &FetchCall, target: AttemptTarget) -> Result<Observation<JsValue>, JsValue> {
        let Some(endpoint) = self.endpoints.get(target.endpoint) else {
            return Ok(Observation::Transport(TransportFailure::Network("no such endpoint".into())));
        };
        let url = endpoint.url.as_str();
        if call.signal.as_ref().is_some_and(|s| s.aborted()) {
            return Ok(Observation::Transport(TransportFailure::Aborted));
        }
        if let Some(provider) = &endpoint.provider {
            return self.provider_exchange(provider, call, target).await;
        }
        let controller = AbortController::new()?;
        let timed_out = Rc::new(Cell::new(false));
        let _link = call.signal.as_ref().map(|signal| SignalLink::new(signal, &controller));
        let _timer = {
            let controller = controller.clone();
            let timed_out = timed_out.clone();
            gloo_timers::callback::Timeout::new(timer_millis(target.timeout), move || {
                timed_out.set(true);
                controller.abort();
            })
        };
        let headers = Headers::new()?;
        headers.set("content-type", "application/json")?;
        headers.set("accept", "application/json")?;
        for (name, value) in &endpoint.headers {
            headers.set(name, value)?;
        }
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&JsValue::from_str(&call.body));
        init.set_signal(Some(&controller.signal()));

        let outcome = async {
            let response: Response = JsFuture::from(global_fetch(url, &init)?).await?.dyn_into()?;
            let status = response.status();
            let retry_after = response.headers().get("retry-after").ok().flatten();
            let declared =
                response.headers().get("content-length").ok().flatten().and_then(|v| v.trim().parse::<u64>().ok());
            if declared.is_some_and(|n| n > u64::from(self.max_response_bytes)) {
                controller.abort();
                return Ok(Observation::Http { status, retry_after, reply: Reply::TooLarge });
            }
            let text: js_sys::JsString = if declared.is_some() {
                JsFuture::from(response.text()?).await?.dyn_into()?
            } else {
                match read_bounded(&response, self.max_response_bytes).await? {
                    Some(text) => text,
                    None => {
                        controller.abort();
                        return Ok(Observation::Http { status, retry_after, reply: Reply::TooLarge });
                    }
                }
            };
            if text.length() > self.max_response_bytes {
                return Ok(Observation::Http { status, retry_after, reply: Reply::TooLarge });
            }
            let reply = match &call.batch {
                Some(ids) => super::batch::summarise(&text, ids),
                None => summarise(&text, call.id),
            };
            Ok(Observation::Http { status, retry_after, reply })
        }
        .await;
        match outcome {
            Ok(observation) => Ok(observation),
            Err(error) => Ok(Observation::Transport(transport_failure(&error, timed_out.get()))),
        }
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
    ) -> Result<Observation<JsValue>, JsValue> {
        let timeout_ms = crate::time::millis_f64(target.timeout);
        let promise = provider.call2(&JsValue::UNDEFINED, &JsValue::from_str(&call.body), &timeout_ms.into())?;
        let out = JsFuture::from(Promise::resolve(&promise)).await?;
        let get = |key: &str| Reflect::get(&out, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
        if let Ok(text) = get("text").dyn_into::<js_sys::JsString>() {
            let reply = match &call.batch {
                Some(ids) => super::batch::summarise(&text, ids),
                None => summarise(&text, call.id),
            };
            return Ok(Observation::Http { status: 200, retry_after: None, reply });
        }
        Ok(super::observation::observation_from_js(&get("observation")))
    }
}

impl Transport for FetchTransport {
    type Payload = JsValue;
    type Call = FetchCall;

    async fn send(&self, call: &FetchCall, target: AttemptTarget) -> Observation<JsValue> {
        let call = if target.purpose == Purpose::ChainId { &self.chain_call } else { call };
        match self.exchange(call, target).await {
            Ok(observation) => observation,
            Err(error) => Observation::Transport(transport_failure(&error, false)),
        }
    }
}

/// Forwards a caller's abort to one attempt's controller, for as long as
/// the link lives (dropping it removes the listener, so nothing leaks).
struct SignalLink {
    signal: AbortSignal,
    listener: Closure<dyn FnMut()>,
}

impl SignalLink {
    fn new(signal: &AbortSignal, controller: &AbortController) -> Self {
        let controller = controller.clone();
        let listener = Closure::<dyn FnMut()>::new(move || controller.abort());
        let _ = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        SignalLink { signal: signal.clone(), listener }
    }
}

impl Drop for SignalLink {
    fn drop(&mut self) {
        let _ = self.signal.remove_event_listener_with_callback("abort", self.listener.as_ref().unchecked_ref());
    }
}

/// Reduces a reply body to what the policies read.
fn summarise(text: &js_sys::JsString, our_id: f64) -> Reply<JsValue> {
    let Ok(value) = json_parse(text) else { return Reply::NotJson };
    if !value.is_object() || js_sys::Array::is_array(&value) {
        return Reply::Malformed;
    }
    let get = |target: &JsValue, key: &str| Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    let id = get(&value, "id");
    let error = get(&value, "error");
    let has_error = !error.is_undefined() && !error.is_null();
    let has_result = Reflect::has(&value, &"result".into()).unwrap_or(false);
    let id_matches = id.as_f64() == Some(our_id)
        || id.as_string().is_some_and(|s| s.parse::<f64>().ok() == Some(our_id))
        || (has_error && id.is_null());
    if !id_matches {
        return Reply::WrongId;
    }
    match (has_error, has_result) {
        (true, true) => Reply::Malformed,
        (true, false) => Reply::Error(error_info(&error, &get)),
        (false, true) => Reply::Result(get(&value, "result")),
        (false, false) => Reply::Malformed,
    }
}

pub(super) fn error_info(error: &JsValue, get: &dyn Fn(&JsValue, &str) -> JsValue) -> RpcErrorInfo<JsValue> {
    if let Some(text) = error.as_string() {
        return RpcErrorInfo { code: None, message: text, data: None, backoff_hint: None };
    }
    let code =
        get(error, "code").as_f64().filter(|c| c.is_finite() && c.fract() == 0.0 && c.abs() < 9e15).map(|c| c as i64);
    let message = get(error, "message").as_string().unwrap_or_default();
    let data = Some(get(error, "data")).filter(|d| !d.is_undefined());
    let backoff_hint = data
        .as_ref()
        .filter(|d| d.is_object())
        .map(|d| get(&get(d, "rate"), "backoff_seconds"))
        .and_then(|s| s.as_f64())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| duration_from_millis_f64(s * 1000.0));
    RpcErrorInfo { code, message, data, backoff_hint }
}

/// Maps a rejected fetch to a failure kind. Node's undici puts the socket
/// error code in `cause.code`; browsers only say "Failed to fetch".
pub fn transport_failure(error: &JsValue, timed_out: bool) -> TransportFailure {
    let get = |target: &JsValue, key: &str| Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    let name = get(error, "name").as_string().unwrap_or_default();
    if name == "AbortError" || name == "TimeoutError" {
        return if timed_out { TransportFailure::Timeout } else { TransportFailure::Aborted };
    }
    let cause = get(error, "cause");
    let code = get(&cause, "code").as_string().or_else(|| get(error, "code").as_string()).unwrap_or_default();
    match code.as_str() {
        "ECONNREFUSED" => TransportFailure::ConnectionRefused,
        "ENOTFOUND" | "EAI_AGAIN" => TransportFailure::Dns,
        "ECONNRESET" | "EPIPE" | "UND_ERR_SOCKET" | "UND_ERR_CLOSED" => TransportFailure::ConnectionReset,
        "UND_ERR_HEADERS_TIMEOUT" | "UND_ERR_BODY_TIMEOUT" | "ETIMEDOUT" => TransportFailure::Timeout,
        _ => {
            let message = get(error, "message").as_string().unwrap_or_else(|| "network error".into());
            let detail = if code.is_empty() { message } else { format!("{message} ({code})") };
            TransportFailure::Network(detail)
        }
    }
}
