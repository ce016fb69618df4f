//! A retry after a 429 in a group paced by its plan is not drawn from the
//! retry budget: it waits for the group and pays the plan again, so it adds
//! no load past the plan (the budget guards nodes from retry storms). Other
//! retries still are.
#![allow(clippy::result_large_err)]

use super::tests::{harness_with, opts, Harness};
use super::*;
use crate::config::RawOptions;
use crate::policy::quota::QuotaConfig;
use crate::policy::RetryBudgetConfig;
use crate::runtime::scripted::{Behaviour, Behaviour::*};

/// One node on a 100 CU/s key; a retry budget with one token and no refill.
fn one_token(script: Vec<Behaviour>) -> Harness {
    let mut raw = RawOptions { deadline_ms: Some(10_000.0), ..opts() };
    raw.budget = Some(RetryBudgetConfig { ratio: 0.0, min_per_second: 0.0, burst: 1.0 });
    raw.pool.check_chain = false;
    raw.pool.hedge = None;
    raw.pool.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() })];
    harness_with(vec![script], raw, |specs| specs[0].quota_group = Some("key".into()))
}

#[test]
fn retries_after_429s_in_a_paced_group_leave_the_retry_budget_alone() {
    let h = one_token(vec![Status(429, Some("1")), Status(429, Some("1")), Status(429, Some("1")), Answer("0x1")]);
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!((ok.attempts.len(), h.net.calls(0)), (4, 4), "three 429s waited out, then answered");
    assert!(h.now_ms() >= 3000, "each retry waited for the key's Retry-After: {} ms", h.now_ms());
    // The budget's one token is still there for a node's failure.
    h.net.set(0, vec![Status(503, None), Answer("0x2")]);
    assert_eq!(h.run("eth_getBalance").unwrap().attempts.len(), 2);
    h.net.set(0, vec![Status(503, None), Answer("0x3")]);
    assert_eq!(h.run("eth_getBalance").unwrap_err().reason, StopReason::Budget, "503 retries still draw it");
}
