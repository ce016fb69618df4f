//! A signed transaction goes only to nodes of the chain it was signed for
//! (`Call::signed_chain`): without `chainId`, a send that comes first
//! names the relayer's chain, so a wrong-chain node listed first is
//! checked and disabled instead of getting the bytes; with the relayer on
//! another chain, nothing is sent.
#![allow(clippy::result_large_err)]

use super::tests::{harness, opts};
use super::*;
use crate::error::StopReason;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::Transport;

fn send_signed_for(h: &super::tests::Harness, chain: u64) -> Result<Success<String>, Failure<String>> {
    let call = Call { signed_chain: Some(chain), ..Call::new("eth_sendRawTransaction") };
    h.rt.block_on(h.pipeline.execute(&h.rt, call, |t| h.net.send(&(), t), &|_| {})).unwrap()
}

#[test]
fn without_chain_id_a_send_first_names_the_chain_and_skips_a_wrong_chain_node() {
    let mut raw = opts();
    raw.pool.strategy = crate::pool::options::Strategy::Priority;
    let h = harness(vec![vec![Answer("0xwrong")], vec![Answer("0xhash")]], raw);
    h.net.set_chain_id(0, "0x5"); // listed first, on chain 5
    let sent = send_signed_for(&h, 1).expect("sent to the node of chain 1");
    assert_eq!(sent.endpoint, 1);
    assert_eq!(h.net.calls(0), 0, "the chain-5 node got its chain check only, never the signed bytes");
    assert!(h.net.exchanges(0) >= 1, "it was checked");
    assert_eq!(h.pipeline.with_router(|r| r.serving_chain()), Some(1));
}

#[test]
fn a_send_signed_for_another_chain_than_the_relayers_is_not_sent_at_all() {
    let mut raw = opts();
    raw.pool.chain_id = Some(1);
    let h = harness(vec![vec![Answer("0xhash")]], raw);
    let refused = send_signed_for(&h, 5).unwrap_err();
    assert_eq!((refused.reason, refused.attempts.len()), (StopReason::NoEndpoint, 0));
    assert_eq!(h.net.exchanges(0), 0, "nothing went out, not even a chain check");
    assert!(send_signed_for(&h, 1).is_ok(), "its own chain's transactions go as ever");
}
