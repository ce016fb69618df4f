//! A scripted transport for simulations: each endpoint plays a list of
//! behaviours (answer, error, status, hang, refuse), repeating the last
//! one forever, and counts what it was sent — the simulated twin of the
//! loopback mock server the JS tests use.

use std::cell::RefCell;
use std::time::Duration;

use super::sim::SimRuntime;
use super::{AttemptTarget, Purpose, Runtime, Transport};
use crate::policy::classify::{Observation, Reply, RpcErrorInfo, TransportFailure};
use crate::time::Instant;

/// The chain id that stands for "connection refused" (`refuse_chain_checks`).
const REFUSE: &str = "refuse";

/// One scripted behaviour of an endpoint.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// HTTP 200 with this `result`.
    Answer(&'static str),
    /// HTTP 200 with a JSON-RPC error.
    RpcError(i64, &'static str),
    /// This HTTP status with a non-JSON body and an optional Retry-After.
    Status(u16, Option<&'static str>),
    /// Never answers; the attempt times out.
    Hang,
    /// Connection refused at once.
    Refuse,
    /// The inner behaviour after a delay (a timeout still wins).
    Slow(Duration, Box<Behaviour>),
}

/// A transport whose endpoints follow scripts on the simulated clock.
pub struct ScriptedTransport {
    runtime: SimRuntime,
    scripts: RefCell<Vec<Vec<Behaviour>>>,
    chain_ids: RefCell<Vec<&'static str>>,
    chain_check_delays: RefCell<Vec<Duration>>,
    log: RefCell<Vec<(usize, Instant)>>,
    chain_checks: RefCell<Vec<usize>>,
    batches: RefCell<Vec<usize>>,
    /// Endpoints that answer batches with this status and no JSON.
    batch_refusals: RefCell<Vec<(usize, u16)>>,
    exchanges: RefCell<Vec<usize>>,
}

impl ScriptedTransport {
    /// One script per endpoint; an empty script means "answer `0x1`".
    pub fn new(runtime: &SimRuntime, scripts: Vec<Vec<Behaviour>>) -> Self {
        let chain_ids = RefCell::new(vec!["0x1"; scripts.len()]);
        let chain_check_delays = RefCell::new(vec![Duration::ZERO; scripts.len()]);
        ScriptedTransport {
            runtime: runtime.clone(),
            scripts: RefCell::new(scripts),
            chain_ids,
            chain_check_delays,
            log: RefCell::default(),
            chain_checks: RefCell::default(),
            batches: RefCell::default(),
            batch_refusals: RefCell::default(),
            exchanges: RefCell::default(),
        }
    }

    /// Makes `endpoint` answer `eth_chainId` with `id` (default `0x1`).
    pub fn set_chain_id(&self, endpoint: usize, id: &'static str) {
        if let Some(slot) = self.chain_ids.borrow_mut().get_mut(endpoint) {
            *slot = id;
        }
    }

    /// Makes `endpoint` never answer its chain-id checks (a node hung from the start).
    pub fn hang_chain_checks(&self, endpoint: usize) {
        self.set_chain_id(endpoint, "");
    }

    /// Makes `endpoint` refuse the connections of its chain-id checks at once.
    pub fn refuse_chain_checks(&self, endpoint: usize) {
        self.set_chain_id(endpoint, REFUSE);
    }

    /// Makes `endpoint` answer its chain-id checks after `delay` (a timeout still wins).
    pub fn delay_chain_checks(&self, endpoint: usize, delay: Duration) {
        if let Some(slot) = self.chain_check_delays.borrow_mut().get_mut(endpoint) {
            *slot = delay;
        }
    }

    /// How many chain-id checks `endpoint` received.
    pub fn chain_checks(&self, endpoint: usize) -> usize {
        self.chain_checks.borrow().iter().filter(|&&e| e == endpoint).count()
    }

    /// Makes `endpoint` answer JSON-RPC batches with `status` and a body
    /// that is no JSON, serving nothing: 400 refuses them, 200 is an HTML page.
    pub fn refuse_batches(&self, endpoint: usize, status: u16) {
        self.batch_refusals.borrow_mut().push((endpoint, status));
    }

    /// How many `[eth_chainId, call]` batches `endpoint` was sent (refused ones too).
    pub fn batches(&self, endpoint: usize) -> usize {
        self.batches.borrow().iter().filter(|&&e| e == endpoint).count()
    }

    /// How many HTTP exchanges `endpoint` had: lone checks, requests and
    /// batches (a batch's check and call are one exchange).
    pub fn exchanges(&self, endpoint: usize) -> usize {
        self.exchanges.borrow().iter().filter(|&&e| e == endpoint).count()
    }

    /// How many attempts `endpoint` received.
    pub fn calls(&self, endpoint: usize) -> usize {
        self.log.borrow().iter().filter(|(e, _)| *e == endpoint).count()
    }

    /// Every attempt as (endpoint, start time in ms).
    pub fn log(&self) -> Vec<(usize, u64)> {
        self.log.borrow().iter().map(|(e, t)| (*e, t.since_epoch().as_millis() as u64)).collect()
    }

    /// Replaces the script of `endpoint` (a node dies or recovers).
    pub fn set(&self, endpoint: usize, script: Vec<Behaviour>) {
        if let Some(slot) = self.scripts.borrow_mut().get_mut(endpoint) {
            *slot = script;
        }
    }

    fn next_behaviour(&self, endpoint: usize) -> Behaviour {
        let mut scripts = self.scripts.borrow_mut();
        match scripts.get_mut(endpoint) {
            Some(script) if script.len() > 1 => script.remove(0),
            Some(script) => script.first().cloned().unwrap_or(Behaviour::Answer("0x1")),
            None => Behaviour::Refuse,
        }
    }
}

impl Transport for ScriptedTransport {
    type Payload = String;
    type Call = ();

    async fn send(&self, _call: &(), target: AttemptTarget) -> Observation<String> {
        self.exchanges.borrow_mut().push(target.endpoint);
        match target.purpose {
            Purpose::ChainId => self.check(target).await,
            Purpose::Request => self.request(target).await,
            Purpose::CheckedRequest => self.checked_request(target).await,
        }
    }
}

impl ScriptedTransport {
    /// `[eth_chainId, call]` in one exchange: the check, then the call, on
    /// one timeout; a failure of either is the exchange's (a node that
    /// refuses batches answers its status and counts nothing).
    async fn checked_request(&self, target: AttemptTarget) -> Observation<String> {
        self.batches.borrow_mut().push(target.endpoint);
        let refusal = self.batch_refusals.borrow().iter().find(|(e, _)| *e == target.endpoint).map(|&(_, s)| s);
        if let Some(status) = refusal {
            return Observation::Http { status, retry_after: None, reply: Reply::NotJson };
        }
        let began = self.runtime.now();
        let check = match self.check(target).await {
            Observation::Http { reply, .. } => reply,
            failed => return failed,
        };
        let timeout = target.timeout.saturating_sub(self.runtime.now().saturating_since(began));
        match self.request(AttemptTarget { timeout, ..target }).await {
            Observation::Http { status: 200, reply: call @ (Reply::Result(_) | Reply::Error(_)), .. } => {
                let items = super::batch_text(&[Some(check), Some(call)]);
                Observation::Http { status: 200, retry_after: None, reply: Reply::Result(items) }
            }
            failed => failed,
        }
    }

    async fn check(&self, target: AttemptTarget) -> Observation<String> {
        self.chain_checks.borrow_mut().push(target.endpoint);
        let id = self.chain_ids.borrow().get(target.endpoint).copied().unwrap_or("0x1");
        if id == REFUSE {
            return Observation::Transport(TransportFailure::ConnectionRefused);
        }
        let delay = self.chain_check_delays.borrow().get(target.endpoint).copied().unwrap_or_default();
        if id.is_empty() || delay >= target.timeout {
            self.runtime.sleep(target.timeout).await;
            return Observation::Transport(TransportFailure::Timeout);
        }
        if !delay.is_zero() {
            self.runtime.sleep(delay).await;
        }
        Observation::Http { status: 200, retry_after: None, reply: Reply::Result(id.to_string()) }
    }

    async fn request(&self, target: AttemptTarget) -> Observation<String> {
        self.log.borrow_mut().push((target.endpoint, self.runtime.now()));
        let mut behaviour = self.next_behaviour(target.endpoint);
        let mut spent = Duration::ZERO;
        while let Behaviour::Slow(delay, inner) = behaviour {
            spent += delay;
            behaviour = *inner;
        }
        if matches!(behaviour, Behaviour::Hang) || spent >= target.timeout {
            self.runtime.sleep(target.timeout).await;
            return Observation::Transport(TransportFailure::Timeout);
        }
        self.runtime.sleep(spent).await;
        let http = |status, retry_after: Option<&str>, reply| Observation::Http {
            status,
            retry_after: retry_after.map(str::to_string),
            reply,
        };
        match behaviour {
            Behaviour::Answer(v) => http(200, None, Reply::Result(v.to_string())),
            Behaviour::RpcError(code, message) => http(
                200,
                None,
                Reply::Error(RpcErrorInfo {
                    code: Some(code),
                    message: message.into(),
                    data: None,
                    backoff_hint: None,
                }),
            ),
            Behaviour::Status(status, retry_after) => http(status, retry_after, Reply::NotJson),
            Behaviour::Refuse => Observation::Transport(TransportFailure::ConnectionRefused),
            Behaviour::Hang | Behaviour::Slow(..) => Observation::Transport(TransportFailure::Timeout),
        }
    }
}
