//! Any response (transport outcome, status, Retry-After, JSON-RPC error
//! code and message, body kind) for any method: classification never
//! panics, and a huge Retry-After saturates instead of overflowing the
//! clock (every user caps it at maxRetryAfterMs).
#![no_main]
use std::time::Duration;

use breakwater_rpc::policy::classify::{Observation, Reply, RpcErrorInfo, TransportFailure};
use breakwater_rpc::policy::Classifier;
use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(arbitrary::Arbitrary, Debug)]
enum Body {
    Result,
    Error { code: Option<i64>, message: String },
    NotJson,
    WrongId,
    Malformed,
    TooLarge,
}

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    method: String,
    transport: Option<u8>,
    status: u16,
    retry_after: Option<String>,
    body: Body,
    unix_secs: u32,
}

fuzz_target!(|input: Input| {
    let observation: Observation<()> = match input.transport {
        Some(kind) => Observation::Transport(match kind % 7 {
            0 => TransportFailure::Timeout,
            1 => TransportFailure::ConnectionRefused,
            2 => TransportFailure::ConnectionReset,
            3 => TransportFailure::Dns,
            4 => TransportFailure::Aborted,
            _ => TransportFailure::Network(input.method.clone()),
        }),
        None => Observation::Http {
            status: input.status,
            retry_after: input.retry_after,
            reply: match input.body {
                Body::Result => Reply::Result(()),
                Body::Error { code, message } => {
                    Reply::Error(RpcErrorInfo { code, message, data: None, backoff_hint: None })
                }
                Body::NotJson => Reply::NotJson,
                Body::WrongId => Reply::WrongId,
                Body::Malformed => Reply::Malformed,
                Body::TooLarge => Reply::TooLarge,
            },
        },
    };
    let verdict =
        Classifier::default().classify(&input.method, &observation, Duration::from_secs(input.unix_secs.into()));
    if let Some(wait) = verdict.retry_after {
        let now = breakwater_rpc::time::Instant::from_epoch(Duration::from_secs(input.unix_secs.into()));
        assert!(now + wait >= now);
    }
});
