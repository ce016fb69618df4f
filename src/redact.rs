//! Endpoint URLs and their redacted labels.
//!
//! Provider URLs carry API keys (Infura `/v3/<key>`, Alchemy `/v2/<key>`,
//! QuickNode `/<token>/`, `?apikey=`, `user:pass@`). Those keys must never
//! reach an error message, an event, stats or a log line, because those go
//! to bug trackers and analytics. Every place that names an endpoint uses
//! its [`EndpointUrl::label`]; text that came from elsewhere (a node's error
//! message may echo the URL) goes through [`EndpointUrl::scrub`].

use crate::config_error::ConfigError;
use crate::text;

/// The mask written in place of a secret.
pub const MASK: &str = "***";

/// A validated http(s) endpoint URL with a key-free label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointUrl {
    url: String,
    label: String,
    secrets: Vec<String>,
    authorization: Option<String>,
}

impl EndpointUrl {
    /// Validates `input`; `field` names the option in the error.
    pub fn parse(input: &str, field: &str) -> Result<Self, ConfigError> {
        let url = input.trim();
        let bad = |why: &str| ConfigError::new(field, format!("not an http(s) URL: {why}"));
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("contains whitespace or control characters"));
        }
        let Some((scheme, rest)) = text::split_once(url, "://") else {
            // Named as typed (`htp:/…`, `localhost:8545`), up to its first `:`: never the rest,
            // which may hold a key. Not "missing scheme" for a misspelt one.
            let head: String =
                url.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')).collect();
            let named = text::from(url, head.len()).starts_with(':') && !head.is_empty() && head.len() <= 16;
            let why = if named {
                format!("it must start with http:// or https:// (it starts with `{head}:`)")
            } else {
                "it must start with http:// or https://".to_string()
            };
            return Err(bad(&why));
        };
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(bad("scheme must be http or https"));
        }
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = text::split_at(rest, authority_end);
        let mut secrets = Vec::new();
        let mut authorization = None;
        let host_port = match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                let (header, parts) = crate::url_credentials::basic_authorization(userinfo);
                secrets.extend(parts);
                authorization = Some(header);
                host
            }
            None => authority,
        };
        if host_port.is_empty() || host_port.starts_with(':') {
            return Err(bad("missing host"));
        }
        if let Some((_, port)) = host_port.rsplit_once(':').filter(|_| !host_port.ends_with(']')) {
            if port.parse::<u16>().is_err() {
                return Err(bad("invalid port"));
            }
        }
        let (path, query) = match tail.split_once('?') {
            Some((p, q)) => (p, Some(q.split('#').next().unwrap_or(""))),
            None => (tail.split('#').next().unwrap_or(""), None),
        };
        let mut label = format!("{scheme}://{host_port}");
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            label.push('/');
            if reads_as_route(segment) {
                label.push_str(segment);
            } else {
                // Masked segments of four characters or more are scrubbed from
                // messages too (a node may echo its URL); shorter ones are hidden
                // in the label only: scrubbing a two-letter word would garble text.
                if segment.len() >= 4 || looks_like_secret(segment) {
                    secrets.push(segment.to_string());
                }
                label.push_str(MASK);
            }
        }
        if let Some(query) = query.filter(|q| !q.is_empty()) {
            let mut names = Vec::new();
            for pair in query.split('&') {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                if !value.is_empty() {
                    secrets.push(value.to_string());
                }
                names.push(format!("{name}={MASK}"));
            }
            label.push('?');
            label.push_str(&names.join("&"));
        }
        // Longest first, so a secret that contains another is masked whole.
        crate::small_sort::sort_by(&mut secrets, longer_first);
        secrets.dedup();
        // fetch refuses URLs with credentials: they travel as a header instead.
        let url = match authorization {
            Some(_) => format!("{scheme}://{host_port}{tail}"),
            None => url.to_string(),
        };
        Ok(EndpointUrl { url, label, secrets, authorization })
    }

    /// What makes two URLs the same endpoint: scheme and host without case,
    /// the path without a trailing `/`, the query, the credentials; never
    /// the fragment (it is not sent). Empty for a wrapped provider.
    pub fn identity(&self) -> String {
        let Some((scheme, rest)) = text::split_once(&self.url, "://") else { return String::new() };
        let rest = rest.split('#').next().unwrap_or("");
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (host, tail) = text::split_at(rest, split);
        let (path, query) = tail.split_once('?').map_or((tail, None), |(p, q)| (p, Some(q)));
        let mut id =
            format!("{}://{}{}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase(), path.trim_end_matches('/'));
        if let Some(q) = query.filter(|q| !q.is_empty()) {
            id.push('?');
            id.push_str(q);
        }
        if let Some(auth) = &self.authorization {
            id.push(' ');
            id.push_str(auth);
        }
        id
    }

    /// The `Authorization` header the URL's `user:pass@` asks for, if any.
    pub fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }

    /// An endpoint without a URL (a wrapped provider object): only a label,
    /// nothing to scrub.
    pub fn labelled(label: &str) -> Self {
        EndpointUrl { url: String::new(), label: label.to_string(), secrets: Vec::new(), authorization: None }
    }

    /// The full URL, secrets included: only for the transport.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A label safe to show anywhere.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Treats `secret` (a header value, say) as something to mask too.
    pub fn add_secret(&mut self, secret: &str) {
        if secret.len() >= 4 && !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            crate::small_sort::sort_by(&mut self.secrets, longer_first);
        }
    }

    /// Replaces the label with a user-chosen one (secrets still masked).
    pub fn set_label(&mut self, label: &str) {
        let scrubbed = self.scrub(label);
        self.label = scrubbed;
    }

    /// Masks this endpoint's secrets (and its full URL) inside `text`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = if self.url.is_empty() { text.to_string() } else { text::replace(text, &self.url, &self.label) };
        for secret in &self.secrets {
            if secret.len() >= 4 {
                out = text::replace(&out, secret, MASK);
            }
        }
        out
    }
}

/// Path words that name a route, a network or a version, never a key
/// (`/v3/<key>`, `/eth-mainnet/…`, `/rpc`): a segment made of them, a
/// version (`v3`), a number (a chain id) or anything of three characters
/// or fewer is shown; every other segment is masked, however it looks
/// (`/rpc/mysecretpassword`, `/v2/shortkey`), since a key's shape cannot
/// be guessed. A `label` names an endpoint readably.
const ROUTE_WORDS: &[&str] = &[
    "rpc",
    "api",
    "jsonrpc",
    "json",
    "http",
    "https",
    "ws",
    "wss",
    "node",
    "nodes",
    "ext",
    "evm",
    "eth",
    "ethereum",
    "mainnet",
    "testnet",
    "devnet",
    "sepolia",
    "holesky",
    "hoodi",
    "goerli",
    "polygon",
    "matic",
    "amoy",
    "arbitrum",
    "arb",
    "optimism",
    "op",
    "base",
    "avalanche",
    "avax",
    "bsc",
    "bnb",
    "fantom",
    "gnosis",
    "linea",
    "scroll",
    "zksync",
    "blast",
    "mantle",
    "celo",
    "public",
    "archive",
    "full",
    "chain",
    "one",
    "nova",
    "c",
    "bc",
];

fn reads_as_route(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    let version = lower.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let number = segment.len() <= 12 && segment.bytes().all(|b| b.is_ascii_digit());
    let short = segment.len() <= 3 && segment.bytes().all(|b| b.is_ascii_alphanumeric());
    let words = lower.split(['-', '_', '.']).all(|w| ROUTE_WORDS.contains(&w));
    version || number || short || words
}

/// A path segment that is probably a key: long, URL-safe, and mixing
/// letters with digits (or very long). Short words such as `v3`, `rpc` or
/// `mainnet` stay readable.
fn looks_like_secret(segment: &str) -> bool {
    let urlsafe = segment.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let has_digit = segment.chars().any(|c| c.is_ascii_digit());
    let has_alpha = segment.chars().any(|c| c.is_ascii_alphabetic());
    (urlsafe && segment.len() >= 12 && has_digit && has_alpha) || segment.len() >= 24
}

/// Secrets longest first (then in text order), so one that contains another is masked whole.
fn longer_first(a: &String, b: &String) -> bool {
    b.len().cmp(&a.len()).then_with(|| a.cmp(b)).is_lt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_labelled_endpoint_scrubs_nothing_and_keeps_text_intact() {
        let e = EndpointUrl::labelled("my-provider");
        assert_eq!(e.label(), "my-provider");
        assert_eq!(e.scrub("error at node"), "error at node");
    }

    #[test]
    fn provider_keys_are_masked_in_labels() {
        let cases = [
            ("https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161", "https://mainnet.infura.io/v3/***"),
            (
                "https://eth-mainnet.g.alchemy.com/v2/Xy7kQm2LpZ9rT4vB8nW1cD6e",
                "https://eth-mainnet.g.alchemy.com/v2/***",
            ),
            ("https://user:s3cretpass@node.example:8545/rpc", "https://node.example:8545/rpc"),
            ("http://127.0.0.1:8545/?apikey=abc123def", "http://127.0.0.1:8545?apikey=***"),
            ("https://x.quiknode.pro/0123456789abcdef0123456789abcdef/", "https://x.quiknode.pro/***"),
            ("http://localhost:8545", "http://localhost:8545"),
            // Short or word-like keys are keys too: only route words are shown.
            ("https://mainnet.infura.io/v3/MYKEY", "https://mainnet.infura.io/v3/***"),
            ("https://eth-mainnet.g.alchemy.com/v2/shortkey", "https://eth-mainnet.g.alchemy.com/v2/***"),
            ("http://127.0.0.1:8545/rpc/mysecretpassword", "http://127.0.0.1:8545/rpc/***"),
            ("https://node.example/eth-mainnet/ext/bc/C/rpc", "https://node.example/eth-mainnet/ext/bc/C/rpc"),
            ("https://node.example/137/v1/rpc", "https://node.example/137/v1/rpc"),
        ];
        for (url, label) in cases {
            let e = EndpointUrl::parse(url, "upstreams[0]").unwrap();
            assert_eq!(e.label(), label, "{url}");
        }
    }

    #[test]
    fn identity_ignores_case_trailing_slash_and_fragment_but_not_credentials() {
        let id = |u: &str| EndpointUrl::parse(u, "u").unwrap().identity();
        assert_eq!(id("http://127.0.0.1:8545"), id("HTTP://127.0.0.1:8545/"));
        assert_eq!(id("https://LOCALHOST/rpc/?x=1#f"), id("https://localhost/rpc?x=1"));
        assert_ne!(id("https://a:b@host/"), id("https://c:d@host/"));
        assert_ne!(id("https://host/v3/aaaa"), id("https://host/v3/bbbb"));
        assert_ne!(id("https://host/?k=1"), id("https://host/?k=2"));
        assert_eq!(EndpointUrl::labelled("x").identity(), "");
    }

    #[test]
    fn a_url_without_http_says_what_it_starts_with_and_nothing_after() {
        let message = |u: &str| EndpointUrl::parse(u, "upstreams[0]").unwrap_err().to_string();
        let typo = message("htp:/eth.example/v2/SECRETKEY");
        assert!(typo.contains("must start with http:// or https:// (it starts with `htp:`)"), "{typo}");
        assert!(!typo.contains("SECRETKEY"), "{typo}");
        assert!(message("localhost:8545").contains("(it starts with `localhost:`)"));
        let bare = message("eth.example/v2/SECRETKEY");
        assert!(bare.contains("it must start with http:// or https://") && !bare.contains("SECRETKEY"), "{bare}");
        assert!(message("ftp://x").contains("scheme must be http or https"));
    }

    #[test]
    fn url_credentials_leave_the_url_for_a_basic_header() {
        let u = EndpointUrl::parse("https://alice:s3cr%40t@node.example:8545/rpc?x=1", "u").unwrap();
        assert_eq!(u.url(), "https://node.example:8545/rpc?x=1", "fetch refuses URLs with credentials");
        assert_eq!(u.authorization(), Some("Basic YWxpY2U6czNjckB0"), "alice:s3cr@t");
        let leaked = "Basic YWxpY2U6czNjckB0 alice s3cr@t s3cr%40t";
        assert_eq!(u.scrub(leaked), "Basic *** *** *** ***");
        assert_eq!(EndpointUrl::parse("https://node.example/rpc", "u").unwrap().authorization(), None);
    }

    #[test]
    fn scrub_removes_secrets_and_the_full_url_from_free_text() {
        let e = EndpointUrl::parse(
            "https://user:hunter22@mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161?k=topsecret",
            "u",
        )
        .unwrap();
        let text =
            format!("request to {} failed; key 9aa3d95b3bc440fa88ea12eaa4456161, pw hunter22, topsecret", e.url());
        let clean = e.scrub(&text);
        for secret in ["9aa3d95b3bc440fa88ea12eaa4456161", "hunter22", "topsecret"] {
            assert!(!clean.contains(secret), "{clean}");
        }
    }

    #[test]
    fn non_urls_are_config_errors_naming_the_field() {
        for bad in [
            "",
            "localhost:8545",
            "ftp://x",
            "http://",
            "http://:80",
            "http://a b",
            "http://host:notaport/",
            "https://host:99999",
        ] {
            let err = EndpointUrl::parse(bad, "upstreams[3]").unwrap_err();
            assert_eq!(err.field(), "upstreams[3]", "{bad}");
        }
    }
}
