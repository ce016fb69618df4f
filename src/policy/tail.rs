//! The slow end of an endpoint's latency, learned from its successes: what
//! hedge delays and adaptive timeouts are measured against; and its typical
//! latency, which says whether a hedge onto it could win.

/// A high-percentile latency estimate: jumps up quickly, decays slowly, so
/// it tracks the slow end of what an endpoint does, not its average.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TailLatency {
    estimate: Option<f64>,
    samples: u32,
}

impl TailLatency {
    /// Folds in one successful attempt's latency (ms).
    pub fn observe(&mut self, ms: f64) {
        if !ms.is_finite() || ms < 0.0 {
            return;
        }
        self.samples = self.samples.saturating_add(1);
        self.estimate = Some(match self.estimate {
            None => ms,
            Some(e) if ms > e => e + 0.3 * (ms - e),
            Some(e) => e + 0.02 * (ms - e),
        });
    }

    /// The estimate once at least `min_samples` were seen.
    pub fn value(&self, min_samples: u32) -> Option<f64> {
        self.estimate.filter(|_| self.samples >= min_samples)
    }
}

/// Exponentially weighted moving average with a fixed smoothing factor:
/// an endpoint's typical latency now (it follows a slowdown within a few
/// answers), beside its slow end.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ewma(Option<f64>);

impl Ewma {
    const ALPHA: f64 = 0.2;

    /// Folds in one sample.
    pub fn observe(&mut self, value: f64) {
        if !value.is_finite() {
            return;
        }
        self.0 = Some(match self.0 {
            Some(v) => v + Self::ALPHA * (value - v),
            None => value,
        });
    }

    /// The average, if any sample was seen.
    pub fn value(&self) -> Option<f64> {
        self.0
    }
}

/// Successes before an endpoint's tail latency is trusted.
pub const TRUSTED_TAIL_SAMPLES: u32 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_jumps_up_quickly_and_decays_slowly() {
        let mut t = TailLatency::default();
        assert_eq!(t.value(0), None);
        t.observe(100.0);
        assert_eq!(t.value(1), Some(100.0), "the first sample is the estimate");
        assert_eq!(t.value(2), None, "not trusted before enough samples");
        t.observe(200.0);
        assert_eq!(t.value(2), Some(130.0), "30 % of the way up");
        t.observe(30.0);
        assert_eq!(t.value(3), Some(128.0), "2 % of the way down");
        t.observe(128.0);
        assert_eq!(t.value(4), Some(128.0), "a sample at the estimate leaves it");
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            t.observe(bad);
        }
        assert_eq!(t.value(5), None, "refused samples are not counted");
        t.observe(0.0);
        assert_eq!(t.value(5).map(|v| (v * 100.0).round() / 100.0), Some(125.44), "0 ms is a sample");
    }

    #[test]
    fn the_typical_latency_follows_a_fifth_of_each_change() {
        let mut m = Ewma::default();
        assert_eq!(m.value(), None);
        m.observe(100.0);
        m.observe(f64::NAN);
        assert_eq!(m.value(), Some(100.0));
        m.observe(200.0);
        assert_eq!(m.value(), Some(120.0));
        m.observe(20.0);
        assert_eq!(m.value(), Some(100.0));
        m.observe(f64::INFINITY);
        m.observe(f64::NEG_INFINITY);
        assert_eq!(m.value(), Some(100.0), "garbage is ignored");
    }
}
