//! Safe unpacking of chart archives and directories into bounded, validated file lists.

use std::cell::Cell;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use flate2::bufread::GzDecoder;
use tar::EntryType;

/// Bounds applied while unpacking and rendering a chart, so hostile charts cannot exhaust memory
/// or time. The defaults leave real extension charts (well under 1 MiB of output, rendered in
/// milliseconds) orders of magnitude of room; `docs/limits.md` lists them with their
/// configuration fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of archive entries (files, directories and headers) over all nested archives.
    pub max_entries: usize,
    /// Maximum number of decompressed bytes over all nested archives.
    pub max_total_bytes: u64,
    /// Maximum size of a single file.
    pub max_file_bytes: u64,
    /// Maximum nesting of `charts/*.tgz` archives inside archives.
    pub max_depth: usize,
    /// Maximum size of a string (or byte string) a template builds, in bytes: function results,
    /// `include`/`tpl` output and printed values.
    pub max_value_bytes: usize,
    /// Maximum number of elements of a list or map a template builds (also bounds `until`,
    /// `seq`, splits and `range` over an integer).
    pub max_value_items: usize,
    /// Maximum size of all rendered files of one chart together, in bytes.
    pub max_output_bytes: u64,
    /// Maximum wall-clock time of one chart's render, checked at every function call and loop
    /// iteration.
    pub max_render_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_entries: 5_000,
            max_total_bytes: 64 * 1024 * 1024,
            max_file_bytes: 5 * 1024 * 1024,
            max_depth: 8,
            max_value_bytes: 16 * 1024 * 1024,
            max_value_items: 1_000_000,
            max_output_bytes: 64 * 1024 * 1024,
            max_render_time: Duration::from_secs(10),
        }
    }
}

/// Why a chart could not be unpacked or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The archive is not valid gzip.
    #[error("reading chart archive: corrupt gzip stream")]
    Gzip {
        /// The decoder's error.
        #[source]
        source: io::Error,
    },
    /// The archive is not a valid tar stream.
    #[error("reading chart archive: corrupt tar stream")]
    Tar {
        /// The tar reader's error.
        #[source]
        source: io::Error,
    },
    /// An entry name leaves the chart directory.
    #[error("archive entry {path:?} is not a safe relative path (absolute, drive or `..`)")]
    UnsafePath {
        /// The entry name as found in the archive.
        path: String,
    },
    /// An entry is a link or device, which charts never need.
    #[error("archive entry {path:?} is a {kind}, only regular files and directories are allowed")]
    ForbiddenEntry {
        /// The entry name.
        path: String,
        /// What kind of entry it is.
        kind: &'static str,
    },
    /// The archive holds more entries than allowed.
    #[error("chart has more than {limit} entries")]
    TooManyEntries {
        /// The configured bound.
        limit: usize,
    },
    /// The archive decompresses to more bytes than allowed.
    #[error("chart decompresses to more than {limit} bytes")]
    TooLarge {
        /// The configured bound.
        limit: u64,
    },
    /// One file is larger than allowed.
    #[error("chart file {path:?} is larger than {limit} bytes")]
    FileTooLarge {
        /// The file.
        path: String,
        /// The configured bound.
        limit: u64,
    },
    /// `charts/*.tgz` archives are nested deeper than allowed.
    #[error("subchart archives nested deeper than {limit} levels")]
    TooDeep {
        /// The configured bound.
        limit: usize,
    },
    /// `Chart.yaml` sits at the archive root instead of inside the chart directory.
    #[error("Chart.yaml is at the archive root, expected it inside a chart directory")]
    ChartYamlAtRoot,
    /// A chart directory could not be read.
    #[error("reading chart directory {path}")]
    ReadDir {
        /// The file or directory that failed.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A chart directory contains a symbolic link or special file.
    #[error(
        "chart directory entry {path} is a {kind}, only regular files and directories are allowed"
    )]
    ForbiddenDirEntry {
        /// The offending path.
        path: PathBuf,
        /// What kind of entry it is.
        kind: &'static str,
    },
}

/// One file of a chart, path relative to the chart directory with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartFile {
    /// Relative path, e.g. `templates/deployment.yaml`.
    pub name: String,
    /// File content (a leading UTF-8 byte order mark removed).
    pub data: Vec<u8>,
}

/// Tracks the shared entry and byte budget while unpacking nested archives.
#[derive(Debug)]
pub(crate) struct Budget {
    pub(crate) limits: Limits,
    entries: usize,
    bytes: u64,
    /// Values files parsed so far in this load, by content: charts often carry the very same `values.yaml` in
    /// their subcharts, and parsing YAML is the largest part of loading.
    pub(crate) parsed_values: Vec<(Vec<u8>, serde_json::Value)>,
}

impl Budget {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            entries: 0,
            bytes: 0,
            parsed_values: Vec::new(),
        }
    }

    fn entry(&mut self) -> Result<(), LoadError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(LoadError::TooManyEntries {
                limit: self.limits.max_entries,
            });
        }
        Ok(())
    }

    fn bytes(&mut self, n: u64) -> Result<(), LoadError> {
        self.bytes = self.bytes.saturating_add(n);
        if self.bytes > self.limits.max_total_bytes {
            return Err(LoadError::TooLarge {
                limit: self.limits.max_total_bytes,
            });
        }
        Ok(())
    }
}

/// The UTF-8 byte order mark, dropped from the start of a file.
const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// At most this much is reserved up front for the inflated archive, whatever size its gzip trailer claims.
const MAX_PREALLOCATED_ARCHIVE_BYTES: u64 = 8 * 1024 * 1024;

/// Inflates a gzip stream (its first member, as Helm's loader reads it) into one buffer, failing once more than
/// `limit` bytes come out.
fn inflate(bytes: &[u8], limit: u64) -> Result<Vec<u8>, LoadError> {
    // The gzip trailer's size field (the inflated size modulo 2^32; not trusted, so bounded) saves growing the
    // buffer step by step.
    let claimed = bytes
        .last_chunk::<4>()
        .map_or(0, |size| u64::from(u32::from_le_bytes(*size)));
    let reserve =
        usize::try_from(claimed.min(limit).min(MAX_PREALLOCATED_ARCHIVE_BYTES)).unwrap_or(0);
    if let Some(inflated) = inflate_in_one_call(bytes, reserve) {
        return Ok(inflated);
    }
    inflate_streaming(bytes, limit, reserve)
}

/// The common case of [`inflate`] in one call of the inflater into a buffer of the size the trailer claims: no
/// zero-filled buffer, no copies through the decoder's window, no gzip state machine. `None` for anything but a
/// plain well-formed first member that fits `capacity` (header CRC, an inflater error, a short or lying trailer,
/// a larger stream): [`inflate_streaming`] then reads it all again and reports exactly what it always reported.
/// What comes out here is what the streaming decoder gives for the same member, which it verifies the same way.
fn inflate_in_one_call(bytes: &[u8], capacity: usize) -> Option<Vec<u8>> {
    const FEXTRA: u8 = 1 << 2;
    const FNAME: u8 = 1 << 3;
    const FCOMMENT: u8 = 1 << 4;
    let header = bytes.get(..10)?;
    // Magic, deflate, and no flags but the extra field, name and comment (Helm writes the first and the last).
    if header[..3] != [0x1f, 0x8b, 8]
        || header[3] & !(FEXTRA | FNAME | FCOMMENT) != 0
        || capacity == 0
    {
        return None;
    }
    let flags = header[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let xlen = bytes.get(at..at + 2)?;
        at += 2 + usize::from(u16::from_le_bytes([xlen[0], xlen[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            at += memchr::memchr(0, bytes.get(at..)?)? + 1;
        }
    }
    let body = bytes.get(at..)?;
    let mut inflater = flate2::Decompress::new(false);
    let mut inflated = Vec::with_capacity(capacity);
    let status = inflater
        .decompress_vec(body, &mut inflated, flate2::FlushDecompress::Finish)
        .ok()?;
    if status != flate2::Status::StreamEnd {
        return None;
    }
    let end = usize::try_from(inflater.total_in()).ok()?;
    let trailer = body.get(end..end.checked_add(8)?)?;
    let mut crc = flate2::Crc::new();
    crc.update(&inflated);
    let (sum, amount) = trailer.split_at(4);
    (sum == crc.sum().to_le_bytes() && amount == crc.amount().to_le_bytes()).then_some(inflated)
}

/// [`inflate`] through the streaming gzip decoder, which bounds the output and names every fault.
fn inflate_streaming(bytes: &[u8], limit: u64, reserve: usize) -> Result<Vec<u8>, LoadError> {
    let fault = Cell::new(Fault::None);
    // The archive is in memory already: the `bufread` decoder inflates straight from it, where the `read` one
    // copies it through a zeroed 32 KiB buffer of its own first.
    let mut decoder = BoundedReader {
        inner: GzDecoder::new(bytes),
        remaining: limit.saturating_add(1),
        fault: &fault,
    };
    let mut inflated = Vec::with_capacity(reserve);
    decoder
        .read_to_end(&mut inflated)
        .map_err(|source| classify_io(source, &fault, limit))?;
    Ok(inflated)
}

/// Unpacks a gzipped tar archive into files relative to the chart directory (first path component stripped).
pub(crate) fn unpack_archive(
    bytes: &[u8],
    budget: &mut Budget,
) -> Result<Vec<ChartFile>, LoadError> {
    let total_limit = budget.limits.max_total_bytes;
    // Inflated in one piece and read from memory: the tar reader then seeks over padding (reading through a
    // stream, it zeroed a 32 KiB buffer for every skip) and each file is one copy out of the buffer.
    let inflated = inflate(bytes, total_limit)?;
    let tar_error = |source| LoadError::Tar {
        source: readable(source),
    };
    let mut archive = tar::Archive::new(InMemory(io::Cursor::new(inflated.as_slice())));
    let entries = archive.entries_with_seek().map_err(tar_error)?;
    let mut files = Vec::new();
    for entry in entries {
        budget.entry()?;
        let entry = entry.map_err(tar_error)?;
        let raw_path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        match kind {
            EntryType::Directory
            | EntryType::XGlobalHeader
            | EntryType::XHeader
            | EntryType::GNULongName
            | EntryType::GNULongLink => continue,
            EntryType::Regular | EntryType::Continuous => {}
            other => {
                return Err(LoadError::ForbiddenEntry {
                    path: raw_path,
                    kind: entry_kind_name(other),
                });
            }
        }
        let relative = safe_relative_path(&raw_path)?;
        let Some((_, inside)) = relative.split_once('/') else {
            if relative == "Chart.yaml" {
                return Err(LoadError::ChartYamlAtRoot);
            }
            // A file directly at the archive root is not part of any chart directory: Helm ignores it too.
            continue;
        };
        let max_file = budget.limits.max_file_bytes;
        // A regular entry's data is the `size` bytes at its file position (sparse entries were refused above), cut
        // short where the archive ends as reading the entry would be: copied straight out of the inflated archive,
        // where reading it zero-filled the new vector first and copied it through the tar reader in pieces. The
        // reader seeks over the data to the next header as it does over a directory's.
        let start = usize::try_from(entry.raw_file_position())
            .unwrap_or(usize::MAX)
            .min(inflated.len());
        let available = (inflated.len() - start) as u64;
        let len = entry.size().min(available);
        if len > max_file {
            return Err(LoadError::FileTooLarge {
                path: relative,
                limit: max_file,
            });
        }
        budget.bytes(len)?;
        // `len` is at most what is left of the in-memory archive, so it fits a `usize`.
        let data = &inflated[start..start + len as usize];
        files.push(ChartFile {
            name: inside.to_string(),
            data: data.strip_prefix(BOM).unwrap_or(data).to_vec(),
        });
    }
    Ok(files)
}

/// Reads a chart directory (no symlinks followed), applying `.helmignore` like `helm package` does.
pub(crate) fn read_dir(root: &Path, budget: &mut Budget) -> Result<Vec<ChartFile>, LoadError> {
    let mut files = Vec::new();
    walk(root, root, budget, &mut files)?;
    let ignore = files
        .iter()
        .find(|f| f.name == ".helmignore")
        .map(|f| crate::helmignore::HelmIgnore::parse(&String::from_utf8_lossy(&f.data)))
        .unwrap_or_default();
    files.retain(|f| !ignore.ignores(&f.name));
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

fn walk(
    root: &Path,
    dir: &Path,
    budget: &mut Budget,
    out: &mut Vec<ChartFile>,
) -> Result<(), LoadError> {
    let read_error = |path: &Path, source| LoadError::ReadDir {
        path: path.to_path_buf(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| read_error(dir, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read_error(dir, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        budget.entry()?;
        let path = entry.path();
        let file_type = entry.file_type().map_err(|e| read_error(&path, e))?;
        if file_type.is_symlink() {
            return Err(LoadError::ForbiddenDirEntry {
                path,
                kind: "symbolic link",
            });
        }
        if file_type.is_dir() {
            walk(root, &path, budget, out)?;
            continue;
        }
        if !file_type.is_file() {
            return Err(LoadError::ForbiddenDirEntry {
                path,
                kind: "special file",
            });
        }
        let relative = path
            .strip_prefix(root)
            .map_err(|_| LoadError::ForbiddenDirEntry {
                path: path.clone(),
                kind: "path outside the chart",
            })?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let max_file = budget.limits.max_file_bytes;
        let file = std::fs::File::open(&path).map_err(|e| read_error(&path, e))?;
        let mut data = Vec::new();
        file.take(max_file.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| read_error(&path, e))?;
        if data.len() as u64 > max_file {
            return Err(LoadError::FileTooLarge {
                path: relative,
                limit: max_file,
            });
        }
        budget.bytes(data.len() as u64)?;
        out.push(ChartFile {
            name: relative,
            data: strip_bom(data),
        });
    }
    Ok(())
}

/// Normalises an archive entry name and rejects anything that could leave the chart directory.
pub(crate) fn safe_relative_path(raw: &str) -> Result<String, LoadError> {
    let unsafe_path = || LoadError::UnsafePath {
        path: raw.to_string(),
    };
    let normalized = raw.replace('\\', "/");
    if normalized.starts_with('/') || has_drive_prefix(&normalized) || normalized.contains('\0') {
        return Err(unsafe_path());
    }
    let mut parts = Vec::new();
    for part in normalized.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(unsafe_path()),
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return Err(unsafe_path());
    }
    Ok(parts.join("/"))
}

fn has_drive_prefix(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

fn strip_bom(mut data: Vec<u8>) -> Vec<u8> {
    if data.starts_with(BOM) {
        data.drain(..3);
    }
    data
}

fn entry_kind_name(kind: EntryType) -> &'static str {
    match kind {
        EntryType::Symlink => "symbolic link",
        EntryType::Link => "hard link",
        EntryType::Char => "character device",
        EntryType::Block => "block device",
        EntryType::Fifo => "fifo",
        _ => "special entry",
    }
}

/// An inflated archive for the tar reader: seeking past its end fails as skipping past the end of a stream does
/// (a cursor would allow it, and the reader would take the missing data for the end of the archive).
struct InMemory<'a>(io::Cursor<&'a [u8]>);

impl Read for InMemory<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl io::Seek for InMemory<'_> {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        let len = self.0.get_ref().len() as u64;
        let target = match pos {
            io::SeekFrom::Start(at) => Some(at),
            io::SeekFrom::Current(delta) => self.0.position().checked_add_signed(delta),
            io::SeekFrom::End(delta) => len.checked_add_signed(delta),
        };
        match target {
            Some(at) if at <= len => self.0.seek(io::SeekFrom::Start(at)),
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "unexpected EOF during skip",
            )),
        }
    }
}

/// Which layer below the tar reader failed, recorded by [`BoundedReader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    Gzip,
    Bound,
}

/// Maps an I/O error from the gzip/tar stack to the step that failed.
fn classify_io(source: io::Error, fault: &Cell<Fault>, limit: u64) -> LoadError {
    match fault.get() {
        Fault::Bound => LoadError::TooLarge { limit },
        Fault::Gzip => LoadError::Gzip { source },
        Fault::None => LoadError::Tar {
            source: readable(source),
        },
    }
}

/// Longest error detail taken over from the tar reader.
const MAX_DETAIL_CHARS: usize = 200;

/// The tar reader quotes header fields it cannot parse verbatim, so its messages can carry raw
/// archive bytes (NULs, control characters, invalid UTF-8) into conditions and logs: escape
/// everything non-printable and cut the message to [`MAX_DETAIL_CHARS`].
fn readable(source: io::Error) -> io::Error {
    let message = source.to_string();
    let mut detail = String::with_capacity(message.len().min(4 * MAX_DETAIL_CHARS));
    for c in message.chars().take(MAX_DETAIL_CHARS) {
        if c.is_control() || c == char::REPLACEMENT_CHARACTER {
            detail.extend(c.escape_unicode());
        } else {
            detail.push(c);
        }
    }
    if message.chars().count() > MAX_DETAIL_CHARS {
        detail.push('…');
    }
    io::Error::new(source.kind(), detail)
}

/// The gzip-bomb guard: fails once more than `remaining` bytes were produced, and records gzip failures.
struct BoundedReader<'a, R> {
    inner: R,
    remaining: u64,
    fault: &'a Cell<Fault>,
}

impl<R: Read> Read for BoundedReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self
            .inner
            .read(buf)
            .inspect_err(|_| self.fault.set(Fault::Gzip))?;
        if n as u64 >= self.remaining {
            self.fault.set(Fault::Bound);
            return Err(io::Error::other("decompressed size bound exceeded"));
        }
        self.remaining -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tar_errors_quoting_raw_header_bytes_become_printable_and_bounded() {
        let raw = format!(
            "numeric field was not a number: \u{0}\u{1b}[31m{}\u{fffd} when getting size",
            "x".repeat(300)
        );
        let cleaned = readable(std::io::Error::other(raw)).to_string();
        assert!(cleaned.starts_with("numeric field was not a number: \\u{0}\\u{1b}[31m"));
        assert!(!cleaned.chars().any(char::is_control));
        assert!(cleaned.ends_with('…'));
        assert!(cleaned.chars().count() < 230);
    }

    #[test]
    fn safe_relative_path_rejects_parent_and_absolute_paths() {
        assert!(safe_relative_path("../x").is_err());
        assert!(safe_relative_path("a/../../x").is_err());
        assert!(safe_relative_path("/etc/passwd").is_err());
        assert!(safe_relative_path("C:/x").is_err());
        assert!(safe_relative_path("a\\..\\x").is_err());
        assert_eq!(safe_relative_path("./a//b/c.yaml").unwrap(), "a/b/c.yaml");
    }

    #[test]
    fn seeking_past_the_end_of_an_inflated_archive_fails() {
        use std::io::{Seek, SeekFrom};
        let data = [7u8; 10];
        let cases = [
            (SeekFrom::Start(0), Some(0)),
            (SeekFrom::Start(10), Some(10)),
            (SeekFrom::Start(11), None),
            (SeekFrom::Current(4), Some(4)),
            (SeekFrom::Current(-1), None),
            (SeekFrom::End(0), Some(10)),
            (SeekFrom::End(1), None),
            (SeekFrom::End(-3), Some(7)),
        ];
        for (pos, want) in cases {
            let mut reader = InMemory(io::Cursor::new(&data[..]));
            let got = reader.seek(pos).ok();
            assert_eq!(got, want, "{pos:?}");
        }
        let mut reader = InMemory(io::Cursor::new(&data[..]));
        reader.seek(SeekFrom::Start(8)).unwrap();
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, [7, 7]);
    }

    #[test]
    fn strip_bom_removes_only_a_leading_mark() {
        assert_eq!(strip_bom(vec![0xEF, 0xBB, 0xBF, b'a']), b"a");
        assert_eq!(strip_bom(b"ab".to_vec()), b"ab");
    }
}
