//! Keys for shared state: 64 bits of a hash of what identifies an endpoint
//! or a quota group, so the key itself carries no secret (a URL or header
//! may hold an API key) and a store outside the process may see it.

use alloy_primitives::keccak256;

use crate::options::EndpointSpec;
use crate::policy::breaker::BreakerConfig;
use crate::policy::quota::QuotaConfig;
use crate::policy::RetryBudgetConfig;

/// The first 64 bits of keccak-256 over `parts` (each length-prefixed, so
/// `("ab", "c")` and `("a", "bc")` differ).
fn digest(parts: &[&[u8]]) -> u64 {
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend_from_slice(&(part.len() as u64).to_le_bytes());
        bytes.extend_from_slice(part);
    }
    let hash = keccak256(&bytes);
    u64::from_le_bytes(hash[..8].try_into().unwrap_or_default())
}

/// Digests combined without regard to order (a wrapping sum: the items are
/// themselves hashes, so no order or pairing can be forged into a collision
/// short of a 64-bit one).
fn unordered(items: impl Iterator<Item = u64>) -> u64 {
    items.fold(0, u64::wrapping_add)
}

/// What makes an endpoint the same one for every member: its URL's
/// identity and the headers sent (an API key may travel in a header).
/// `None` for a wrapped provider (no URL: nothing says two are the same).
pub fn endpoint_key(spec: &EndpointSpec) -> Option<u64> {
    let identity = spec.url.identity();
    if identity.is_empty() {
        return None;
    }
    let headers = unordered(
        spec.headers.iter().map(|(name, value)| digest(&[name.to_ascii_lowercase().as_bytes(), value.as_bytes()])),
    );
    Some(digest(&[b"endpoint", identity.as_bytes(), &headers.to_le_bytes()]))
}

/// The tuning of a quota group as bytes: members must agree on it to share.
fn tuning(config: &QuotaConfig) -> Vec<u8> {
    let numbers = [
        config.cu_per_second,
        // An absent burst (0) is one second of the plan: the same bucket as a member that names it.
        if config.burst > 0.0 { config.burst } else { config.cu_per_second },
        config.share,
        config.decrease,
        config.increase,
        config.min_fraction,
        config.stable_window.as_secs_f64(),
        config.cooldown_base.as_secs_f64(),
        config.cooldown_max.as_secs_f64(),
        config.long_ejection.as_secs_f64(),
    ];
    numbers.iter().flat_map(|n| n.to_bits().to_le_bytes()).collect()
}

/// The key of an endpoint's breaker: the endpoint and the breaker's tuning
/// (members tuned differently judge the same node by their own rules).
pub fn breaker_key(endpoint: u64, config: &BreakerConfig) -> u64 {
    let numbers = [
        f64::from(config.consecutive_failures),
        config.failure_rate,
        config.window.as_secs_f64(),
        f64::from(config.min_samples),
        config.open_base.as_secs_f64(),
        config.open_max.as_secs_f64(),
        config.jitter,
        f64::from(config.probe_permits),
        f64::from(config.close_after),
        config.observe.as_secs_f64(),
        config.early_probe_base.as_secs_f64(),
        config.reset_after.as_secs_f64(),
    ];
    let bytes: Vec<u8> = numbers.iter().flat_map(|n| n.to_bits().to_le_bytes()).collect();
    digest(&[b"breaker", &endpoint.to_le_bytes(), &bytes])
}

/// What identifies one fleet of endpoints (the same set, in any order),
/// from its members' keys: `None` when one has no key (a wrapped provider)
/// or there is none. The pacer and head-poll rounds are keyed by it.
pub fn fleet_key(endpoints: &[Option<u64>]) -> Option<u64> {
    let keys = endpoints.iter().copied().collect::<Option<Vec<u64>>>()?;
    (!keys.is_empty()).then(|| unordered(keys.into_iter()))
}

/// The key of the recovery pacing shared by members of one fleet: they
/// come back from a total outage together, so one pacer holds their
/// requests together.
pub fn pacer_key(fleet: u64) -> u64 {
    digest(&[b"pacer", &fleet.to_le_bytes()])
}

/// The key of the head-poll rounds shared by members of one fleet polling
/// at the same `interval_ms`.
pub fn head_rounds_key(fleet: u64, interval_ms: f64) -> u64 {
    digest(&[b"heads", &fleet.to_le_bytes(), &interval_ms.to_bits().to_le_bytes()])
}

/// The key of a realm retry budget: members tuned alike share one.
pub fn budget_key(config: &RetryBudgetConfig) -> u64 {
    let numbers = [config.ratio, config.min_per_second, config.burst];
    let bytes: Vec<u8> = numbers.iter().flat_map(|n| n.to_bits().to_le_bytes()).collect();
    digest(&[b"budget", &bytes])
}

/// A quota group's key: its name (empty for an endpoint's implicit group),
/// the keys of its member endpoints (`endpoint_key`; a name alone could be
/// reused by an unrelated relayer for another key) and its tuning. `None`
/// when a member has no key (a wrapped provider) or there is none.
pub fn group_key(name: &str, members: &[Option<u64>], config: &QuotaConfig) -> Option<u64> {
    let members = fleet_key(members)?;
    Some(digest(&[b"quota", name.as_bytes(), &members.to_le_bytes(), &tuning(config)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::EndpointUrl;

    fn spec(url: &str) -> EndpointSpec {
        EndpointSpec::from_url(EndpointUrl::parse(url, "u").unwrap(), 0)
    }

    #[test]
    fn the_same_endpoint_gets_the_same_key_and_the_key_holds_no_secret() {
        let a = endpoint_key(&spec("https://eth.example/v2/SECRETKEY")).unwrap();
        assert_eq!(Some(a), endpoint_key(&spec("HTTPS://ETH.EXAMPLE/v2/SECRETKEY/")), "same identity");
        assert_ne!(Some(a), endpoint_key(&spec("https://eth.example/v2/OTHERKEY")));
        let mut with_header = spec("https://eth.example/v2/SECRETKEY");
        with_header.headers.push(("X-Api-Key".into(), "k1".into()));
        assert_ne!(Some(a), endpoint_key(&with_header), "a header can carry the key");
        let mut same_header = spec("https://eth.example/v2/SECRETKEY");
        same_header.headers.push(("x-api-key".into(), "k1".into()));
        assert_eq!(endpoint_key(&with_header), endpoint_key(&same_header), "header names have no case");
        let mut two = spec("https://eth.example/v2/SECRETKEY");
        two.headers = vec![("a".into(), "1".into()), ("b".into(), "2".into())];
        let mut swapped = spec("https://eth.example/v2/SECRETKEY");
        swapped.headers = vec![("b".into(), "2".into()), ("a".into(), "1".into())];
        assert_eq!(endpoint_key(&two), endpoint_key(&swapped), "header order does not matter");
        swapped.headers = vec![("a".into(), "2".into()), ("b".into(), "1".into())];
        assert_ne!(endpoint_key(&two), endpoint_key(&swapped), "values stay with their names");
    }

    #[test]
    fn groups_share_only_with_the_same_name_members_and_tuning() {
        let (a, b) = (endpoint_key(&spec("http://127.0.0.1:1")), endpoint_key(&spec("http://127.0.0.1:2")));
        let plan = QuotaConfig { cu_per_second: 1500.0, ..QuotaConfig::default() };
        let key = group_key("alchemy", &[a, b], &plan).unwrap();
        assert_eq!(Some(key), group_key("alchemy", &[b, a], &plan), "member order does not matter");
        assert_ne!(Some(key), group_key("infura", &[a, b], &plan));
        assert_ne!(Some(key), group_key("alchemy", &[a], &plan));
        assert_ne!(Some(key), a);
        let other = QuotaConfig { cu_per_second: 1000.0, ..plan };
        assert_ne!(Some(key), group_key("alchemy", &[a, b], &other));
        let provider = EndpointSpec::from_url(EndpointUrl::labelled("provider"), 0);
        assert_eq!(group_key("alchemy", &[a, endpoint_key(&provider)], &plan), None);
        assert_eq!(fleet_key(&[a, b]), fleet_key(&[b, a]), "a fleet is a set");
        assert_eq!((fleet_key(&[a, None]), fleet_key(&[])), (None, None));
        assert_eq!(endpoint_key(&provider), None);
    }

    #[test]
    fn breakers_and_budgets_are_shared_only_under_the_same_tuning() {
        let node = endpoint_key(&spec("http://127.0.0.1:1")).unwrap();
        let other = endpoint_key(&spec("http://127.0.0.1:2")).unwrap();
        let tuning = BreakerConfig::default();
        assert_eq!(breaker_key(node, &tuning), breaker_key(node, &BreakerConfig::default()));
        assert_ne!(breaker_key(node, &tuning), breaker_key(other, &tuning));
        let quicker = BreakerConfig { consecutive_failures: 1, ..tuning };
        assert_ne!(breaker_key(node, &tuning), breaker_key(node, &quicker));
        let budget = RetryBudgetConfig::default();
        assert_eq!(budget_key(&budget), budget_key(&RetryBudgetConfig::default()));
        assert_ne!(budget_key(&budget), budget_key(&RetryBudgetConfig { ratio: 0.1, ..budget }));
    }
}
