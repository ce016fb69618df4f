//! Batch replies with any ids (missing, duplicated, foreign, NaN, in any
//! order): each item gets at most one reply, with its own id, the first.
#![no_main]
use breakwater_rpc::rpc::batch_match::match_replies;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u8, Vec<Option<f64>>)| {
    let (n, reply_ids) = input;
    let ids: Vec<f64> = (0..usize::from(n % 64)).map(|i| (i * 7 + 1) as f64).collect();
    let matched = match_replies(&ids, &reply_ids);
    assert_eq!(matched.len(), ids.len());
    let mut used = std::collections::BTreeSet::new();
    for (pos, m) in matched.iter().enumerate() {
        if let Some(k) = m {
            assert_eq!(reply_ids[*k], Some(ids[pos]));
            assert!(used.insert(*k), "one reply answered two items");
        }
    }
});
