//! Sorting the short lists the relayer keeps: a pool's endpoints, one
//! round's heads, the secrets to mask, a lease's last 32 charges. An
//! insertion sort, stable, one small loop per use: the standard library's
//! sorts are built for long slices and weigh 2–4 KB of wasm for each
//! element type and order they are used with, and nine of them were
//! about 20 KB of the module every app loads. Quadratic: for lists of
//! tens, never for anything a request or a node can make long.

/// Sorts `v` so that no element is `less` than one before it; elements
/// neither less than the other keep their order.
pub fn sort_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && less(&v[j], &v[j - 1]) {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Sorts `v` by `key`, stable.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a) < key(b));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_as_the_standard_stable_sort(v in proptest::collection::vec((0u8..8, any::<u16>()), 0..40)) {
            let mut ours = v.clone();
            sort_by_key(&mut ours, |&(k, _)| k);
            let mut theirs = v;
            theirs.sort_by_key(|&(k, _)| k);
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn floats_by_a_total_order() {
        let mut v = [2.0, f64::NAN, -1.0, 0.5];
        sort_by(&mut v, |a, b| a.total_cmp(b).is_lt());
        assert_eq!(v[..3], [-1.0, 0.5, 2.0]);
        assert!(v[3].is_nan());
    }
}
