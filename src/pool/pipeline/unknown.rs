//! Answers no classification rule recognises, from nodes that otherwise
//! answer.
//!
//! Such an answer may be transient ("the node had a hiccup") or
//! deterministic (bad input, in words our table does not know yet: the
//! execution-apis fixtures reached the node three times each). Retrying it
//! on the same node only repeats it; a second node settles the question:
//!
//! ```text
//!   first unknown answer of a request      → one retry, on an untried endpoint
//!   a second unknown answer in the request → stop (at most one such retry)
//!     … with the same code and message from another endpoint
//!                                          → stop, and remember the answer
//!   a remembered answer, in any request    → stop at once (no retry at all)
//! ```
//!
//! The memory is bounded (oldest forgotten first): answers that embed
//! addresses or numbers rarely repeat exactly, and a node that changes its
//! mind costs at most one retry per request anyway.

use std::collections::VecDeque;

use crate::policy::classify::{Observation, Reply};

/// How many deterministic answers are remembered.
const REMEMBERED: usize = 64;

/// A JSON-RPC error reduced to what identifies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    code: Option<i64>,
    message: String,
}

/// The answer in an observation (empty for anything but a JSON-RPC error).
pub fn answer_of<P>(observation: &Observation<P>) -> Answer {
    match observation {
        Observation::Http { reply: Reply::Error(e), .. } => Answer { code: e.code, message: e.message.clone() },
        _ => Answer { code: None, message: String::new() },
    }
}

/// Answers two endpoints gave alike: deterministic, never retried.
#[derive(Debug, Default)]
pub struct UnknownAnswers {
    deterministic: VecDeque<Answer>,
}

impl UnknownAnswers {
    /// Whether a request that just got `answer` from `endpoint` may retry
    /// it elsewhere. `first` is the request's earlier unknown answer (set
    /// here on the first one).
    pub fn retry_elsewhere(&mut self, first: &mut Option<(usize, Answer)>, endpoint: usize, answer: Answer) -> bool {
        if self.deterministic.contains(&answer) {
            return false;
        }
        match first {
            None => {
                *first = Some((endpoint, answer));
                true
            }
            Some((seen_at, seen)) => {
                if *seen_at != endpoint && *seen == answer {
                    if self.deterministic.len() >= REMEMBERED {
                        self.deterministic.pop_front();
                    }
                    self.deterministic.push_back(answer);
                }
                false
            }
        }
    }

    /// How many answers are remembered as deterministic.
    #[cfg(test)]
    pub fn remembered(&self) -> usize {
        self.deterministic.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: i64, message: &str) -> Answer {
        Answer { code: Some(code), message: message.into() }
    }

    #[test]
    fn one_retry_then_the_same_answer_twice_is_remembered() {
        let mut memory = UnknownAnswers::default();
        let mut first = None;
        assert!(memory.retry_elsewhere(&mut first, 0, answer(-38099, "odd input")));
        assert!(!memory.retry_elsewhere(&mut first, 1, answer(-38099, "odd input")));
        assert_eq!(memory.remembered(), 1);
        // A later request with the same answer is not retried at all.
        assert!(!memory.retry_elsewhere(&mut None, 0, answer(-38099, "odd input")));
    }

    #[test]
    fn a_different_second_answer_stops_without_learning() {
        let mut memory = UnknownAnswers::default();
        let mut first = None;
        assert!(memory.retry_elsewhere(&mut first, 0, answer(-32000, "hiccup 1")));
        assert!(!memory.retry_elsewhere(&mut first, 1, answer(-32000, "hiccup 2")));
        assert_eq!(memory.remembered(), 0);
        // The same answer twice from one endpoint proves nothing about the others.
        let mut first = None;
        assert!(memory.retry_elsewhere(&mut first, 0, answer(-32000, "x")));
        assert!(!memory.retry_elsewhere(&mut first, 0, answer(-32000, "x")));
        assert_eq!(memory.remembered(), 0);
        assert!(memory.retry_elsewhere(&mut None, 0, answer(-32000, "x")));
    }

    #[test]
    fn memory_is_bounded_oldest_first() {
        let mut memory = UnknownAnswers::default();
        for i in 0..(REMEMBERED as i64 + 5) {
            let mut first = None;
            memory.retry_elsewhere(&mut first, 0, answer(-1, &i.to_string()));
            memory.retry_elsewhere(&mut first, 1, answer(-1, &i.to_string()));
        }
        assert_eq!(memory.remembered(), REMEMBERED);
        assert!(memory.retry_elsewhere(&mut None, 0, answer(-1, "0")), "the oldest was forgotten");
        assert!(!memory.retry_elsewhere(&mut None, 0, answer(-1, &(REMEMBERED as i64 + 4).to_string())));
    }
}
