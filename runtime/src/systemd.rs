//! The systemd service notification protocol (`sd_notify(3)`) for seedlet's daemons: `READY=1`,
//! `STOPPING=1`, `STATUS=…` and `WATCHDOG=1` sent as one datagram to `$NOTIFY_SOCKET`.
//!
//! The protocol is small enough to implement with std's `UnixDatagram`: the service manager
//! passes an absolute socket path, or an abstract socket name starting with `@`, in
//! `$NOTIFY_SOCKET`; each message is a datagram of newline-separated `KEY=VALUE` assignments.
//! `$WATCHDOG_USEC` asks for a keepalive at least that often, `$WATCHDOG_PID` (when set) names the
//! process that is meant to send it.
//!
//! ```no_run
//! use seedlet_runtime::systemd::{Notifier, State, Watchdog};
//!
//! if let Some(notifier) = Notifier::from_env() {
//!     notifier.notify_or_log(&[State::Ready, State::Status("registered")]);
//!     if let Some(watchdog) = Watchdog::from_env(&notifier) {
//!         watchdog.keepalive(std::time::Duration::from_secs(2));
//!     }
//! }
//! ```
//!
//! The variables are left in the environment (removing them needs `unsafe` in Rust 2024); the
//! daemons start no child processes that could pick them up.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Environment variable holding the notification socket address.
pub const NOTIFY_SOCKET_ENV: &str = "NOTIFY_SOCKET";
/// Environment variable holding the watchdog timeout in microseconds.
pub const WATCHDOG_USEC_ENV: &str = "WATCHDOG_USEC";
/// Environment variable holding the process id the watchdog settings are meant for.
pub const WATCHDOG_PID_ENV: &str = "WATCHDOG_PID";

/// Errors of the notification protocol.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `$NOTIFY_SOCKET` is neither an absolute path nor an abstract name (`@…`).
    #[error(
        "unsupported {NOTIFY_SOCKET_ENV} address {address:?}: expected an absolute path or @name"
    )]
    UnsupportedAddress {
        /// The value found.
        address: String,
    },
    /// Creating the unbound datagram socket failed.
    #[error("creating the notification socket")]
    Socket(#[source] std::io::Error),
    /// Sending the datagram failed.
    #[error("sending {states} to {address}")]
    Send {
        /// The socket address.
        address: String,
        /// The assignments' keys (never their values).
        states: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The datagram was truncated.
    #[error("sent {sent} of {length} bytes to {address}")]
    ShortWrite {
        /// The socket address.
        address: String,
        /// Bytes sent.
        sent: usize,
        /// Message length.
        length: usize,
    },
}

/// One assignment of a notification message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State<'a> {
    /// `READY=1`: start-up is finished.
    Ready,
    /// `STOPPING=1`: the service is shutting down.
    Stopping,
    /// `WATCHDOG=1`: keepalive.
    Watchdog,
    /// `STATUS=…`: a one-line human-readable status (`systemctl status`); newlines become spaces.
    Status(&'a str),
}

impl State<'_> {
    /// The assignment's key.
    pub fn key(&self) -> &'static str {
        match self {
            State::Ready => "READY",
            State::Stopping => "STOPPING",
            State::Watchdog => "WATCHDOG",
            State::Status(_) => "STATUS",
        }
    }
}

/// The datagram for `states`: one `KEY=VALUE` line each.
pub fn message(states: &[State<'_>]) -> String {
    let mut text = String::new();
    for state in states {
        text.push_str(state.key());
        text.push('=');
        match state {
            State::Ready | State::Stopping | State::Watchdog => text.push('1'),
            State::Status(status) => text.extend(status.chars().map(|c| match c {
                '\n' | '\r' => ' ',
                other => other,
            })),
        }
        text.push('\n');
    }
    text
}

/// Where notifications go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyAddress {
    /// A socket file.
    Path(PathBuf),
    /// A Linux abstract socket (`@name` in `$NOTIFY_SOCKET`), without the leading `@`.
    Abstract(Vec<u8>),
}

impl NotifyAddress {
    /// Parses a `$NOTIFY_SOCKET` value.
    ///
    /// # Errors
    /// [`Error::UnsupportedAddress`] for relative paths, an empty value or other schemes (e.g.
    /// `vsock:`).
    pub fn parse(value: &OsStr) -> Result<Self, Error> {
        let bytes = value.as_bytes();
        match bytes.first() {
            Some(b'/') => Ok(NotifyAddress::Path(PathBuf::from(value))),
            Some(b'@') if bytes.len() > 1 => Ok(NotifyAddress::Abstract(bytes[1..].to_vec())),
            _ => Err(Error::UnsupportedAddress {
                address: value.to_string_lossy().into_owned(),
            }),
        }
    }
}

impl std::fmt::Display for NotifyAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotifyAddress::Path(path) => write!(f, "{}", path.display()),
            NotifyAddress::Abstract(name) => write!(f, "@{}", String::from_utf8_lossy(name)),
        }
    }
}

/// Sends notifications to the service manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notifier {
    address: NotifyAddress,
}

impl Notifier {
    /// A notifier sending to `address`.
    pub fn new(address: NotifyAddress) -> Self {
        Self { address }
    }

    /// The notifier for `$NOTIFY_SOCKET`, or `None` when the process does not run under a
    /// service manager that wants notifications (an unusable value is logged once).
    pub fn from_env() -> Option<Self> {
        match Self::from_lookup(|name| std::env::var_os(name)) {
            Ok(notifier) => notifier,
            Err(error) => {
                tracing::warn!(error = %crate::error_chain(&error), "ignoring the service manager's notification socket");
                None
            }
        }
    }

    /// Like [`Notifier::from_env`] with an explicit variable lookup; an empty value counts as
    /// unset.
    ///
    /// # Errors
    /// [`Error::UnsupportedAddress`].
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Option<Self>, Error> {
        match lookup(NOTIFY_SOCKET_ENV).filter(|value| !value.is_empty()) {
            None => Ok(None),
            Some(value) => NotifyAddress::parse(&value).map(|address| Some(Self::new(address))),
        }
    }

    /// The socket address.
    pub fn address(&self) -> &NotifyAddress {
        &self.address
    }

    /// Sends `states` as one datagram.
    ///
    /// # Errors
    /// [`Error::Socket`], [`Error::Send`], [`Error::ShortWrite`].
    pub fn notify(&self, states: &[State<'_>]) -> Result<(), Error> {
        let text = message(states);
        let socket = UnixDatagram::unbound().map_err(Error::Socket)?;
        let sent = self
            .send(&socket, text.as_bytes())
            .map_err(|source| Error::Send {
                address: self.address.to_string(),
                states: states.iter().map(State::key).collect::<Vec<_>>().join(","),
                source,
            })?;
        if sent != text.len() {
            return Err(Error::ShortWrite {
                address: self.address.to_string(),
                sent,
                length: text.len(),
            });
        }
        Ok(())
    }

    /// Sends `states`, logging a failure instead of returning it: a service manager that cannot
    /// be told is no reason for a daemon to stop.
    pub fn notify_or_log(&self, states: &[State<'_>]) {
        if let Err(error) = self.notify(states) {
            tracing::warn!(error = %crate::error_chain(&error), "notifying the service manager failed");
        }
    }

    fn send(&self, socket: &UnixDatagram, bytes: &[u8]) -> std::io::Result<usize> {
        match &self.address {
            NotifyAddress::Path(path) => socket.send_to(bytes, path),
            NotifyAddress::Abstract(name) => send_abstract(socket, name, bytes),
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn send_abstract(socket: &UnixDatagram, name: &[u8], bytes: &[u8]) -> std::io::Result<usize> {
    #[cfg(target_os = "android")]
    use std::os::android::net::SocketAddrExt;
    #[cfg(target_os = "linux")]
    use std::os::linux::net::SocketAddrExt;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    socket.send_to_addr(bytes, &address)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn send_abstract(_socket: &UnixDatagram, _name: &[u8], _bytes: &[u8]) -> std::io::Result<usize> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "abstract unix sockets exist only on Linux",
    ))
}

/// The keepalive interval for `$WATCHDOG_USEC` = `usec` and `$WATCHDOG_PID` = `pid`: half the
/// timeout, or `None` when no watchdog is configured, the value is not a positive number, or the
/// settings are meant for another process than `own_pid`.
pub fn watchdog_interval(usec: Option<&str>, pid: Option<&str>, own_pid: u32) -> Option<Duration> {
    if let Some(pid) = pid.filter(|pid| !pid.is_empty())
        && pid.trim().parse::<u32>().ok() != Some(own_pid)
    {
        return None;
    }
    let usec = usec?.trim().parse::<u64>().ok().filter(|usec| *usec > 0)?;
    Some(Duration::from_micros(usec) / 2)
}

/// Whether a keepalive has to go out at a successful beat at `now`: when none was sent yet, or
/// when waiting for the next beat (`beat_period` later) would exceed `interval`.
pub fn keepalive_due(
    last_sent: Option<Instant>,
    now: Instant,
    interval: Duration,
    beat_period: Duration,
) -> bool {
    match last_sent {
        None => true,
        Some(last) => now.saturating_duration_since(last) + beat_period >= interval,
    }
}

/// Watchdog keepalives, sent only when the caller reports progress (e.g. a successful heartbeat),
/// at most every [`Watchdog::interval`].
#[derive(Debug)]
pub struct Watchdog {
    notifier: Notifier,
    interval: Duration,
    last_sent: Mutex<Option<Instant>>,
}

impl Watchdog {
    /// A watchdog sending `WATCHDOG=1` through `notifier` about every `interval`.
    pub fn new(notifier: Notifier, interval: Duration) -> Self {
        Self {
            notifier,
            interval,
            last_sent: Mutex::new(None),
        }
    }

    /// The watchdog the service manager asked for with `$WATCHDOG_USEC` (and `$WATCHDOG_PID`),
    /// keepalive interval half its timeout; `None` without one.
    pub fn from_env(notifier: &Notifier) -> Option<Self> {
        let var = |name| std::env::var(name).ok();
        watchdog_interval(
            var(WATCHDOG_USEC_ENV).as_deref(),
            var(WATCHDOG_PID_ENV).as_deref(),
            std::process::id(),
        )
        .map(|interval| Self::new(notifier.clone(), interval))
    }

    /// The keepalive interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Reports progress: sends `WATCHDOG=1` when one is due (see [`keepalive_due`]) and returns
    /// whether it sent one. A send failure is logged and counts as not sent, so the next beat
    /// tries again.
    pub fn keepalive(&self, beat_period: Duration) -> bool {
        let now = Instant::now();
        // A poisoned lock only means another keepalive panicked mid-way; the timestamp is still usable.
        let mut last_sent = self
            .last_sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !keepalive_due(*last_sent, now, self.interval, beat_period) {
            return false;
        }
        match self.notifier.notify(&[State::Watchdog]) {
            Ok(()) => {
                *last_sent = Some(now);
                true
            }
            Err(error) => {
                tracing::warn!(error = %crate::error_chain(&error), "sending the watchdog keepalive failed");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn receive(socket: &UnixDatagram) -> String {
        socket
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buffer = [0u8; 4096];
        let length = socket.recv(&mut buffer).unwrap();
        String::from_utf8(buffer[..length].to_vec()).unwrap()
    }

    #[test]
    fn message_has_one_assignment_per_line() {
        assert_eq!(
            message(&[State::Ready, State::Status("registered seed local")]),
            "READY=1\nSTATUS=registered seed local\n"
        );
        assert_eq!(message(&[State::Stopping]), "STOPPING=1\n");
        assert_eq!(message(&[State::Watchdog]), "WATCHDOG=1\n");
    }

    #[test]
    fn status_newlines_become_spaces_so_they_cannot_inject_assignments() {
        assert_eq!(
            message(&[State::Status("a\nREADY=1\r")]),
            "STATUS=a READY=1 \n"
        );
    }

    #[test]
    fn address_is_a_path_or_an_abstract_name() {
        assert_eq!(
            NotifyAddress::parse(OsStr::new("/run/systemd/notify")).unwrap(),
            NotifyAddress::Path("/run/systemd/notify".into())
        );
        assert_eq!(
            NotifyAddress::parse(OsStr::new("@seedlet/notify")).unwrap(),
            NotifyAddress::Abstract(b"seedlet/notify".to_vec())
        );
        for bad in ["", "@", "relative/socket", "vsock:2:1234"] {
            assert!(
                matches!(
                    NotifyAddress::parse(OsStr::new(bad)),
                    Err(Error::UnsupportedAddress { .. })
                ),
                "{bad:?} must be refused"
            );
        }
    }

    #[test]
    fn notifier_is_absent_when_notify_socket_is_unset_or_empty() {
        assert_eq!(Notifier::from_lookup(|_| None).unwrap(), None);
        assert_eq!(
            Notifier::from_lookup(|_| Some(OsString::new())).unwrap(),
            None
        );
        let notifier = Notifier::from_lookup(|name| {
            (name == NOTIFY_SOCKET_ENV).then(|| OsString::from("/run/notify"))
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            notifier.address(),
            &NotifyAddress::Path("/run/notify".into())
        );
    }

    #[test]
    fn notify_sends_one_datagram_to_a_socket_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let receiver = UnixDatagram::bind(&path).unwrap();
        let notifier = Notifier::new(NotifyAddress::Path(path));
        notifier
            .notify(&[State::Ready, State::Status("ready")])
            .unwrap();
        assert_eq!(receive(&receiver), "READY=1\nSTATUS=ready\n");
        notifier.notify(&[State::Stopping]).unwrap();
        assert_eq!(receive(&receiver), "STOPPING=1\n");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn notify_sends_to_an_abstract_socket() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("seedlet-systemd-test-{}", std::process::id());
        let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let receiver = UnixDatagram::bind_addr(&address).unwrap();
        let notifier = Notifier::from_lookup(|_| Some(OsString::from(format!("@{name}"))))
            .unwrap()
            .unwrap();
        notifier.notify(&[State::Watchdog]).unwrap();
        assert_eq!(receive(&receiver), "WATCHDOG=1\n");
    }

    #[test]
    fn notify_fails_naming_the_socket_when_nobody_listens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing");
        let error = Notifier::new(NotifyAddress::Path(path.clone()))
            .notify(&[State::Ready])
            .unwrap_err();
        assert!(matches!(&error, Error::Send { states, .. } if states == "READY"));
        assert!(error.to_string().contains(&path.display().to_string()));
    }

    #[test]
    fn watchdog_interval_is_half_the_timeout_for_this_process() {
        assert_eq!(
            watchdog_interval(Some("30000000"), None, 7),
            Some(Duration::from_secs(15))
        );
        assert_eq!(
            watchdog_interval(Some("30000000"), Some("7"), 7),
            Some(Duration::from_secs(15))
        );
        assert_eq!(
            watchdog_interval(Some("30000000"), Some(""), 7),
            Some(Duration::from_secs(15))
        );
    }

    #[test]
    fn watchdog_is_off_when_unset_invalid_zero_or_meant_for_another_process() {
        assert_eq!(watchdog_interval(None, None, 7), None);
        assert_eq!(watchdog_interval(Some("0"), None, 7), None);
        assert_eq!(watchdog_interval(Some("soon"), None, 7), None);
        assert_eq!(watchdog_interval(Some("30000000"), Some("8"), 7), None);
        assert_eq!(watchdog_interval(Some("30000000"), Some("x"), 7), None);
    }

    #[test]
    fn keepalive_is_due_first_and_then_before_the_interval_would_pass() {
        let start = Instant::now();
        let interval = Duration::from_secs(10);
        let beat = Duration::from_secs(2);
        assert!(keepalive_due(None, start, interval, beat));
        assert!(!keepalive_due(
            Some(start),
            start + Duration::from_secs(7),
            interval,
            beat
        ));
        assert!(keepalive_due(
            Some(start),
            start + Duration::from_secs(8),
            interval,
            beat
        ));
        // Beats slower than the interval: every beat sends.
        assert!(keepalive_due(
            Some(start),
            start + Duration::from_millis(1),
            interval,
            Duration::from_secs(20)
        ));
    }

    #[test]
    fn watchdog_sends_only_when_due_and_retries_after_a_failed_send() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let watchdog = Watchdog::new(
            Notifier::new(NotifyAddress::Path(path.clone())),
            Duration::from_secs(3600),
        );
        // Nobody listens yet: not sent, so still due.
        assert!(!watchdog.keepalive(Duration::from_secs(1)));
        let receiver = UnixDatagram::bind(&path).unwrap();
        assert!(watchdog.keepalive(Duration::from_secs(1)));
        assert_eq!(receive(&receiver), "WATCHDOG=1\n");
        assert!(!watchdog.keepalive(Duration::from_secs(1)));
        assert_eq!(watchdog.interval(), Duration::from_secs(3600));
    }
}
