//! The pool-wide schedule of early probes during a total outage
//! (`pool::outage`): one probe at a time, jittered, doubling.

use std::time::Duration;

use crate::policy::breaker::BreakerConfig;
use crate::time::Instant;

/// The pool-wide schedule of early probes during a total outage: one probe
/// in flight at a time for the whole pool (not per endpoint, or N endpoints
/// would multiply the load of a dead fleet by N), spaced by a jittered,
/// doubling interval, rotating over endpoints by their own probe times.
#[derive(Clone, Copy, Debug)]
pub struct OutageProbes {
    /// No early probe before this.
    pub next_at: Instant,
    spacing: Duration,
    base: Duration,
    max: Duration,
    jitter: f64,
    /// The pool's one early probe is out.
    pub in_flight: bool,
}

impl OutageProbes {
    /// A schedule for breakers configured as `breaker`.
    pub fn new(breaker: &BreakerConfig, now: Instant) -> Self {
        OutageProbes {
            next_at: now,
            spacing: breaker.early_probe_base,
            base: breaker.early_probe_base,
            // Capped low: a dead fleet costs one probe every few seconds per
            // client, and a fleet that comes back is noticed within seconds.
            max: breaker.open_base.min(breaker.early_probe_base * 16),
            // Wide jitter: clients that lost the whole fleet at the same
            // moment must not all come back at the same moment.
            jitter: breaker.jitter.max(0.5),
            in_flight: false,
        }
    }

    /// The first spacing of a total outage's early probes.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The spacing before the next probe after this one.
    pub fn spacing(&self) -> Duration {
        self.spacing
    }

    /// Records a granted probe and schedules the next one.
    pub fn granted(&mut self, now: Instant, draw: f64) {
        self.in_flight = true;
        let factor = 1.0 - self.jitter + 2.0 * self.jitter * crate::policy::bound(draw, 0.0, 1.0);
        let spacing = Duration::try_from_secs_f64(self.spacing.as_secs_f64() * factor).unwrap_or(self.spacing);
        self.next_at = now + spacing;
        self.spacing = self.spacing.saturating_mul(2).min(self.max);
    }

    /// The outage is over: next time starts from the base spacing.
    pub fn reset(&mut self) {
        self.spacing = self.base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::at;

    #[test]
    fn an_outage_probes_next_time_is_jittered_uniformly_around_its_spacing() {
        // The jitter is at least ±50 %, whatever the breaker's.
        for (draw, next) in [(0.0, 250), (0.5, 500), (0.75, 625)] {
            let mut o = OutageProbes::new(&BreakerConfig { jitter: 0.0, ..BreakerConfig::default() }, at(0));
            o.granted(at(1000), draw);
            assert_eq!(o.next_at, at(1000 + next), "draw {draw}");
            assert!(o.in_flight);
        }
        let mut o = OutageProbes::new(&BreakerConfig { jitter: 0.8, ..BreakerConfig::default() }, at(0));
        o.granted(at(0), 0.0);
        assert_eq!(o.next_at, at(100), "a wider jitter of the breaker's is kept");
    }

    #[test]
    fn outage_probes_double_their_spacing_up_to_a_low_cap() {
        let mut o = OutageProbes::new(&BreakerConfig { jitter: 0.0, ..BreakerConfig::default() }, at(0));
        let mut spacings = Vec::new();
        for _ in 0..8 {
            spacings.push(o.spacing().as_millis());
            o.granted(at(0), 0.5);
        }
        assert_eq!(spacings, vec![500, 1000, 2000, 4000, 8000, 8000, 8000, 8000]);
        o.reset();
        assert_eq!(o.spacing().as_millis(), 500);
    }
}
