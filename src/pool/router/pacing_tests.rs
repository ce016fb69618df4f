//! The recovery pacer's line after a total outage, on explicit instants.

use std::time::Duration;

use super::tests::{at, req, router};
use super::*;

#[test]
fn after_a_total_outage_held_requests_take_the_pacers_turns_oldest_first() {
    let mut r = router(2, Strategy::Priority);
    r.pacer.borrow_mut().recovery = Some(crate::pool::outage::Recovery::start(10.0, at(0))); // 13/s
    let tried = [false, false];
    let since = |ms| RouteRequest { since: Some(at(ms)), ..req(&tried) };
    let old = r.pace_turn(at(100));
    let _young = r.pace_turn(at(900));
    // A token is there at 1 s; a request that began after the oldest held one waits its turn.
    let waits = r.select(at(1000), &since(900), (0.5, 0.5));
    let next_turn = at(1000) + Duration::from_secs_f64(1.0 / 13.0);
    assert_eq!(waits, Selection::Wait { until: Some(next_turn), quota: false, paced: true }, "one pacing interval");
    assert!(matches!(r.select(at(1000), &since(100), (0.5, 0.5)), Selection::Reserved(_)), "the oldest goes");
    drop(old); // served: out of the line
    assert!(matches!(r.select(at(1100), &since(900), (0.5, 0.5)), Selection::Reserved(_)), "then the next");
    let head_poll = req(&tried); // no place in the line: paced, never ordered
    assert!(matches!(r.select(at(1101), &head_poll, (0.5, 0.5)), Selection::Wait { paced: true, .. }));
    assert_eq!(r.pacer.borrow().oldest_held(), Some(at(900)));
}
