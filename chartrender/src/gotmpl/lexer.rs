//! Go `text/template` lexer: splits source into text and action tokens, applying `{{-`/`-}}` trimming.

use std::borrow::Cow;

use super::ParseError;

/// A lexical item inside an action.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'s> {
    /// `.name` (a field or method on the preceding term, or on dot); `true` when directly attached to the
    /// previous token (`$x.a`), `false` after whitespace (`f $x .a` passes `.a` as a new argument).
    Field(&'s str, bool),
    /// A lone `.`.
    Dot,
    /// `$name`, or `$` alone (empty name).
    Variable(&'s str),
    /// A bare identifier: function name or keyword.
    Ident(&'s str),
    /// A string literal, already unquoted (borrowed unless it had escapes or carriage returns).
    Str(Cow<'s, str>),
    /// A number literal, as written.
    Number(&'s str),
    /// A character literal's code point.
    Char(u32),
    /// `:=`
    Declare,
    /// `=`
    Assign,
    /// `,` (between range variables)
    Comma,
    /// `|`
    Pipe,
    /// `(`
    LeftParen,
    /// `)`
    RightParen,
}

/// One piece of template source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece<'s> {
    /// Literal text, trimmed where markers asked for it, and the line it starts on.
    Text { text: &'s str, line: usize },
    /// A `{{ … }}` action with its tokens, the line it starts on, and its source text.
    Action {
        tokens: Vec<(Tok<'s>, usize)>,
        line: usize,
        source: &'s str,
        newlines: usize,
    },
    /// A `{{/* … */}}` comment spanning `newlines` newlines.
    Comment { line: usize, newlines: usize },
}

/// Splits `source` into pieces (the template name is only used in errors).
#[cfg(test)]
pub(crate) fn lex<'s>(name: &str, source: &'s str) -> Result<Vec<Piece<'s>>, ParseError> {
    match lex_until_error(name, source) {
        (pieces, None) => Ok(pieces),
        (_, Some(error)) => Err(error),
    }
}

/// Splits `source` into pieces up to the first lexical error, and that error. Go's lexer runs ahead of its parser
/// item by item, so a parse error before the lexical one is the one reported: the parser reads these pieces and
/// reports the lexical error only when it reaches it.
pub(crate) fn lex_until_error<'s>(
    name: &str,
    source: &'s str,
) -> (Vec<Piece<'s>>, Option<ParseError>) {
    // Every action opens with two `{` and adds at most one text before it: sized once from a count of `{` (bounded,
    // as `{` may be common in text), where growing the list step by step moved it half a dozen times. `{` is rare,
    // so memchr jumps from one to the next (a byte-by-byte count took as long as lexing a 44 KB CRD file).
    let opens = memchr::memchr_iter(b'{', source.as_bytes())
        .take(MAX_PRESIZED_PIECES)
        .count();
    let mut pieces = Vec::with_capacity(opens + 1);
    let error = lex_into(name, source, &mut pieces).err();
    (pieces, error)
}

fn lex_into<'s>(
    name: &str,
    source: &'s str,
    pieces: &mut Vec<Piece<'s>>,
) -> Result<(), ParseError> {
    let bytes = source.as_bytes();
    let mut pos = 0;
    let mut line = 1;
    let mut trim_next_text = false;
    let error = |line: usize, message: String| ParseError {
        template: name.to_string(),
        line,
        message,
    };
    loop {
        let open = find_open(source, pos);
        let text_end = open.unwrap_or(source.len());
        let raw = &source[pos..text_end];
        let left_trim = open.is_some_and(|o| is_trim_marker_left(bytes, o + 2));
        let start = if trim_next_text {
            raw.len() - raw.trim_start_matches(is_go_space).len()
        } else {
            0
        };
        let end = if left_trim {
            start + raw[start..].trim_end_matches(is_go_space).len()
        } else {
            raw.len()
        };
        if start < end {
            let text_line = line + super::count_newlines(&raw[..start]);
            pieces.push(Piece::Text {
                text: &raw[start..end],
                line: text_line,
            });
        }
        line += super::count_newlines(raw);
        let Some(open) = open else { break };
        let action_line = line;
        let mut inner_start = open + 2;
        if left_trim {
            inner_start += 2;
        }
        // Comments: `{{/*` … `*/}}`, optionally with trim markers.
        let after_space = skip_spaces(bytes, inner_start);
        if source[if left_trim { after_space } else { inner_start }..].starts_with("/*") {
            let comment_start = if left_trim { after_space } else { inner_start };
            let Some(close) = find(source, comment_start + 2, "*/") else {
                return Err(error(action_line, "unclosed comment".into()));
            };
            let mut rest = close + 2;
            let right_trim = source[rest..].starts_with(" -}}")
                || (rest < bytes.len()
                    && is_go_space(bytes[rest] as char)
                    && source[skip_spaces(bytes, rest)..].starts_with("-}}"));
            if right_trim {
                rest = skip_spaces(bytes, rest) + 3;
            } else if source[rest..].starts_with("}}") {
                rest += 2;
            } else {
                return Err(error(
                    action_line,
                    "comment ends before closing delimiter".into(),
                ));
            }
            let newlines = super::count_newlines(&source[open..rest]);
            line += newlines;
            pieces.push(Piece::Comment {
                line: action_line,
                newlines,
            });
            trim_next_text = right_trim;
            pos = rest;
            continue;
        }
        let (tokens, end, right_trim) =
            lex_action(source, inner_start, &mut line).map_err(|(l, m)| error(l, m))?;
        let newlines = super::count_newlines(&source[open..end]);
        pieces.push(Piece::Action {
            tokens,
            line: action_line,
            source: &source[open..end],
            newlines,
        });
        trim_next_text = right_trim;
        pos = end;
    }
    Ok(())
}

/// At most this many tokens are reserved up front for an action.
const MAX_PRESIZED_TOKENS: usize = 64;

/// At most this many pieces are reserved up front for a file.
const MAX_PRESIZED_PIECES: usize = 1024;

fn is_go_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// The next `{{` at or after `from`: `memchr` for `{` (rare in text) instead of a substring search.
fn find_open(source: &str, from: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut at = from;
    while let Some(i) = memchr::memchr(b'{', bytes.get(at..)?) {
        let brace = at + i;
        if bytes.get(brace + 1) == Some(&b'{') {
            return Some(brace);
        }
        at = brace + 1;
    }
    None
}

fn find(source: &str, from: usize, needle: &str) -> Option<usize> {
    source.get(from..)?.find(needle).map(|i| i + from)
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_go_space(bytes[i] as char) {
        i += 1;
    }
    i
}

/// `{{-` counts as a trim marker only when followed by a space (`{{-3}}` is a number).
fn is_trim_marker_left(bytes: &[u8], i: usize) -> bool {
    bytes.get(i) == Some(&b'-') && bytes.get(i + 1).is_some_and(|c| is_go_space(*c as char))
}

type ActionResult<'s> = Result<(Vec<(Tok<'s>, usize)>, usize, bool), (usize, String)>;

/// Lexes the inside of an action starting at `i`; returns tokens, the end offset after `}}` and the right-trim flag.
fn lex_action<'s>(source: &'s str, mut i: usize, line: &mut usize) -> ActionResult<'s> {
    let bytes = source.as_bytes();
    // A token takes a few bytes of the action: reserved from the distance to the first `}` (usually the closing
    // one), so most actions' tokens are allocated once instead of grown from four to eight to sixteen.
    let hint = memchr::memchr(b'}', &bytes[i.min(bytes.len())..]).map_or(4, |d| d / 4 + 2);
    let mut tokens = Vec::with_capacity(hint.min(MAX_PRESIZED_TOKENS));
    loop {
        // Whitespace, possibly followed by the ` -}}` trim marker.
        let space_start = i;
        while i < bytes.len() && is_go_space(bytes[i] as char) {
            if bytes[i] == b'\n' {
                *line += 1;
            }
            i += 1;
        }
        if i > space_start && source[i..].starts_with("-}}") {
            return Ok((tokens, i + 3, true));
        }
        if i >= bytes.len() {
            return Err((*line, "unclosed action".into()));
        }
        if source[i..].starts_with("}}") {
            return Ok((tokens, i + 2, false));
        }
        let c = bytes[i];
        let tok_line = *line;
        match c {
            b'|' => {
                tokens.push((Tok::Pipe, tok_line));
                i += 1;
            }
            b'(' => {
                tokens.push((Tok::LeftParen, tok_line));
                i += 1;
            }
            b')' => {
                tokens.push((Tok::RightParen, tok_line));
                i += 1;
            }
            b',' => {
                tokens.push((Tok::Comma, tok_line));
                i += 1;
            }
            b':' if bytes.get(i + 1) == Some(&b'=') => {
                tokens.push((Tok::Declare, tok_line));
                i += 2;
            }
            b'=' => {
                tokens.push((Tok::Assign, tok_line));
                i += 1;
            }
            b'"' => {
                let (value, end) = lex_quoted(source, i)
                    .ok_or((tok_line, "unterminated quoted string".to_string()))?;
                tokens.push((Tok::Str(value), tok_line));
                i = end;
            }
            b'`' => {
                let end = find(source, i + 1, "`")
                    .ok_or((tok_line, "unterminated raw quoted string".to_string()))?;
                let raw = &source[i + 1..end];
                let value = if raw.contains('\r') {
                    Cow::Owned(raw.replace('\r', ""))
                } else {
                    Cow::Borrowed(raw)
                };
                *line += super::count_newlines(&value);
                tokens.push((Tok::Str(value), tok_line));
                i = end + 1;
            }
            b'\'' => {
                let (value, end) = lex_char(source, i)
                    .ok_or((tok_line, "unterminated character constant".to_string()))?;
                tokens.push((Tok::Char(value), tok_line));
                i = end;
            }
            b'$' => {
                let end = scan_identifier(bytes, i + 1);
                tokens.push((Tok::Variable(&source[i + 1..end]), tok_line));
                i = end;
            }
            b'.' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                && !previous_is_term(&tokens) =>
            {
                let end = number_end(source, i, tok_line)?;
                tokens.push((Tok::Number(&source[i..end]), tok_line));
                i = end;
            }
            b'.' => {
                let end = scan_identifier(bytes, i + 1);
                if end == i + 1 {
                    tokens.push((Tok::Dot, tok_line));
                    i += 1;
                } else {
                    let attached = i > 0 && !is_go_space(bytes[i - 1] as char);
                    tokens.push((Tok::Field(&source[i + 1..end], attached), tok_line));
                    i = end;
                }
            }
            b'0'..=b'9' | b'+' | b'-' => {
                let end = number_end(source, i, tok_line)?;
                if end == i + 1 && !bytes[i].is_ascii_digit() {
                    return Err((
                        tok_line,
                        format!("unexpected {:?} in command", bytes[i] as char),
                    ));
                }
                tokens.push((Tok::Number(&source[i..end]), tok_line));
                i = end;
            }
            c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                let end = scan_identifier(bytes, i);
                if end == i {
                    return Err((tok_line, "unrecognized character in action".into()));
                }
                tokens.push((Tok::Ident(&source[i..end]), tok_line));
                i = end;
            }
            other => {
                let ch = source[i..].chars().next().unwrap_or(other as char);
                return Err((
                    tok_line,
                    format!("unrecognized character in action: {ch:?}"),
                ));
            }
        }
    }
}

fn previous_is_term(tokens: &[(Tok<'_>, usize)]) -> bool {
    matches!(
        tokens.last(),
        Some((Tok::RightParen | Tok::Variable(_) | Tok::Field(..), _))
    )
}

fn scan_identifier(bytes: &[u8], i: usize) -> usize {
    // One table lookup per byte (three comparisons and a range test before; identifiers are most of an action).
    bytes[i.min(bytes.len())..]
        .iter()
        .position(|&b| !IDENTIFIER_BYTE[usize::from(b)])
        .map_or(bytes.len(), |n| i + n)
}

/// The bytes [`scan_identifier`] takes: `_`, ASCII letters and digits, and every byte of a non-ASCII character.
static IDENTIFIER_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = byte == b'_' || byte.is_ascii_alphanumeric() || byte >= 0x80;
        b += 1;
    }
    table
};

/// The end of the number at `i`, or Go's lexer error for it.
fn number_end(source: &str, i: usize, line: usize) -> Result<usize, (usize, String)> {
    match scan_number(source.as_bytes(), i) {
        (end, true) => Ok(end),
        (end, false) => Err((
            line,
            format!(
                "bad number syntax: {:?}",
                source.get(i..end).unwrap_or_default()
            ),
        )),
    }
}

/// The end of the number at `i`, scanned as Go's lexer does (sign, base prefix, digits, fraction, exponent, `i`),
/// and whether it ends well: a letter, digit or `_` right after it makes Go's token one character longer and a
/// `bad number syntax` error (`100.name` gives `"100.n"`).
fn scan_number(bytes: &[u8], mut i: usize) -> (usize, bool) {
    let accept = |i: &mut usize, set: &[u8]| {
        let hit = bytes.get(*i).is_some_and(|b| set.contains(b));
        *i += usize::from(hit);
        hit
    };
    let accept_run = |i: &mut usize, set: &[u8]| {
        while bytes.get(*i).is_some_and(|b| set.contains(b)) {
            *i += 1;
        }
    };
    const DECIMAL: &[u8] = b"0123456789_";
    const HEX: &[u8] = b"0123456789abcdefABCDEF_";
    accept(&mut i, b"+-");
    let mut digits = DECIMAL;
    if accept(&mut i, b"0") {
        if accept(&mut i, b"xX") {
            digits = HEX;
        } else if accept(&mut i, b"oO") {
            digits = b"01234567_";
        } else if accept(&mut i, b"bB") {
            digits = b"01_";
        }
    }
    accept_run(&mut i, digits);
    if accept(&mut i, b".") {
        accept_run(&mut i, digits);
    }
    let exponent: &[u8] = if digits == DECIMAL {
        b"eE"
    } else if digits == HEX {
        b"pP"
    } else {
        b""
    };
    if accept(&mut i, exponent) {
        accept(&mut i, b"+-");
        accept_run(&mut i, DECIMAL);
    }
    accept(&mut i, b"i");
    match bytes.get(i) {
        Some(&b) if b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80 => {
            let width = std::str::from_utf8(&bytes[i..bytes.len().min(i + 4)])
                .ok()
                .or_else(|| std::str::from_utf8(&bytes[i..]).ok())
                .and_then(|rest| rest.chars().next())
                .map_or(1, char::len_utf8);
            (i + width, false)
        }
        _ => (i, true),
    }
}

/// Reads the `"…"` literal at `start`: its value (borrowed when it has no escapes) and the offset after it.
fn lex_quoted(source: &str, start: usize) -> Option<(Cow<'_, str>, usize)> {
    let body = &source[start + 1..];
    if let Some(close) = body.find(['"', '\\', '\n'])
        && body.as_bytes()[close] == b'"'
    {
        return Some((Cow::Borrowed(&body[..close]), start + 1 + close + 1));
    }
    // Go's unquoting: `\x` and octal escapes give bytes (which need not form UTF-8), the others characters.
    let mut out: Vec<u8> = Vec::new();
    let mut chars = source[start + 1..].char_indices();
    let push =
        |out: &mut Vec<u8>, c: char| out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    while let Some((offset, c)) = chars.next() {
        match c {
            '"' => {
                let text = crate::funcs::gostring::from_bytes(&out);
                return Some((Cow::Owned(text), start + 1 + offset + 1));
            }
            '\n' => return None,
            '\\' => {
                let (_, escaped) = chars.next()?;
                match escaped {
                    'n' => out.push(b'\n'),
                    't' => out.push(b'\t'),
                    'r' => out.push(b'\r'),
                    'a' => out.push(7),
                    'b' => out.push(8),
                    'f' => out.push(0xc),
                    'v' => out.push(0xb),
                    '\\' => out.push(b'\\'),
                    '"' => out.push(b'"'),
                    '\'' => out.push(b'\''),
                    'x' => {
                        let hex: String = (0..2)
                            .filter_map(|_| chars.next().map(|(_, c)| c))
                            .collect();
                        out.push(u8::from_str_radix(&hex, 16).ok()?);
                    }
                    'u' | 'U' => {
                        let width = if escaped == 'u' { 4 } else { 8 };
                        let hex: String = (0..width)
                            .filter_map(|_| chars.next().map(|(_, c)| c))
                            .collect();
                        let code = u32::from_str_radix(&hex, 16).ok()?;
                        push(&mut out, char::from_u32(code)?);
                    }
                    '0'..='7' => {
                        let mut octal = String::from(escaped);
                        for _ in 0..2 {
                            octal.push(chars.next()?.1);
                        }
                        out.push(u8::from_str_radix(&octal, 8).ok()?);
                    }
                    _ => return None,
                }
            }
            c => push(&mut out, c),
        }
    }
    None
}

fn lex_char(source: &str, start: usize) -> Option<(u32, usize)> {
    let rest = &source[start + 1..];
    let close = rest.find('\'')?;
    // `''` is Go's "empty character constant"; taking the quote itself as the body would end the token inside
    // whatever character follows.
    if close == 0 {
        return None;
    }
    let body = &rest[..close];
    let body = if body == "\\" {
        &rest[..rest[1..].find('\'')? + 1]
    } else {
        body
    };
    let end = start + 1 + body.len() + 1;
    let value = if let Some(escaped) = body.strip_prefix('\\') {
        let quoted = format!("\"\\{escaped}\"");
        let (text, _) = lex_quoted(&quoted, 0)?;
        let mut chars = text.chars();
        let c = chars.next()?;
        if chars.next().is_some() {
            return None;
        }
        c as u32
    } else {
        let mut chars = body.chars();
        let c = chars.next()?;
        if chars.next().is_some() {
            return None;
        }
        c as u32
    };
    Some((value, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each answer as Helm v3.11.3 gives it: the number Go's lexer takes, or the text of its error.
    #[test]
    fn numbers_end_where_gos_lexer_ends_them() {
        let cases = [
            ("1.5.a", Ok("1.5")),
            ("0x1F ", Ok("0x1F")),
            ("1e3)", Ok("1e3")),
            ("-3", Ok("-3")),
            (".5", Ok(".5")),
            ("1_000", Ok("1_000")),
            ("0b101|", Ok("0b101")),
            ("0.a", Err("0.a")),
            ("100.name", Err("100.n")),
            ("12abc", Err("12a")),
            // Taken whole; the parser refuses it as a number.
            ("1e", Ok("1e")),
            ("0x1g", Err("0x1g")),
        ];
        for (text, want) in cases {
            let got = match scan_number(text.as_bytes(), 0) {
                (end, true) => Ok(&text[..end]),
                (end, false) => Err(&text[..end]),
            };
            assert_eq!(got, want, "{text}");
        }
    }

    fn texts(pieces: &[Piece]) -> Vec<String> {
        pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Text { text, .. } => Some(text.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn find_open_skips_single_braces() {
        // (source, from, want)
        let cases = [
            ("", 0, None),
            ("{{", 0, Some(0)),
            ("a { b {{", 0, Some(6)),
            ("{ {{", 1, Some(2)),
            ("{{ x }} {{", 1, Some(8)),
            ("{", 0, None),
            ("ü{{", 0, Some(2)),
            ("ab", 5, None),
        ];
        for (source, from, want) in cases {
            assert_eq!(find_open(source, from), want, "{source:?} from {from}");
        }
    }

    #[test]
    fn empty_character_constants_are_errors_even_before_multibyte_text() {
        assert!(lex("t", "{{ ''\u{11668} }}").is_err());
        assert!(lex("t", "{{ '' }}").is_err());
        let pieces = lex("t", "{{ 'a' }}").unwrap();
        assert_eq!(pieces.len(), 1);
    }

    #[test]
    fn lex_trims_whitespace_around_markers() {
        let pieces = lex("t", "a  \n {{- .X -}} \n b").unwrap();
        assert_eq!(texts(&pieces), ["a", "b"]);
    }

    #[test]
    fn lex_keeps_dash_numbers_without_space() {
        let pieces = lex("t", "{{-3}}").unwrap();
        let Piece::Action { tokens, .. } = &pieces[0] else {
            panic!("expected action")
        };
        assert_eq!(tokens[0].0, Tok::Number("-3"));
    }

    #[test]
    fn lex_reads_strings_with_braces_and_escapes() {
        let pieces = lex("t", r#"{{ "}}\n\"x\"" `raw}}` 'a' }}"#).unwrap();
        let Piece::Action { tokens, .. } = &pieces[0] else {
            panic!("expected action")
        };
        assert_eq!(tokens[0].0, Tok::Str("}}\n\"x\"".into()));
        assert_eq!(tokens[1].0, Tok::Str("raw}}".into()));
        assert_eq!(tokens[2].0, Tok::Char('a' as u32));
    }

    #[test]
    fn lex_borrows_strings_without_escapes_from_the_source() {
        let pieces = lex("t", r#"{{ "plain" "a\tb" }}"#).unwrap();
        let Piece::Action { tokens, .. } = &pieces[0] else {
            panic!("expected action")
        };
        assert!(matches!(&tokens[0].0, Tok::Str(Cow::Borrowed("plain"))));
        assert!(matches!(&tokens[1].0, Tok::Str(Cow::Owned(s)) if s == "a\tb"));
    }

    #[test]
    fn lex_drops_comments_and_reports_unclosed_actions() {
        let pieces = lex("t", "a{{/* c\n */}}b").unwrap();
        assert!(matches!(pieces[1], Piece::Comment { newlines: 1, .. }));
        let err = lex("t", "x\n{{ .A").unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn lex_distinguishes_fields_variables_and_dot() {
        let pieces = lex("t", "{{ $x.a . .b.c $ }}").unwrap();
        let Piece::Action { tokens, .. } = &pieces[0] else {
            panic!("expected action")
        };
        let kinds: Vec<Tok> = tokens.iter().map(|t| t.0.clone()).collect();
        assert_eq!(
            kinds,
            [
                Tok::Variable("x"),
                Tok::Field("a", true),
                Tok::Dot,
                Tok::Field("b", false),
                Tok::Field("c", true),
                Tok::Variable("")
            ]
        );
    }
}
