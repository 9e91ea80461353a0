//! Step-by-step progress output: a spinner with elapsed time on a terminal, plain lines otherwise.

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::Error;

/// Frames of the terminal spinner.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// How often the spinner line is redrawn.
const SPINNER_PERIOD: Duration = Duration::from_millis(100);

/// Prints numbered steps with their durations.
#[derive(Debug)]
pub struct Progress {
    terminal: bool,
    steps: usize,
}

impl Progress {
    /// Spinner output when stdout is a terminal, plain lines otherwise (CI, pipes).
    pub fn new() -> Self {
        Self {
            terminal: std::io::stdout().is_terminal(),
            steps: 0,
        }
    }

    /// Prints an informational line.
    pub fn note(&mut self, text: &str) {
        println!("  {text}");
    }

    /// Runs one step: `work` returns its value and a detail for the finishing line.
    ///
    /// # Errors
    /// Whatever `work` returns; the step is then marked failed.
    pub async fn step<T, F>(&mut self, name: &str, work: F) -> Result<T, Error>
    where
        F: Future<Output = Result<(T, String), Error>>,
    {
        self.steps += 1;
        let number = self.steps;
        let begin = Instant::now();
        if !self.terminal {
            println!("[{number}] {name} ...");
        }
        let outcome = if self.terminal {
            spin(number, name, begin, work).await
        } else {
            work.await
        };
        let took = format_duration(begin.elapsed());
        let mut stdout = std::io::stdout().lock();
        let clear = if self.terminal { "\r\x1b[2K" } else { "" };
        // Progress output is best effort: a closed stdout must not fail the landscape.
        let _ = match &outcome {
            Ok((_, detail)) if detail.is_empty() => {
                writeln!(stdout, "{clear}✓ [{number}] {name} ({took})")
            }
            Ok((_, detail)) => writeln!(stdout, "{clear}✓ [{number}] {name} ({took}): {detail}"),
            Err(error) => writeln!(stdout, "{clear}✗ [{number}] {name} ({took}): {error}"),
        };
        outcome.map(|(value, _)| value)
    }
}

/// Drives `work` while redrawing a spinner line with the elapsed time.
async fn spin<T, F>(
    number: usize,
    name: &str,
    begin: Instant,
    work: F,
) -> Result<(T, String), Error>
where
    F: Future<Output = Result<(T, String), Error>>,
{
    let mut work = std::pin::pin!(work);
    let mut ticker = tokio::time::interval(SPINNER_PERIOD);
    let mut frame = 0usize;
    loop {
        tokio::select! {
            outcome = &mut work => return outcome,
            _ = ticker.tick() => {
                let symbol = SPINNER[frame % SPINNER.len()];
                frame += 1;
                let mut stdout = std::io::stdout().lock();
                let _ = write!(stdout, "\r\x1b[2K{symbol} [{number}] {name} {}", format_duration(begin.elapsed()));
                let _ = stdout.flush();
            }
        }
    }
}

/// `850 ms` below a second, `1.25 s` above.
pub fn format_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{:.2} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_below_a_second_print_in_milliseconds() {
        assert_eq!(format_duration(Duration::from_millis(850)), "850 ms");
        assert_eq!(format_duration(Duration::from_millis(1250)), "1.25 s");
    }
}
