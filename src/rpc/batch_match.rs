//! Matching a batch reply to its requests by id, as a pure function: a
//! node may answer in any order, leave items out, repeat ids or add ids
//! that were never asked. The first answer for an id counts; everything
//! unknown is ignored; an item without an answer stays unmatched (and
//! fails on its own).

/// For each requested id (in request order), the index of the reply that
/// answers it, if any. `reply_ids[k]` is the `id` of reply `k` (`None` when
/// it has no numeric id).
pub fn match_replies(request_ids: &[f64], reply_ids: &[Option<f64>]) -> Vec<Option<usize>> {
    let mut matched: Vec<Option<usize>> = vec![None; request_ids.len()];
    for (k, id) in reply_ids.iter().enumerate() {
        let Some(id) = id.filter(|id| id.is_finite()) else { continue };
        if let Some(pos) = request_ids.iter().position(|&r| r == id) {
            if matched[pos].is_none() {
                matched[pos] = Some(k);
            }
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn out_of_order_missing_duplicated_and_foreign_ids() {
        let got = match_replies(&[1.0, 2.0, 3.0], &[Some(3.0), Some(1.0), Some(1.0), Some(99.0), None]);
        assert_eq!(got, vec![Some(1), None, Some(0)]);
        assert_eq!(match_replies(&[1.0], &[Some(f64::NAN)]), vec![None]);
    }

    proptest! {
        /// Whatever a node sends back: every match points at a reply with
        /// that id, the first such reply, and no reply answers two items.
        #[test]
        fn matches_are_first_exact_and_exclusive(
            n in 0usize..20,
            replies in proptest::collection::vec(proptest::option::of(-3i32..25), 0..40),
        ) {
            let ids: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let reply_ids: Vec<Option<f64>> = replies.iter().map(|r| r.map(f64::from)).collect();
            let matched = match_replies(&ids, &reply_ids);
            prop_assert_eq!(matched.len(), n);
            let mut used = std::collections::BTreeSet::new();
            for (pos, m) in matched.iter().enumerate() {
                match m {
                    Some(k) => {
                        prop_assert_eq!(reply_ids[*k], Some(ids[pos]));
                        prop_assert!(reply_ids[..*k].iter().all(|r| *r != Some(ids[pos])), "the first answer counts");
                        prop_assert!(used.insert(*k));
                    }
                    None => prop_assert!(reply_ids.iter().all(|r| *r != Some(ids[pos]))),
                }
            }
        }
    }
}
