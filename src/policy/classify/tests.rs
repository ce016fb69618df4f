//! The classification table against signals real nodes and providers send.

use std::time::Duration;

use super::*;

fn rpc(method: &str, status: u16, code: Option<i64>, message: &str) -> Verdict {
    let obs: Observation<()> = Observation::Http {
        status,
        retry_after: None,
        reply: Reply::Error(RpcErrorInfo { code, message: message.into(), data: None, backoff_hint: None }),
    };
    Classifier::default().classify(method, &obs, Duration::ZERO)
}

fn http(status: u16, retry_after: Option<&str>, reply: Reply<()>) -> Verdict {
    let obs = Observation::Http { status, retry_after: retry_after.map(str::to_string), reply };
    Classifier::default().classify("eth_blockNumber", &obs, Duration::from_secs(784_111_777))
}

#[test]
fn json_rpc_signals_from_real_nodes() {
    use ErrorClass::*;
    let call = "eth_call";
    let send = "eth_sendRawTransaction";
    let cases: &[(&str, Option<i64>, &str, ErrorClass)] = &[
        (call, Some(3), "execution reverted: user error", Fatal),
        (call, Some(-32000), "execution reverted", Fatal),
        ("eth_estimateGas", Some(-32000), "gas required exceeds allowance (30000000)", Fatal),
        (
            call,
            Some(-32603),
            "Error: VM Exception while processing transaction: reverted with reason string 'x'",
            Fatal,
        ),
        (call, Some(-32015), "Reverted 0x08c379a0", Fatal),
        (call, Some(-32602), "invalid argument 0: hex string without 0x prefix", Fatal),
        (
            call,
            Some(-32000),
            "err: insufficient funds for gas * price + value: address 0x1 have 0 want 1 (supplied gas 1)",
            Fatal,
        ),
        ("eth_getBalance", Some(-32000), "header not found", Transient),
        ("eth_getBlockByNumber", Some(-39001), "Unknown block", Transient),
        ("eth_getLogs", Some(-32602), "block range extends beyond current head block", Transient),
        ("eth_foo", Some(-32601), "the method eth_foo does not exist/is not available", Capability),
        (
            "eth_getLogs",
            Some(-32005),
            "query returned more than 10000 results. Try with this block range [0x1, 0x2].",
            Capability,
        ),
        ("eth_getLogs", Some(-32602), "query exceeds max block range 100000", Capability),
        ("eth_getBalance", Some(-32000), "missing trie node abc (path ) state 0x1 is not available", Capability),
        ("eth_getBalance", Some(-32603), "state at block #5 is pruned", Capability),
        ("eth_getBlockByNumber", Some(4444), "pruned history unavailable", Capability),
        ("eth_blockNumber", Some(-32005), "project ID request rate exceeded", RateLimited),
        ("eth_blockNumber", Some(429), "Your app has exceeded its compute units per second capacity", RateLimited),
        ("eth_blockNumber", Some(-32007), "100/second request limit reached - reduce calls per second", RateLimited),
        ("eth_blockNumber", Some(-32012), "credits limited to 50/sec", RateLimited),
        ("eth_blockNumber", Some(-32005), "", RateLimited),
        ("eth_blockNumber", Some(-32603), "internal error", Transient),
        // execution-apis fixtures (geth wording): deterministic input errors, tried once.
        ("eth_simulateV1", Some(-38014), "block number in sequence did not increase", Fatal),
        ("eth_simulateV1", Some(-38021), "block timestamps are not in order", Fatal),
        ("eth_simulateV1", Some(-38026), "too many blocks", Capability),
        ("eth_simulateV1", Some(-32000), "account 0x1 is not a precompile", Fatal),
        ("debug_traceBlockByNumber", Some(-32000), "genesis is not traceable", Fatal),
        (call, Some(-32603), "err: nonce has max value: address 0x1, nonce: 18446744073709551615", Fatal),
        // Lag answers stay retryable elsewhere.
        ("eth_getLogs", Some(-32602), "block range extends beyond current head block: requested 9, head 8", Transient),
        // Keys refused, in the words providers use (any HTTP status).
        ("eth_blockNumber", Some(-32600), "Must be authenticated!", Unauthorized),
        ("eth_blockNumber", Some(-32000), "invalid project id", Unauthorized),
        ("eth_blockNumber", Some(-40100), "Unauthorized", Unauthorized),
        ("eth_blockNumber", Some(-32000), "Unspecified origin not on whitelist.", Unauthorized),
        // A wallet's "not authorized by the user" is the user's answer, not a key.
        ("eth_accounts", Some(4100), "The requested account and/or method has not been authorized by the user.", Fatal),
        ("eth_blockNumber", Some(-32000), "something new and unexpected", Transient),
        ("eth_blockNumber", None, "", Transient),
        (send, Some(-32000), "already known", AlreadyKnown),
        (send, Some(-32000), "Known transaction: 0xabc", AlreadyKnown),
        (send, Some(-32003), "transaction already imported", AlreadyKnown),
        (send, Some(-32000), "ALREADY_EXISTS: already known", AlreadyKnown),
        (send, Some(-32000), "nonce too low: next nonce 5, tx nonce 4", NonceTooLow),
        (send, Some(-32001), "Nonce too low", NonceTooLow),
        (send, Some(-32003), "nonce too low", NonceTooLow),
        (send, Some(-32000), "replacement transaction underpriced", ReplacementUnderpriced),
        (send, Some(-32000), "INTERNAL_ERROR: could not replace existing tx", ReplacementUnderpriced),
        (send, Some(-32000), "txpool is full", Transient),
        (send, Some(-32000), "insufficient funds for gas * price + value: balance 0, tx cost 1, overshot 1", Fatal),
        (send, Some(-32000), "intrinsic gas too low: gas 100, minimum needed 21000", Fatal),
        (send, Some(-32004), "Upfront cost exceeds account balance", Fatal),
    ];
    for (method, code, message, class) in cases {
        let v = rpc(method, 200, *code, message);
        assert_eq!(v.class, *class, "{method} {code:?} {message:?} → rule {}", v.rule);
    }
}

#[test]
fn only_answers_no_rule_knows_are_retried_once_elsewhere() {
    let unknown = rpc("eth_call", 200, Some(-32000), "something new and unexpected");
    assert_eq!(
        (unknown.class, unknown.once_elsewhere, unknown.rule.as_ref()),
        (ErrorClass::Transient, true, "fallback.unknown")
    );
    assert!(!unknown.health_failure, "the node answered: its breaker must not count it");
    assert!(rpc("eth_call", 200, None, "").once_elsewhere);
    for (code, message) in [
        (-32603, "internal error"),
        (-32000, "request timed out"),
        (-32002, "resource unavailable"),
        (-32016, "x"),
        (-32000, "header not found"),
        (-32000, "upstream connect error"),
    ] {
        let v = rpc("eth_call", 200, Some(code), message);
        assert_eq!((v.class, v.once_elsewhere), (ErrorClass::Transient, false), "{code} {message}");
    }
}

#[test]
fn status_401_and_403_refuse_the_key_whatever_the_body() {
    let body = Reply::Error(RpcErrorInfo {
        code: Some(-32600),
        message: "Must be authenticated!".into(),
        data: None,
        backoff_hint: None,
    });
    let v = http(401, None, body);
    assert_eq!((v.class, v.rule.as_ref(), v.health_failure), (ErrorClass::Unauthorized, "http.auth", false));
    let body = Reply::Error(RpcErrorInfo {
        code: Some(3),
        message: "execution reverted".into(),
        data: None,
        backoff_hint: None,
    });
    assert_eq!(http(403, None, body).class, ErrorClass::Unauthorized);
}

#[test]
fn unknown_transaction_is_not_already_known() {
    assert_ne!(rpc("eth_sendRawTransaction", 200, Some(-32000), "unknown transaction").class, ErrorClass::AlreadyKnown);
}

#[test]
fn send_rules_only_apply_to_sends() {
    assert_eq!(rpc("eth_call", 200, Some(-32000), "already known").class, ErrorClass::Transient);
}

#[test]
fn health_failures_only_for_infrastructure() {
    assert!(rpc("eth_call", 200, Some(-32603), "internal error").health_failure);
    for (code, msg) in
        [(3, "execution reverted"), (-32005, "rate limit"), (-32601, "method not found"), (-32000, "header not found")]
    {
        assert!(!rpc("eth_call", 200, Some(code), msg).health_failure, "{msg}");
    }
}

#[test]
fn http_statuses() {
    use ErrorClass::*;
    for (status, class) in [
        (429, RateLimited),
        (402, RateLimited),
        (408, Transient),
        (500, Transient),
        (502, Transient),
        (503, Transient),
        (504, Transient),
        (401, Unauthorized),
        (403, Unauthorized),
        (404, Transient),
        (413, Capability),
        (400, Fatal),
        (415, Fatal),
    ] {
        assert_eq!(http(status, None, Reply::NotJson).class, class, "HTTP {status}");
    }
    assert!(http(402, None, Reply::NotJson).long_horizon);
}

#[test]
fn a_redirect_left_unfollowed_is_an_endpoint_out_of_date_not_a_garbled_body() {
    for status in [301, 302, 303, 307, 308] {
        let v = http(status, None, Reply::NotJson);
        assert_eq!(
            (v.class, v.rule.as_ref(), v.health_failure),
            (ErrorClass::Transient, "http.redirect", true),
            "HTTP {status}"
        );
    }
}

#[test]
fn status_429_wins_over_the_body_and_retry_after_is_read() {
    let body = Reply::Error(RpcErrorInfo {
        code: Some(-32000),
        message: "execution reverted".into(),
        data: None,
        backoff_hint: None,
    });
    let v = http(429, Some("7"), body);
    assert_eq!((v.class, v.retry_after), (ErrorClass::RateLimited, Some(Duration::from_secs(7))));
    let v = http(503, Some("Sun, 06 Nov 1994 08:50:07 GMT"), Reply::NotJson);
    assert_eq!((v.class, v.retry_after), (ErrorClass::Transient, Some(Duration::from_secs(30))));
}

#[test]
fn backoff_hints_from_the_body() {
    let with_hint = Reply::Error(RpcErrorInfo {
        code: Some(-32005),
        message: "daily request count exceeded, request rate limited".into(),
        data: None,
        backoff_hint: Some(Duration::from_secs(2)),
    });
    let v = http(200, None, with_hint);
    assert_eq!((v.class, v.retry_after, v.long_horizon), (ErrorClass::RateLimited, Some(Duration::from_secs(2)), true));
    let v = rpc("eth_call", 200, Some(-32016), "rate limit exceeded, try again in 300ms");
    assert_eq!(v.class, ErrorClass::RateLimited);
}

#[test]
fn malformed_replies_are_transient_health_failures() {
    for reply in [Reply::NotJson, Reply::WrongId, Reply::Malformed] {
        let v = http(200, None, reply);
        assert_eq!(v.class, ErrorClass::Transient);
        assert!(v.health_failure);
    }
    assert_eq!(http(200, None, Reply::TooLarge).class, ErrorClass::Capability);
    let inexact = http(200, None, Reply::InexactNumber);
    assert_eq!((inexact.class, inexact.health_failure), (ErrorClass::Capability, false));
    assert_eq!(http(200, None, Reply::Result(())).class, ErrorClass::Success);
    assert_eq!(http(502, None, Reply::Result(())).class, ErrorClass::Transient);
}

#[test]
fn transport_failures_and_replay_safety() {
    let c = Classifier::default();
    let t =
        |method: &str, f: TransportFailure| c.classify::<()>(method, &Observation::Transport(f), Duration::ZERO).class;
    assert_eq!(t("eth_blockNumber", TransportFailure::Timeout), ErrorClass::Transient);
    assert_eq!(
        t("eth_sendRawTransaction", TransportFailure::Timeout),
        ErrorClass::Transient,
        "same bytes are replay-safe"
    );
    assert_eq!(t("eth_sendTransaction", TransportFailure::Timeout), ErrorClass::OutcomeUnknown);
    assert_eq!(t("eth_sendTransaction", TransportFailure::ConnectionReset), ErrorClass::OutcomeUnknown);
    assert_eq!(
        t("eth_sendTransaction", TransportFailure::ConnectionRefused),
        ErrorClass::Transient,
        "nothing was delivered"
    );
    assert_eq!(t("eth_blockNumber", TransportFailure::Aborted), ErrorClass::Fatal);
}

#[test]
fn user_rules_come_first_and_need_a_condition() {
    let c = Classifier::with_rules(vec![
        UserRule { code: Some(-32099), message: None, status: None, method: None, class: ErrorClass::Fatal },
        UserRule {
            code: None,
            message: Some("Header Not Found".into()),
            status: None,
            method: Some("eth_call".into()),
            class: ErrorClass::Fatal,
        },
        UserRule {
            code: None,
            message: None,
            status: None,
            method: Some("eth_blockNumber".into()),
            class: ErrorClass::Fatal,
        },
    ]);
    let obs = |code, msg: &str| Observation::<()>::Http {
        status: 200,
        retry_after: None,
        reply: Reply::Error(RpcErrorInfo { code: Some(code), message: msg.into(), data: None, backoff_hint: None }),
    };
    assert_eq!(c.classify("eth_getBalance", &obs(-32099, "x"), Duration::ZERO).rule, "user[0]");
    assert_eq!(c.classify("eth_call", &obs(-32000, "header not found"), Duration::ZERO).class, ErrorClass::Fatal);
    assert_eq!(
        c.classify("eth_getBalance", &obs(-32000, "header not found"), Duration::ZERO).class,
        ErrorClass::Transient
    );
    // A rule with only a method would classify everything; it is ignored.
    assert_eq!(c.classify("eth_blockNumber", &obs(-32603, "x"), Duration::ZERO).class, ErrorClass::Transient);
}

#[test]
fn class_names_round_trip() {
    for name in [
        "success",
        "transient",
        "rateLimited",
        "capability",
        "fatal",
        "alreadyKnown",
        "nonceTooLow",
        "replacementUnderpriced",
        "outcomeUnknown",
        "unauthorized",
    ] {
        assert_eq!(ErrorClass::parse(name).map(ErrorClass::as_str), Some(name));
    }
    assert_eq!(ErrorClass::parse("nope"), None);
}

#[test]
fn what_another_attempt_could_change() {
    use ErrorClass::*;
    let retryable: Vec<_> = ErrorClass::ALL.into_iter().filter(|c| c.retryable()).collect();
    assert_eq!(retryable, vec![Transient, RateLimited, Capability, Unauthorized]);
    let anywhere: Vec<_> = ErrorClass::ALL.into_iter().filter(|c| c.retryable_anywhere()).collect();
    assert_eq!(anywhere, vec![Transient, RateLimited], "capability gaps and refused keys need another endpoint");
}

#[test]
fn only_refused_and_unresolved_connections_are_undelivered() {
    let transport = |f: TransportFailure| {
        let obs: Observation<()> = Observation::Transport(f);
        Classifier::default().classify("eth_sendRawTransaction", &obs, Duration::ZERO).undelivered
    };
    assert!(transport(TransportFailure::ConnectionRefused));
    assert!(transport(TransportFailure::Dns));
    for maybe in [TransportFailure::Timeout, TransportFailure::ConnectionReset, TransportFailure::Network("x".into())] {
        assert!(!transport(maybe), "the bytes may have arrived");
    }
    assert!(!rpc("eth_call", 200, Some(-32000), "x").undelivered);
}

#[test]
fn every_code_in_the_table_is_recognised_by_itself() {
    // An independent list (not read from the table), so a code mistyped in
    // the table (a dropped minus sign) fails here.
    let call: &[(i64, &str)] = &[
        (429, "quota.codes"),
        (-32007, "quota.codes"),
        (-32012, "quota.codes"),
        (-32029, "quota.codes"),
        (-32055, "quota.codes"),
        (3, "revert.code"),
        (-32015, "revert.code"),
        (-39001, "lag.code"),
        (-32601, "capability.codes"),
        (-32604, "capability.codes"),
        (4200, "capability.codes"),
        (4444, "capability.codes"),
        (-40100, "auth.codes"),
        (-38026, "simulate.limit"),
        (-32602, "fatal.codes"),
        (-32600, "fatal.codes"),
        (-32700, "fatal.codes"),
        (-32006, "fatal.codes"),
        (4001, "fatal.codes"),
        (4100, "fatal.codes"),
        (-32005, "fallback.limit"),
        (-32002, "fallback.server"),
        (-32016, "fallback.server"),
        (-32017, "fallback.server"),
        (4900, "fallback.server"),
        (4901, "fallback.server"),
    ];
    for &(code, rule) in call {
        assert_eq!(rpc("eth_call", 200, Some(code), "").rule, rule, "{code}");
    }
    for code in -38025..=-38010 {
        assert_eq!(rpc("eth_call", 200, Some(code), "").rule, "simulate.input", "{code}");
    }
    for code in [-32003, -32004, -32006, -32009] {
        assert_eq!(rpc("eth_sendRawTransaction", 200, Some(code), "").rule, "send.rejected_codes", "{code}");
    }
    assert_eq!(rpc("eth_call", 200, Some(-32003), "").rule, "fallback.unknown", "a send's code, on a call");
}

#[test]
fn only_a_rate_limit_that_names_a_long_horizon_is_one() {
    assert!(!rpc("eth_call", 200, Some(429), "too many requests").long_horizon, "a plain limit");
    assert!(rpc("eth_call", 200, Some(-32005), "daily request count exceeded").long_horizon);
    assert!(!rpc("eth_call", 200, Some(3), "execution reverted: daily limit").long_horizon, "not a limit at all");
}

#[test]
fn a_user_rule_binds_to_its_method_and_only_transient_ones_count_against_health() {
    let rule = |method: Option<&str>, class| UserRule {
        code: Some(-32099),
        message: None,
        status: None,
        method: method.map(str::to_string),
        class,
    };
    let c = Classifier::with_rules(vec![rule(Some("eth_call"), ErrorClass::Fatal), rule(None, ErrorClass::Transient)]);
    let obs: Observation<()> = Observation::Http {
        status: 200,
        retry_after: None,
        reply: Reply::Error(RpcErrorInfo {
            code: Some(-32099),
            message: "custom".into(),
            data: None,
            backoff_hint: None,
        }),
    };
    let on_call = c.classify("eth_call", &obs, Duration::ZERO);
    assert_eq!((on_call.class, on_call.rule.as_ref(), on_call.health_failure), (ErrorClass::Fatal, "user[0]", false));
    let elsewhere = c.classify("eth_getBalance", &obs, Duration::ZERO);
    assert_eq!(
        (elsewhere.class, elsewhere.rule.as_ref()),
        (ErrorClass::Transient, "user[1]"),
        "rule 0 is eth_call's only"
    );
    assert!(elsewhere.health_failure, "a transient user rule counts against the endpoint's health");
}

#[test]
fn bodies_that_are_not_an_answer_say_which_way_they_are_not() {
    assert_eq!(http(200, None, Reply::WrongId).rule, "body.wrong_id");
    assert_eq!(http(200, None, Reply::NotJson).rule, "body.not_json");
    assert_eq!(http(200, None, Reply::Malformed).rule, "body.malformed");
}

#[test]
fn a_user_rule_on_a_status_matches_that_status_only() {
    let c = Classifier::with_rules(vec![UserRule {
        code: None,
        message: None,
        status: Some(503),
        method: None,
        class: ErrorClass::Fatal,
    }]);
    let status = |s: u16| {
        let obs: Observation<()> = Observation::Http { status: s, retry_after: None, reply: Reply::NotJson };
        c.classify("eth_call", &obs, Duration::ZERO)
    };
    assert_eq!(status(503).rule, "user[0]");
    assert_ne!(status(500).rule, "user[0]", "another status is the table's");
}
