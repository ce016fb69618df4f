use std::time::Duration;

use super::*;

fn wire(gate: u32, max_size: usize, wait_ms: u64) -> WireBatch {
    WireBatch::new(WireBatchConfig { max_size, wait: Duration::from_millis(wait_ms), gate })
}

#[test]
fn a_lone_attempt_never_waits_and_attempts_queue_only_past_the_gate() {
    let mut w = wire(2, 100, 0);
    assert_eq!(w.offer(true), Offer::Send);
    assert_eq!(w.offer(true), Offer::Send);
    assert_eq!(w.offer(true), Offer::Queue { flush: false });
    assert_eq!(w.offer(true), Offer::Queue { flush: false });
    assert_eq!((w.in_flight(), w.queued()), (2, 2));
    // An exchange comes back: the two queued go as one batch, in flight again.
    assert_eq!(w.ended(), 2);
    assert_eq!((w.in_flight(), w.queued()), (2, 0));
    assert_eq!(w.ended(), 0);
    assert_eq!(w.ended(), 0);
    assert_eq!(w.in_flight(), 0);
    assert_eq!(w.offer(true), Offer::Send, "calm again: alone");
}

#[test]
fn what_is_not_batchable_goes_alone_even_past_the_gate() {
    let mut w = wire(1, 100, 0);
    assert_eq!(w.offer(true), Offer::Send);
    assert_eq!(w.offer(false), Offer::Send, "a send, the chain check, an abortable call");
    assert_eq!(w.in_flight(), 2);
}

#[test]
fn a_full_queue_goes_at_once_and_a_flush_takes_at_most_the_limit() {
    let mut w = wire(1, 3, 0);
    assert_eq!(w.offer(true), Offer::Send);
    assert_eq!(w.offer(true), Offer::Queue { flush: false });
    assert_eq!(w.offer(true), Offer::Queue { flush: false });
    assert_eq!(w.offer(true), Offer::Queue { flush: true });
    assert_eq!(w.flush(), 3);
    for _ in 0..5 {
        let _ = w.offer(true);
    }
    assert_eq!(w.queued(), 5);
    assert_eq!(w.ended(), 3, "at most the limit");
    assert_eq!(w.queued(), 2);
}

#[test]
fn with_a_wait_every_batchable_attempt_queues_for_its_timer_unless_the_queue_fills() {
    let mut w = wire(4, 3, 10);
    assert_eq!(w.offer(true), Offer::Queue { flush: false }, "viem's wait: even alone");
    assert_eq!(w.flush(), 1, "its timer fired");
    assert_eq!(w.offer(true), Offer::Queue { flush: false });
    assert_eq!(w.ended(), 0, "an exchange ending does not cut the wait short");
    assert_eq!(w.offer(false), Offer::Send);
}

#[test]
fn too_large_halves_the_limit_and_a_refusal_sends_alone_for_good() {
    let mut w = wire(1, 100, 0);
    w.too_large(40);
    assert_eq!(w.limit(), 20);
    w.too_large(50);
    assert_eq!(w.limit(), 20, "never raised by a larger failure");
    w.too_large(3);
    assert_eq!(w.limit(), 1);
    assert!(!w.batches());
    let _ = w.offer(true);
    assert_eq!(w.offer(true), Offer::Send, "a limit of one: alone");
    let mut r = wire(1, 100, 0);
    r.refuse();
    let _ = r.offer(true);
    assert_eq!(r.offer(true), Offer::Send);
    assert!(!r.batches());
}

#[test]
fn requeued_and_dequeued_items_are_counted() {
    let mut w = wire(1, 100, 0);
    let _ = w.offer(true);
    let _ = w.offer(true);
    let _ = w.offer(true);
    w.dequeued(1);
    assert_eq!(w.queued(), 1);
    w.requeue(4);
    assert_eq!(w.ended(), 5);
    w.dequeued(9);
    assert_eq!(w.queued(), 0);
}

#[test]
fn batch_too_large_messages_are_recognised() {
    for m in ["batch too large", "Batch size limit exceeded", "too many requests in batch", "batch limit 100 exceeded"]
    {
        assert!(says_batch_too_large(m), "{m}");
    }
    for m in ["execution reverted", "too many requests", "limit exceeded", "header not found"] {
        assert!(!says_batch_too_large(m), "{m}");
    }
}

#[test]
fn a_batchs_answer_decides_whether_its_items_go_again() {
    let mut w = wire(1, 64, 0);
    assert_eq!(w.answered(64, 413, false, None), BatchAnswer::Again);
    assert_eq!(w.limit(), 32);
    assert_eq!(w.answered(32, 200, false, Some("batch size limit exceeded")), BatchAnswer::Again);
    assert_eq!(w.limit(), 16);
    assert!(w.batches());
    assert_eq!(w.answered(16, 200, true, None), BatchAnswer::PerItem);
    assert_eq!(w.answered(16, 429, false, None), BatchAnswer::Every);
    assert_eq!(w.answered(16, 503, false, Some("busy")), BatchAnswer::Every);
    assert_eq!(w.limit(), 16, "a 429 or a 503 is no news of the batch size");
    assert!(w.batches());
    assert_eq!(w.answered(16, 200, false, Some("batch requests are not supported")), BatchAnswer::Again);
    assert!(!w.batches(), "refused: alone from now on");
    let mut one = wire(1, 64, 0);
    assert_eq!(one.answered(8, 200, false, None), BatchAnswer::Again, "one object (or no JSON) for a batch");
    assert!(!one.batches());
}

#[test]
fn items_cut_off_teach_the_limit_the_node_answered_and_only_they_go_again() {
    use ItemReply::*;
    let mut w = wire(1, 64, 0);
    // Replies of their own (results or errors) never go again and teach nothing.
    assert_eq!(w.items_answered(3, 3, &[(Answered, 0), (Answered, 0), (Answered, 0)]), [false, false, false]);
    assert_eq!(w.limit(), 64);
    // A node limited to 10 answers 10 of 64 and says "too large" for the rest: the limit is 10.
    let mut items = vec![(Answered, 0); 10];
    items.extend(vec![(TooLarge, 0); 54]);
    let again = w.items_answered(64, 64, &items);
    assert_eq!((w.limit(), again.iter().filter(|&&a| a).count()), (10, 54));
    assert!(again[..10].iter().all(|&a| !a));
    // Truncated (fewer replies than items): the same.
    let mut w = wire(1, 64, 0);
    let mut items = vec![(Answered, 0); 12];
    items.extend(vec![(Missing, 0); 20]);
    assert_eq!(w.items_answered(32, 12, &items).iter().filter(|&&a| a).count(), 20);
    assert_eq!(w.limit(), 12);
    // Nothing answered: half the batch.
    let mut w = wire(1, 64, 0);
    assert!(w.items_answered(8, 8, &[(TooLarge, 0); 8]).iter().all(|&a| a));
    assert_eq!(w.limit(), 4);
    // Bounded.
    assert_eq!(w.items_answered(4, 4, &[(TooLarge, MAX_AGAIN); 4]), [false; 4]);
}

#[test]
fn one_item_left_out_of_a_full_answer_is_that_items_failure_not_a_limit() {
    use ItemReply::*;
    let mut w = wire(1, 64, 0);
    for _ in 0..20 {
        let mut items = vec![(Answered, 0); 63];
        items.push((Missing, 0));
        // 64 entries (one with somebody else's id, or a duplicate): not a cut-off answer.
        assert_eq!(w.items_answered(64, 64, &items), [false; 64]);
    }
    assert_eq!(w.limit(), 64, "a node that always leaves one read out keeps batching the others");
    assert!(w.batches());
}

#[test]
fn a_client_error_for_the_whole_batch_is_a_refusal_but_not_the_keys_or_the_rates() {
    for status in [400, 404, 405, 415, 422, 501] {
        let mut w = wire(1, 64, 0);
        assert_eq!(w.answered(8, status, false, None), BatchAnswer::Again, "{status}");
        assert!(!w.batches(), "{status}: alone from now on");
    }
    let mut w = wire(1, 64, 0);
    assert_eq!(w.answered(8, 400, false, Some("batch size too large")), BatchAnswer::Again);
    assert_eq!((w.limit(), w.batches()), (4, true), "a 400 saying too large halves the limit");
    for status in [401, 403, 408, 429, 500, 502, 503] {
        let mut w = wire(1, 64, 0);
        assert_eq!(w.answered(8, status, false, None), BatchAnswer::Every, "{status}");
        assert!(w.batches(), "{status}: no news of batches");
    }
}

#[test]
fn a_wait_is_told_only_when_set() {
    assert_eq!(wire(4, 10, 0).wait(), None);
    assert_eq!(wire(4, 10, 5).wait(), Some(Duration::from_millis(5)));
}
