//! Retry-After values and provider backoff hints from arbitrary text:
//! never a panic, never an overflowed duration.
#![no_main]
use std::time::Duration;

use breakwater_rpc::policy::classify::retry_after::{hint_from_message, parse_http_date, parse_retry_after};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, u32)| {
    let (text, now) = input;
    let _ = parse_retry_after(text, Duration::from_secs(now.into()));
    let _ = hint_from_message(text);
    let _ = parse_http_date(text);
});
