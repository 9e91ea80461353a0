//! The render limits in force while a chart renders on this thread: value sizes, output size and time.
//!
//! A render opens a [`Session`]; template functions, loops and output writers check against it
//! through the free functions here, which need no handle because minijinja calls our functions
//! without one. Outside a session (unit tests of single functions) the default [`Limits`] apply
//! without a deadline.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::time::Instant;

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use crate::funcs::fail;
use crate::funcs::value::{list_items, map_entries};
use crate::load::Limits;

/// Name of [`Limits::max_value_bytes`] in errors and in the agent configuration.
pub(crate) const VALUE_BYTES: &str = "maxValueBytes";

/// At most this much is reserved up front for a rendered file, whatever its template's size.
const MAX_RESERVED_OUTPUT_BYTES: usize = 1024 * 1024;
/// Name of [`Limits::max_value_items`].
pub(crate) const VALUE_ITEMS: &str = "maxValueItems";
/// Name of [`Limits::max_output_bytes`].
pub(crate) const OUTPUT_BYTES: &str = "maxOutputBytes";
/// Name of [`Limits::max_render_time`].
pub(crate) const RENDER_TIME: &str = "maxRenderTime";

/// The limit a render ran into and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exceeded {
    /// One of the limit names above.
    pub(crate) limit: &'static str,
    /// What went over it, with the value and the bound.
    pub(crate) message: String,
}

/// How many deadline checks share one read of the clock: a check runs before every function call and loop
/// iteration, and reading the clock for each was 4 % of a cached render. A render overruns
/// [`Limits::max_render_time`] by at most this many calls before it fails.
const CHECKS_PER_CLOCK_READ: u32 = 16;

#[derive(Debug)]
struct Meter {
    limits: Limits,
    started: Instant,
    output: Cell<u64>,
    exceeded: RefCell<Option<Exceeded>>,
    /// Deadline checks left before the next one reads the clock (the first one does).
    checks_to_clock: Cell<u32>,
    /// Whether text of this render may hold stray byte characters (`crate::funcs::gostring`).
    strays: Cell<bool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Meter>>> = const { RefCell::new(None) };
}

/// The limits of one render on this thread, from [`Session::start`] until dropped.
#[derive(Debug)]
pub(crate) struct Session {
    meter: Rc<Meter>,
    previous: Option<Rc<Meter>>,
}

impl Session {
    /// Starts the clock and the output count for a render under `limits`.
    pub(crate) fn start(limits: Limits) -> Self {
        let meter = Rc::new(Meter {
            limits,
            started: Instant::now(),
            output: Cell::new(0),
            exceeded: RefCell::new(None),
            checks_to_clock: Cell::new(0),
            strays: Cell::new(false),
        });
        let previous = CURRENT.with(|current| current.replace(Some(Rc::clone(&meter))));
        Session { meter, previous }
    }

    /// Records that the chart being rendered holds stray byte characters in its translated templates.
    pub(crate) fn note_strays(&self) {
        self.meter.strays.set(true);
    }

    /// The first limit this render ran into, if any.
    pub(crate) fn exceeded(&self) -> Option<Exceeded> {
        self.meter.exceeded.borrow().clone()
    }

    /// A writer for one rendered file, bounded by what is left of [`Limits::max_output_bytes`], with room for
    /// `expected` bytes (the size of the template, a fair guess for a manifest); [`Session::count_output`] books
    /// what it wrote.
    pub(crate) fn file_sink<'a>(&self, template: &'a str, expected: usize) -> Sink<'a> {
        let left = self
            .meter
            .limits
            .max_output_bytes
            .saturating_sub(self.meter.output.get());
        let limit = usize::try_from(left).unwrap_or(usize::MAX);
        Sink {
            // Growing the buffer from empty copied a large file's output several times over (1 % of a cold
            // shoot-cert-service render, whose 44 KB CRD file prints as it is).
            buffer: Vec::with_capacity(expected.min(limit).min(MAX_RESERVED_OUTPUT_BYTES)),
            full: false,
            limit,
            owner: SinkOwner::File {
                template,
                limit: self.meter.limits.max_output_bytes,
            },
        }
    }

    /// Adds a finished file's size to the chart's output.
    pub(crate) fn count_output(&self, bytes: usize) {
        let total = self.meter.output.get().saturating_add(bytes as u64);
        self.meter.output.set(total);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|current| current.replace(previous));
    }
}

/// Records that the current render made a stray byte character (`crate::funcs::gostring`); outside a render
/// there is nothing to record, as [`strays_possible`] is always true there.
pub(crate) fn note_strays() {
    CURRENT.with(|current| {
        if let Some(meter) = current.borrow().as_ref() {
            meter.strays.set(true);
        }
    });
}

/// Whether text may hold stray byte characters: in a render, once it made one or its chart holds one; outside a
/// render (single functions in tests, chart loading) always.
pub(crate) fn strays_possible() -> bool {
    CURRENT.with(|current| {
        current
            .borrow()
            .as_ref()
            .is_none_or(|meter| meter.strays.get())
    })
}

/// Runs `f` with the limits of the current render (defaults and no start time outside one).
fn with_limits<R>(f: impl FnOnce(&Limits, Option<Instant>) -> R) -> R {
    CURRENT.with(|current| match current.borrow().as_ref() {
        Some(meter) => f(&meter.limits, Some(meter.started)),
        None => f(&Limits::default(), None),
    })
}

/// Records `limit` as exceeded (the first one wins) and returns the template error for it.
fn exceeded(limit: &'static str, message: String) -> Error {
    CURRENT.with(|current| {
        if let Some(meter) = current.borrow().as_ref() {
            meter.exceeded.borrow_mut().get_or_insert_with(|| Exceeded {
                limit,
                message: message.clone(),
            });
        }
    });
    fail(message)
}

/// Fails once a limit was exceeded in this render, repeating that failure: output writers cannot
/// fail with a located error themselves, so the next emission, function call or loop iteration
/// reports it.
pub(crate) fn check_exceeded() -> Result<(), Error> {
    let found = CURRENT.with(|current| {
        current
            .borrow()
            .as_ref()
            .and_then(|meter| meter.exceeded.borrow().as_ref().map(|e| e.message.clone()))
    });
    match found {
        Some(message) => Err(fail(message)),
        None => Ok(()),
    }
}

/// Fails once the render has run longer than [`Limits::max_render_time`] (or exceeded another
/// limit, see [`check_exceeded`]). The clock is read on every [`CHECKS_PER_CLOCK_READ`]th check.
pub(crate) fn check_deadline() -> Result<(), Error> {
    let over = CURRENT.with(|current| {
        let current = current.borrow();
        let meter = current.as_ref()?;
        if let Some(exceeded) = meter.exceeded.borrow().as_ref() {
            return Some(Err(exceeded.message.clone()));
        }
        match meter.checks_to_clock.get() {
            0 => meter.checks_to_clock.set(CHECKS_PER_CLOCK_READ - 1),
            left => {
                meter.checks_to_clock.set(left - 1);
                return None;
            }
        }
        (meter.started.elapsed() > meter.limits.max_render_time)
            .then_some(Ok(meter.limits.max_render_time))
    });
    match over {
        None => Ok(()),
        Some(Err(message)) => Err(fail(message)),
        Some(Ok(bound)) => Err(exceeded(
            RENDER_TIME,
            format!("rendering takes longer than {RENDER_TIME} = {bound:?}"),
        )),
    }
}

/// Fails when a string `what` is about to build would be longer than [`Limits::max_value_bytes`].
pub(crate) fn check_bytes(what: &str, bytes: usize) -> Result<(), Error> {
    let bound = with_limits(|limits, _| limits.max_value_bytes);
    if bytes <= bound {
        return Ok(());
    }
    Err(exceeded(
        VALUE_BYTES,
        format!("{what}: a value of {bytes} bytes is over {VALUE_BYTES} = {bound} bytes"),
    ))
}

/// The current [`Limits::max_value_bytes`].
pub(crate) fn value_bytes_limit() -> usize {
    with_limits(|limits, _| limits.max_value_bytes)
}

/// Fails when a list or map `what` is about to build would hold more than [`Limits::max_value_items`].
pub(crate) fn check_items(what: &str, items: usize) -> Result<(), Error> {
    let bound = with_limits(|limits, _| limits.max_value_items);
    if items <= bound {
        return Ok(());
    }
    Err(exceeded(
        VALUE_ITEMS,
        format!("{what}: a collection of {items} elements is over {VALUE_ITEMS} = {bound}"),
    ))
}

/// Checks a function's result against the value limits.
pub(crate) fn check_result(what: &str, value: &Value) -> Result<(), Error> {
    match value.kind() {
        ValueKind::String => check_bytes(what, value.as_str().map_or(0, str::len)),
        ValueKind::Bytes => check_bytes(what, value.as_bytes().map_or(0, <[u8]>::len)),
        ValueKind::Seq | ValueKind::Map => check_items(what, value.len().unwrap_or(0)),
        _ => Ok(()),
    }
}

/// Fails when printing `values` (Go's `%v`, YAML or JSON) would give more than
/// [`Limits::max_value_bytes`]; checked before formatting, as shared sub-values can make a
/// printed form exponentially larger than the values in memory.
pub(crate) fn check_printed(what: &str, values: &[Value]) -> Result<(), Error> {
    let bound = with_limits(|limits, _| limits.max_value_bytes);
    let mut size = 0usize;
    for value in values {
        size = size.saturating_add(printed_size(value, bound.saturating_sub(size), 0));
        if size > bound {
            return check_bytes(what, size);
        }
    }
    Ok(())
}

/// Nesting beyond which a value counts as too large to print. `crate::nesting` keeps template-built values far
/// below it and free of cycles; this bounds the walk for whatever gets past that (its documented gap).
const MAX_PRINTED_DEPTH: usize = 2_000;

/// About how many bytes `value` prints to (at least one per element and each string's length);
/// stops counting once past `cap` or [`MAX_PRINTED_DEPTH`].
fn printed_size(value: &Value, cap: usize, depth: usize) -> usize {
    if depth > MAX_PRINTED_DEPTH {
        return cap.saturating_add(1);
    }
    match value.kind() {
        ValueKind::String => value.as_str().map_or(0, str::len),
        ValueKind::Bytes => value.as_bytes().map_or(0, |b| b.len() * 2),
        ValueKind::Number => value.as_i64().map_or(24, |n| {
            n.unsigned_abs()
                .checked_ilog10()
                .map_or(1, |d| d as usize + 1)
                + 1
        }),
        ValueKind::Seq | ValueKind::Iterable => {
            let mut size: usize = 2;
            for item in list_items(value).unwrap_or_default() {
                size = size
                    .saturating_add(1 + printed_size(&item, cap.saturating_sub(size), depth + 1));
                if size > cap {
                    break;
                }
            }
            size
        }
        ValueKind::Map => {
            let mut size: usize = 5;
            for (key, item) in map_entries(value).unwrap_or_default() {
                size = size.saturating_add(
                    2 + key.len() + printed_size(&item, cap.saturating_sub(size), depth + 1),
                );
                if size > cap {
                    break;
                }
            }
            size
        }
        _ => 5,
    }
}

/// A rendering target that stops growing at a bound and records the limit when it would pass it
/// (the write itself succeeds: an I/O error would lose the template line, so [`check_exceeded`]
/// fails the render at the next emission or call).
#[derive(Debug)]
pub(crate) struct Sink<'a> {
    buffer: Vec<u8>,
    full: bool,
    limit: usize,
    owner: SinkOwner<'a>,
}

/// What a [`Sink`] collects, for the message when it passes its bound (written only then: a render opens a sink
/// for every file and every `include`).
#[derive(Debug)]
enum SinkOwner<'a> {
    /// A rendered file of the chart, bounded by what is left of [`Limits::max_output_bytes`] (`limit`).
    File { template: &'a str, limit: u64 },
    /// The result of a call (`tpl`, `include "name"`), bounded by [`Limits::max_value_bytes`].
    Value {
        call: &'a str,
        name: Option<&'a str>,
    },
}

impl SinkOwner<'_> {
    fn limit_name(&self) -> &'static str {
        match self {
            SinkOwner::File { .. } => OUTPUT_BYTES,
            SinkOwner::Value { .. } => VALUE_BYTES,
        }
    }

    fn message(&self, bound: usize) -> String {
        match self {
            SinkOwner::File { template, limit } => {
                format!("the chart's output (at {template}) is over {OUTPUT_BYTES} = {limit} bytes")
            }
            SinkOwner::Value {
                call,
                name: Some(name),
            } => format!("{call} {name:?}: its output is over {VALUE_BYTES} = {bound} bytes"),
            SinkOwner::Value { call, name: None } => {
                format!("{call}: its output is over {VALUE_BYTES} = {bound} bytes")
            }
        }
    }
}

impl<'a> Sink<'a> {
    /// A writer for the result of `call` (`include` with the template `name`, or `tpl`), which becomes a value:
    /// bounded by [`Limits::max_value_bytes`].
    pub(crate) fn value(call: &'a str, name: Option<&'a str>) -> Self {
        let bound = with_limits(|limits, _| limits.max_value_bytes);
        Sink {
            buffer: Vec::new(),
            full: false,
            limit: bound,
            owner: SinkOwner::Value { call, name },
        }
    }

    /// The text written (templates only write UTF-8).
    pub(crate) fn into_string(self) -> String {
        String::from_utf8(self.buffer)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

impl io::Write for Sink<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.full || self.buffer.len().saturating_add(data.len()) > self.limit {
            if !self.full {
                self.full = true;
                let _ = exceeded(self.owner.limit_name(), self.owner.message(self.limit));
            }
            return Ok(data.len());
        }
        self.buffer.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::time::Duration;

    use super::*;

    fn small() -> Limits {
        Limits {
            max_value_bytes: 10,
            max_value_items: 3,
            max_output_bytes: 8,
            max_render_time: Duration::from_secs(3600),
            ..Limits::default()
        }
    }

    #[test]
    fn checks_use_the_session_limits_and_record_the_first_exceeded() {
        let session = Session::start(small());
        assert!(check_bytes("print", 10).is_ok());
        let err = check_bytes("print", 11).unwrap_err();
        assert!(
            err.to_string()
                .contains("print: a value of 11 bytes is over maxValueBytes = 10 bytes")
        );
        assert!(check_items("list", 4).is_err());
        assert_eq!(session.exceeded().map(|e| e.limit), Some(VALUE_BYTES));
        drop(session);
        assert!(
            check_bytes("print", 11).is_ok(),
            "defaults apply after the session"
        );
    }

    #[test]
    fn deadline_fails_only_after_the_render_time() {
        let session = Session::start(Limits {
            max_render_time: Duration::ZERO,
            ..small()
        });
        std::thread::sleep(Duration::from_millis(2));
        assert!(check_deadline().is_err());
        assert_eq!(session.exceeded().map(|e| e.limit), Some(RENDER_TIME));
        drop(session);
        assert!(check_deadline().is_ok());
    }

    #[test]
    fn deadline_is_seen_within_one_round_of_checks_that_skip_the_clock() {
        let session = Session::start(Limits {
            max_render_time: Duration::from_millis(1),
            ..small()
        });
        assert!(check_deadline().is_ok(), "the first check reads the clock");
        std::thread::sleep(Duration::from_millis(3));
        let failed_at = (1..=CHECKS_PER_CLOCK_READ).find(|_| check_deadline().is_err());
        assert_eq!(
            failed_at,
            Some(CHECKS_PER_CLOCK_READ),
            "the clock is read again after {} checks that skip it",
            CHECKS_PER_CLOCK_READ - 1
        );
        assert!(check_deadline().is_err(), "the failure repeats");
        assert_eq!(session.exceeded().map(|e| e.limit), Some(RENDER_TIME));
    }

    #[test]
    fn printed_size_stops_at_exponentially_shared_values() {
        let mut value = Value::from("x".repeat(1024));
        for _ in 0..60 {
            value = Value::from(vec![value.clone(), value]);
        }
        let _session = Session::start(Limits::default());
        assert!(check_printed("toYaml", &[value]).is_err());
        assert!(check_printed("toYaml", &[Value::from(vec![Value::from(1); 3])]).is_ok());
    }

    #[test]
    fn file_sink_counts_the_whole_chart() {
        let session = Session::start(small());
        let mut first = session.file_sink("a.yaml", 0);
        first.write_all(b"12345").unwrap();
        session.count_output(first.into_string().len());
        let mut second = session.file_sink("b.yaml", 1 << 20);
        second.write_all(b"123").unwrap();
        assert!(check_exceeded().is_ok());
        second.write_all(b"4").unwrap();
        assert_eq!(
            second.into_string(),
            "123",
            "nothing past the bound is kept"
        );
        assert_eq!(session.exceeded().map(|e| e.limit), Some(OUTPUT_BYTES));
        assert!(check_exceeded().is_err());
    }
}
