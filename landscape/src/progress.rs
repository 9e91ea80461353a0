//! Step-by-step progress output: numbered steps with durations on stdout; on a terminal, a
//! spinner with the elapsed time while a step takes long, redrawn in place and cleared when the
//! step ends; plain lines otherwise (CI, pipes).

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::Error;

/// Frames of the terminal spinner.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// How often the spinner line is redrawn (10 frames per second).
const SPINNER_PERIOD: Duration = Duration::from_millis(100);
/// How long a step runs before its spinner appears, so that quick steps do not flicker.
const SPINNER_DELAY: Duration = Duration::from_millis(150);
/// Moves to the start of the line and erases it.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// Where the spinner is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpinnerTarget {
    /// stdout is a terminal: the spinner line is replaced by the step's result line.
    Stdout,
    /// Only stderr is a terminal (stdout piped, e.g. into `tee`): the spinner goes there and is
    /// erased when the step ends, so the piped output stays plain.
    Stderr,
    /// Neither is a terminal: plain lines only.
    Off,
}

impl SpinnerTarget {
    /// The target for the given terminal attachments.
    fn choose(stdout_terminal: bool, stderr_terminal: bool) -> Self {
        match (stdout_terminal, stderr_terminal) {
            (true, _) => Self::Stdout,
            (false, true) => Self::Stderr,
            (false, false) => Self::Off,
        }
    }
}

/// Prints numbered steps with their durations.
#[derive(Debug)]
pub struct Progress {
    spinner: SpinnerTarget,
    width: usize,
    steps: usize,
}

impl Progress {
    /// Spinner output when stdout or stderr is a terminal, plain lines otherwise (CI, pipes).
    pub fn new() -> Self {
        let width = crate::output::width();
        Self {
            spinner: SpinnerTarget::choose(
                std::io::stdout().is_terminal(),
                std::io::stderr().is_terminal(),
            ),
            width,
            steps: 0,
        }
    }

    /// Prints an informational line.
    pub fn note(&mut self, text: &str) {
        crate::output::print(&format!("  {text}"));
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
        if self.spinner != SpinnerTarget::Stdout {
            crate::output::print(&format!("[{number}] {name} ..."));
        }
        let (outcome, drawn) = match self.spinner {
            SpinnerTarget::Off => (work.await, false),
            target => spin(target, self.width, number, name, begin, work).await,
        };
        let took = format_duration(begin.elapsed());
        if drawn && self.spinner == SpinnerTarget::Stderr {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "{CLEAR_LINE}");
            let _ = stderr.flush();
        }
        let clear = if drawn && self.spinner == SpinnerTarget::Stdout {
            CLEAR_LINE
        } else {
            ""
        };
        if !clear.is_empty() {
            let mut stdout = std::io::stdout().lock();
            // Progress output is best effort: a closed stdout must not fail the landscape.
            let _ = write!(stdout, "{clear}");
        }
        crate::output::print(&match &outcome {
            Ok((_, detail)) if detail.is_empty() => format!("✓ [{number}] {name} ({took})"),
            Ok((_, detail)) => format!("✓ [{number}] {name} ({took}): {detail}"),
            Err(error) => format!("✗ [{number}] {name} ({took}): {error}"),
        });
        outcome.map(|(value, _)| value)
    }
}

/// Drives `work`; once it has run for [`SPINNER_DELAY`], redraws a spinner line with the elapsed
/// time on `target` every [`SPINNER_PERIOD`]. Returns the outcome and whether anything was drawn
/// (the caller then clears the line).
async fn spin<T, F>(
    target: SpinnerTarget,
    width: usize,
    number: usize,
    name: &str,
    begin: Instant,
    work: F,
) -> (Result<(T, String), Error>, bool)
where
    F: Future<Output = Result<(T, String), Error>>,
{
    let mut work = std::pin::pin!(work);
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::from_std(begin + SPINNER_DELAY),
        SPINNER_PERIOD,
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut frame = 0usize;
    loop {
        tokio::select! {
            outcome = &mut work => return (outcome, frame > 0),
            _ = ticker.tick() => {
                let line = spinner_line(frame, number, name, begin.elapsed(), width);
                frame += 1;
                // Best effort like every progress write.
                let _ = match target {
                    SpinnerTarget::Stderr => redraw(&mut std::io::stderr().lock(), &line),
                    _ => redraw(&mut std::io::stdout().lock(), &line),
                };
            }
        }
    }
}

/// Replaces the current terminal line with `line`.
fn redraw(out: &mut impl Write, line: &str) -> std::io::Result<()> {
    write!(out, "{CLEAR_LINE}{line}")?;
    out.flush()
}

/// `⠙ [12] name 1.20 s`, the name shortened with `…` so that the line fits in `width - 1`
/// columns (a line filling the last column would wrap, and `\r` would then redraw only its
/// second half); the elapsed time always stays visible.
fn spinner_line(
    frame: usize,
    number: usize,
    name: &str,
    elapsed: Duration,
    width: usize,
) -> String {
    let symbol = SPINNER[frame % SPINNER.len()];
    let prefix = format!("{symbol} [{number}] ");
    let suffix = format!(" {}", format_duration(elapsed));
    let room = width
        .saturating_sub(1)
        .saturating_sub(prefix.chars().count() + suffix.chars().count());
    let name = if name.chars().count() <= room {
        name.to_owned()
    } else {
        let kept: String = name.chars().take(room.saturating_sub(1)).collect();
        format!("{kept}…")
    };
    format!("{prefix}{name}{suffix}")
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

    #[test]
    fn spinner_goes_to_stdout_then_stderr_then_nowhere() {
        assert_eq!(SpinnerTarget::choose(true, true), SpinnerTarget::Stdout);
        assert_eq!(SpinnerTarget::choose(true, false), SpinnerTarget::Stdout);
        assert_eq!(SpinnerTarget::choose(false, true), SpinnerTarget::Stderr);
        assert_eq!(SpinnerTarget::choose(false, false), SpinnerTarget::Off);
    }

    #[test]
    fn spinner_line_shows_frame_step_name_and_elapsed_time_when_it_fits() {
        assert_eq!(
            spinner_line(1, 3, "start agent", Duration::from_millis(1500), 80),
            "⠙ [3] start agent 1.50 s"
        );
        assert_eq!(
            spinner_line(11, 3, "x", Duration::from_millis(20), 80),
            "⠙ [3] x 20 ms",
            "frames cycle"
        );
    }

    #[test]
    fn spinner_line_shortens_the_name_and_keeps_the_elapsed_time_when_too_wide() {
        let name = "agent renders the chart and applies ManagedResource garden/example-abcde";
        let line = spinner_line(0, 14, name, Duration::from_millis(2500), 40);
        assert_eq!(line.chars().count(), 39, "{line}");
        assert!(line.starts_with("⠋ [14] agent renders"), "{line}");
        assert!(line.ends_with("… 2.50 s"), "{line}");
    }

    #[test]
    fn spinner_line_survives_a_terminal_narrower_than_its_frame() {
        let line = spinner_line(0, 1, "name", Duration::from_millis(5), 3);
        assert!(line.ends_with(" 5 ms"), "{line}");
    }

    #[test]
    fn redraw_erases_the_line_before_writing() {
        let mut out = Vec::new();
        redraw(&mut out, "⠋ [1] step 1 ms").expect("written");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "\r\x1b[2K⠋ [1] step 1 ms"
        );
    }
}
