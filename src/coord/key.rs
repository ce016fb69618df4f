//! Keys for shared state: a hash of what identifies an endpoint or a quota
//! group, so the key itself carries no secret (a URL or header may hold an
//! API key) and a store outside the process may see it.

use alloy_primitives::keccak256;

use crate::options::EndpointSpec;
use crate::policy::quota::QuotaConfig;

/// 16 hex digits of keccak-256 over `parts` (each length-prefixed, so
/// `("ab", "c")` and `("a", "bc")` differ).
fn digest(parts: &[&[u8]]) -> String {
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend_from_slice(&(part.len() as u64).to_le_bytes());
        bytes.extend_from_slice(part);
    }
    let hash = keccak256(&bytes);
    hash[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// What makes an endpoint the same one for every member: its URL's
/// identity and the headers sent (an API key may travel in a header).
/// `None` for a wrapped provider (no URL: nothing says two are the same).
pub fn endpoint_key(spec: &EndpointSpec) -> Option<String> {
    let identity = spec.url.identity();
    if identity.is_empty() {
        return None;
    }
    let mut headers: Vec<String> =
        spec.headers.iter().map(|(name, value)| format!("{}:{value}", name.to_ascii_lowercase())).collect();
    headers.sort();
    let joined = headers.join("\n");
    Some(format!("e:{}", digest(&[identity.as_bytes(), joined.as_bytes()])))
}

/// The tuning of a quota group as bytes: members must agree on it to share.
fn tuning(config: &QuotaConfig) -> Vec<u8> {
    let numbers = [
        config.cu_per_second,
        config.burst,
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

/// A quota group's key: its name (empty for an endpoint's implicit group),
/// the keys of its member endpoints (a name alone could be reused by an
/// unrelated relayer for another key) and its tuning. `None` when a member
/// has no key (a wrapped provider).
pub fn group_key(name: &str, members: &[&EndpointSpec], config: &QuotaConfig) -> Option<String> {
    let mut keys = members.iter().map(|spec| endpoint_key(spec)).collect::<Option<Vec<String>>>()?;
    if keys.is_empty() {
        return None;
    }
    keys.sort();
    let joined = keys.join(",");
    Some(format!("q:{}", digest(&[name.as_bytes(), joined.as_bytes(), &tuning(config)])))
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
        assert_eq!(Some(a.clone()), endpoint_key(&spec("HTTPS://ETH.EXAMPLE/v2/SECRETKEY/")), "same identity");
        assert!(!a.contains("SECRET") && !a.contains("example"), "{a}");
        assert_ne!(Some(a.clone()), endpoint_key(&spec("https://eth.example/v2/OTHERKEY")));
        let mut with_header = spec("https://eth.example/v2/SECRETKEY");
        with_header.headers.push(("X-Api-Key".into(), "k1".into()));
        assert_ne!(Some(a), endpoint_key(&with_header), "a header can carry the key");
        let mut same_header = spec("https://eth.example/v2/SECRETKEY");
        same_header.headers.push(("x-api-key".into(), "k1".into()));
        assert_eq!(endpoint_key(&with_header), endpoint_key(&same_header), "header names have no case");
    }

    #[test]
    fn groups_share_only_with_the_same_name_members_and_tuning() {
        let (a, b) = (spec("http://127.0.0.1:1"), spec("http://127.0.0.1:2"));
        let plan = QuotaConfig { cu_per_second: 1500.0, ..QuotaConfig::default() };
        let key = group_key("alchemy", &[&a, &b], &plan).unwrap();
        assert_eq!(Some(key.clone()), group_key("alchemy", &[&b, &a], &plan), "member order does not matter");
        assert_ne!(Some(key.clone()), group_key("infura", &[&a, &b], &plan));
        assert_ne!(Some(key.clone()), group_key("alchemy", &[&a], &plan));
        let other = QuotaConfig { cu_per_second: 1000.0, ..plan };
        assert_ne!(Some(key), group_key("alchemy", &[&a, &b], &other));
        let provider = EndpointSpec::from_url(EndpointUrl::labelled("provider"), 0);
        assert_eq!(group_key("alchemy", &[&a, &provider], &plan), None);
        assert_eq!(endpoint_key(&provider), None);
    }
}
