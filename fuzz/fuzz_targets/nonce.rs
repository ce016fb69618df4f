//! Any sequence of nonce-book operations: a nonce is never handed out
//! while in use or after it was settled, and the lowest live nonce is
//! always the smallest broadcast one.
#![no_main]
use std::collections::BTreeSet;

use breakwater_rpc::tx::nonce::NonceBook;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u32, Vec<(u8, u8)>)| {
    let (start, ops) = input;
    let mut book = NonceBook::default();
    book.init(start.into());
    let (mut in_use, mut live, mut consumed) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (op, pick) in ops.into_iter().take(500) {
        let choose = |set: &BTreeSet<u64>| set.iter().nth(pick as usize % set.len().max(1)).copied();
        match op % 6 {
            0 | 1 => {
                let n = book.allocate().expect("ready");
                assert!(!consumed.contains(&n) && in_use.insert(n), "nonce {n} handed out twice");
            }
            2 => {
                if let Some(n) = choose(&in_use) {
                    book.mark_live(n);
                    live.insert(n);
                }
            }
            3 => {
                if let Some(n) = choose(&in_use) {
                    let released = book.release(n).is_ok();
                    assert_eq!(released, !live.contains(&n));
                    if released {
                        in_use.remove(&n);
                    }
                }
            }
            4 => {
                if let Some(n) = choose(&live) {
                    book.settle(n);
                    live.remove(&n);
                    in_use.remove(&n);
                    consumed.insert(n);
                }
            }
            _ => {
                if let Some(n) = choose(&live) {
                    book.abandon(n);
                    live.remove(&n);
                    in_use.remove(&n);
                }
            }
        }
        assert_eq!(book.lowest_live(), live.first().copied());
    }
});
