//! Reservations coming back: with the attempt's verdict (breaker, quota,
//! latency, slow start and refused keys learn from it) or unused (only the
//! slot, probe permit and outage-probe flag are given back).

use std::time::Duration;

use super::{Recovery, Reservation, Router, RouterEvent, REFUSED_FOR};
use crate::coord::news::News;
use crate::policy::breaker::BreakerState;
use crate::policy::{ErrorClass, Verdict};
use crate::rpc::methods::MethodClass;
use crate::time::Instant;

impl Router {
    /// An attempt came back (`answered` at that instant, or not).
    fn attempt_ended(&mut self, r: &Reservation, answered: Option<Instant>) {
        if let Some(record) = self.chains.get(r.endpoint) {
            record.attempt_ended(r.class as usize, answered);
        }
        if let Some(out) = self.attempts_out.get_mut(r.endpoint).and_then(|o| o.get_mut(r.class as usize)) {
            *out = out.saturating_sub(1);
        }
    }

    /// Gives an unused reservation back (the attempt never ran, or was
    /// dropped unfinished): its slot and probe permit, and the outage probe
    /// flag; nothing is learned.
    pub fn release(&mut self, r: &Reservation) {
        if r.outage_probe {
            self.outage.in_flight = false;
        }
        if r.check_chain {
            self.chain_check_ended(r.endpoint);
        }
        self.attempt_ended(r, None);
        if let Some(ep) = self.endpoints.get_mut(r.endpoint) {
            ep.in_flight = ep.in_flight.saturating_sub(1);
            ep.breaker.borrow_mut().on_neutral(r.probe);
        }
        self.tell_probe_ended(r);
    }

    /// Gives a reservation back with the attempt's verdict.
    pub fn complete(
        &mut self,
        now: Instant,
        r: &Reservation,
        verdict: &Verdict,
        class: MethodClass,
        elapsed: Duration,
        draw: f64,
    ) -> Vec<RouterEvent> {
        let mut events = Vec::new();
        if r.check_chain {
            self.chain_check_ended(r.endpoint);
        }
        if r.outage_probe {
            self.outage.in_flight = false;
            if matches!(verdict.class, ErrorClass::Success | ErrorClass::AlreadyKnown) {
                let mut pacer = self.pacer.borrow_mut();
                pacer.end_outage(now);
                if pacer.recovery.is_none() {
                    pacer.recovery = Some(Recovery::start(pacer.arrivals.rate_so_far(now), now));
                }
                // The others may be back too: each gets its half-open probe soon.
                let soon = now + self.outage.base();
                for (i, ep) in self.endpoints.iter().enumerate() {
                    if i != r.endpoint {
                        ep.breaker.borrow_mut().hasten(soon);
                    }
                }
            }
        }
        self.attempt_ended(r, verdict.is_reply().then_some(now));
        let Some(ep) = self.endpoints.get_mut(r.endpoint) else { return events };
        // Whatever the verdict (a timeout may have arrived too), it counts from now in a plan kept per second.
        self.groups[ep.group].quota.borrow_mut().answered(r.charged_at, r.cost, now);
        ep.in_flight = ep.in_flight.saturating_sub(1);
        let transition = match verdict.class {
            ErrorClass::Success | ErrorClass::AlreadyKnown => {
                ep.successes += 1;
                ep.tail[class as usize].observe(elapsed.as_secs_f64() * 1000.0);
                if let Some(record) = self.chains.get(r.endpoint) {
                    record.observe_latency(class as usize, elapsed.as_secs_f64() * 1000.0);
                    // Other realms hedge a node they never measured on what we know.
                    let key = self.endpoint_keys.get(r.endpoint).copied().flatten();
                    if let Some((endpoint, ms)) = key.zip(record.tail_to_tell(class as usize, now)) {
                        self.news.push(News::Tail { endpoint, class: class as u8, ms });
                    }
                }
                // The meter remembers the healthy rate slow start returns to: it
                // must not learn while the warm-up cap holds the rate down, or
                // the cap (a share of the meter) and the meter chase each
                // other down to the floor (found by the soak test).
                if ep.breaker.borrow_mut().state(now) == BreakerState::Closed && ep.warm.is_none() {
                    ep.meter.record(now);
                }
                ep.observe_latency(class, elapsed);
                self.pacer.borrow_mut().served(now);
                let mut quota = self.groups[ep.group].quota.borrow_mut();
                quota.on_accepted(now, r.cost);
                quota.on_success(now, draw);
                drop(quota);
                ep.breaker.borrow_mut().on_success(now, r.probe)
            }
            ErrorClass::RateLimited => {
                ep.breaker.borrow_mut().on_neutral(r.probe);
                let until = self.groups[ep.group].quota.borrow_mut().on_limited_sent(
                    now,
                    Instant::from_epoch(now.since_epoch().saturating_sub(elapsed)),
                    verdict.retry_after,
                    verdict.long_horizon,
                    draw,
                );
                events.push(RouterEvent::RateLimited {
                    endpoint: r.endpoint,
                    group: ep.group,
                    until,
                    long_horizon: verdict.long_horizon,
                });
                None
            }
            ErrorClass::Unauthorized => {
                ep.breaker.borrow_mut().on_neutral(r.probe);
                ep.refused_until = Some(now + REFUSED_FOR);
                None
            }
            _ if verdict.health_failure => {
                ep.failures += 1;
                ep.observe_latency(class, elapsed);
                ep.breaker.borrow_mut().on_failure(now, r.probe, draw)
            }
            _ => {
                ep.breaker.borrow_mut().on_neutral(r.probe);
                None
            }
        };
        if verdict.class != ErrorClass::RateLimited {
            if let Some(after) = verdict.retry_after {
                ep.rest_until = ep.rest_until.max(now + after.min(self.max_retry_after));
            }
        }
        if let Some(t) = transition {
            // Slow start begins with the first proof of life (HalfOpen), so
            // the probes that close the breaker are paced too.
            if t.to == BreakerState::HalfOpen || (t.to == BreakerState::Closed && ep.warm.is_none()) {
                ep.begin_warmup(now);
            }
            if !matches!(t.to, BreakerState::Open { .. }) {
                self.outage.reset();
            }
            events.push(RouterEvent::Breaker { endpoint: r.endpoint, transition: t });
        }
        // The probe's end first, then its verdict (a new opening holds the
        // other realms' probes again: `breaker/fleet_probe.rs`).
        self.tell_probe_ended(r);
        self.tell(&events, now);
        events
    }

    /// In a realm, what other realms of the origin should hear of these
    /// events (`coord::news`): a group's cooldown, a breaker's opening, a
    /// node found back.
    fn tell(&mut self, events: &[RouterEvent], now: Instant) {
        for event in events {
            let news = match *event {
                RouterEvent::RateLimited { group: g, until, .. } if until > now => {
                    let Some(group) = self.group_keys.get(g).copied().flatten() else { continue };
                    self.news.extend(News::told_by_group(group, &mut self.groups[g].quota.borrow_mut()));
                    Some(News::Cooldown { group, until })
                }
                RouterEvent::Breaker { endpoint, transition } => {
                    let Some(breaker) = self.breaker_keys.get(endpoint).copied().flatten() else { continue };
                    match (transition.from, transition.to) {
                        (_, BreakerState::Open { until }) => Some(News::BreakerOpen { breaker, until }),
                        // A probe got through (early, or the half-open ones that
                        // close it): realms still open on the node probe it now.
                        (BreakerState::Open { .. }, BreakerState::HalfOpen) | (_, BreakerState::Closed) => {
                            Some(News::BreakerBack { breaker, at: now })
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            self.news.extend(news);
        }
    }

    /// The news told since the last call, for the host to pass on.
    pub fn take_news(&mut self) -> Vec<News> {
        std::mem::take(&mut self.news)
    }
}
