//! Logging a failure that a retry loop meets again and again: loud once per distinct message,
//! quiet while it repeats, and one line when it is over. A condition that persists is not a
//! WARN or ERROR line every few seconds; a change in what fails is.

/// What a retry loop should do with the failure it just met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A failure with a message not seen just before: log it at the loop's level.
    New,
    /// The same failure as last time: log it at debug level.
    Repeated,
}

/// The failures of one retry loop since its last success.
#[derive(Debug, Default)]
pub struct RepeatedFailures {
    last: Option<String>,
    count: u32,
}

impl RepeatedFailures {
    /// A loop that has not failed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a failure with `message` and says whether it is news.
    pub fn failed(&mut self, message: &str) -> Failure {
        self.count = self.count.saturating_add(1);
        if self.last.as_deref() == Some(message) {
            Failure::Repeated
        } else {
            self.last = Some(message.to_owned());
            Failure::New
        }
    }

    /// How many failures in a row since the last success (the `n` of a doubling back-off).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Records a success; returns how many failures came before it, if any.
    pub fn succeeded(&mut self) -> Option<u32> {
        self.last = None;
        match std::mem::take(&mut self.count) {
            0 => None,
            failures => Some(failures),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_are_news_and_success_reports_the_count() {
        let mut failures = RepeatedFailures::new();
        assert_eq!(failures.succeeded(), None);
        let seen: Vec<Failure> = ["a", "a", "a", "b", "b", "a"]
            .iter()
            .map(|message| failures.failed(message))
            .collect();
        use Failure::{New, Repeated};
        assert_eq!(seen, [New, Repeated, Repeated, New, Repeated, New]);
        assert_eq!(failures.succeeded(), Some(6));
        assert_eq!(failures.succeeded(), None);
        assert_eq!(
            failures.failed("a"),
            New,
            "a success forgets the last message"
        );
    }
}
