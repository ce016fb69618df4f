//! What the pipeline's events name: a rate limit names the quota group
//! that rests, by the name the options gave it, and no name for an
//! endpoint's own implicit group.

use super::tests::{harness_with, opts};
use super::*;
use crate::policy::quota::QuotaConfig;
use crate::runtime::scripted::Behaviour::*;

/// The groups the `RateLimited` events of one request named.
fn limited_groups(grouped: bool) -> Vec<Option<String>> {
    let mut raw = opts();
    if grouped {
        raw.pool.quota_groups = vec![("alchemy".to_string(), QuotaConfig::default())];
    }
    let h = harness_with(vec![vec![Status(429, Some("1")), Answer("0x1")]], raw, |specs| {
        if grouped {
            specs[0].quota_group = Some("alchemy".into());
        }
    });
    h.run("eth_blockNumber").unwrap();
    let events = h.events.borrow();
    events
        .iter()
        .filter_map(|e| match e {
            PipelineEvent::RateLimited { endpoint: 0, group, .. } => Some(group.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_rate_limit_names_the_endpoints_quota_group_and_none_for_its_own() {
    assert_eq!(limited_groups(true), vec![Some("alchemy".to_string())]);
    assert_eq!(limited_groups(false), vec![None]);
}
