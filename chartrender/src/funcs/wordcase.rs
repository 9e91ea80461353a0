//! Word casing as Sprig's `snakecase`, `kebabcase` and `camelcase` do it (huandu/xstrings v1.4, which Helm
//! v3.11 builds with): a string is cut into words (runs of connectors `-` `_` and spaces, punctuation, an
//! uppercase letter with its lowercase tail, an acronym, lowercase letters, digits, other characters); the
//! lower-case forms join words with the connector, except around connectors and punctuation, and glue digits to
//! the letters that follow them (`http2xx` → `http_2xx`, `HTTP2XX` → `http2_xx`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// A letter that is not a CJK ideograph.
fn is_alphabet(c: char) -> bool {
    c.is_alphabetic()
        && !matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{3FFFF}')
}

/// Go's `unicode.IsPunct`: ASCII punctuation (not the symbols `$+<=>^`|~`) and the common Unicode blocks.
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation()
            && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~');
    }
    matches!(c, '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205E}' | '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}'
        | '\u{FF01}'..='\u{FF03}' | '\u{FF05}'..='\u{FF0A}' | '\u{FF0C}'..='\u{FF0F}' | '\u{FF1A}' | '\u{FF1B}'
        | '\u{FF1F}' | '\u{FF20}' | '\u{FF3B}'..='\u{FF3D}' | '\u{FF3F}' | '\u{FF5B}' | '\u{FF5D}' | '\u{00A1}'
        | '\u{00A7}' | '\u{00AB}' | '\u{00B6}' | '\u{00B7}' | '\u{00BB}' | '\u{00BF}')
}

/// The words of `text`, each with its kind.
fn words(text: &str) -> Vec<(Word, String)> {
    let (class, units) = classified(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < class.len() {
        let c = class[i];
        let start = i;
        let run = |from: usize, keep: &dyn Fn(char) -> bool| {
            let mut j = from;
            while j < class.len() && keep(class[j]) {
                j += 1;
            }
            j
        };
        let (kind, end) = if is_connector(c) {
            (Word::Connector, run(i + 1, &is_connector))
        } else if is_punct(c) {
            (Word::Punct, run(i + 1, &is_punct))
        } else if c.is_uppercase() {
            let next = class.get(i + 1).copied();
            let end = match next {
                Some(n) if n.is_uppercase() => {
                    // An acronym; its last capital starts the next word when a lowercase letter follows.
                    let end = run(i + 1, &|c: char| c.is_uppercase());
                    if end < class.len() && is_alphabet(class[end]) {
                        end - 1
                    } else {
                        end
                    }
                }
                Some(n) if is_alphabet(n) => {
                    run(i + 1, &|c: char| is_alphabet(c) && !c.is_uppercase())
                }
                _ => i + 1,
            };
            (Word::Upper, end)
        } else if is_alphabet(c) {
            (
                Word::Alphabet,
                run(i + 1, &|c: char| is_alphabet(c) && !c.is_uppercase()),
            )
        } else if c.is_numeric() {
            (Word::Number, run(i + 1, &char::is_numeric))
        } else {
            let other =
                |c: char| !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c));
            (Word::Other, run(i + 1, &other))
        };
        out.push((kind, units[start..end].concat()));
        i = end;
    }
    out
}

/// The characters words are cut by, with the text each stands for: xstrings skips `utf8.RuneError` (an invalid
/// byte, or U+FFFD itself) when it reads the next character, so U+FFFD goes with the character after it (with the
/// one before it at the end) and does not count on its own.
fn classified(text: &str) -> (Vec<char>, Vec<String>) {
    let mut class = Vec::new();
    let mut units: Vec<String> = Vec::new();
    let mut pending = String::new();
    for c in text.chars() {
        if c == char::REPLACEMENT_CHARACTER {
            pending.push(c);
            continue;
        }
        pending.push(c);
        class.push(c);
        units.push(std::mem::take(&mut pending));
    }
    if !pending.is_empty() {
        match units.last_mut() {
            Some(last) => last.push_str(&pending),
            None => {
                class.push(char::REPLACEMENT_CHARACTER);
                units.push(pending);
            }
        }
    }
    (class, units)
}

/// Appends a word in lower case: connectors become `connector`, capitals small letters, other words as they are.
fn push_lower(out: &mut String, (kind, text): &(Word, String), connector: char) {
    match kind {
        Word::Connector => out.extend(text.chars().map(|_| connector)),
        Word::Upper => out.extend(text.chars().flat_map(char::to_lowercase)),
        _ => out.push_str(text),
    }
}

/// `snakecase` (`connector` `_`) and `kebabcase` (`-`).
pub(crate) fn lower_words(text: &str, connector: char) -> String {
    let words = words(text);
    let kind_at = |j: usize| words.get(j).map(|w| w.0);
    // Whether a connector goes before the word at `j` (none before connectors, punctuation or the end).
    let joins = |j: usize| {
        matches!(
            kind_at(j),
            Some(Word::Upper | Word::Alphabet | Word::Number | Word::Other)
        )
    };
    let mut out = String::with_capacity(text.len() + 8);
    // Writes the letters and digits glued after a number; returns the index after them.
    let glue = |out: &mut String, mut j: usize| {
        while matches!(kind_at(j), Some(Word::Alphabet | Word::Number)) {
            push_lower(out, &words[j], connector);
            j += 1;
        }
        j
    };
    let mut i = 0;
    while i < words.len() {
        let kind = words[i].0;
        push_lower(&mut out, &words[i], connector);
        i += 1;
        if i >= words.len() {
            break;
        }
        match kind {
            Word::Number => {
                i = glue(&mut out, i);
                if joins(i) {
                    out.push(connector);
                }
            }
            Word::Connector | Word::Punct => {}
            _ if kind_at(i) != Some(Word::Number) => {
                if joins(i) {
                    out.push(connector);
                }
            }
            // A word, then a number that ends the text: glued (written next round).
            _ if i + 1 >= words.len() => {}
            // A word, then a number not followed by letters: the number is glued to the word.
            _ if kind_at(i + 1) != Some(Word::Alphabet) => {
                push_lower(&mut out, &words[i], connector);
                i += 1;
                if joins(i) {
                    out.push(connector);
                }
            }
            // A word, then a number with letters: the number starts a new word with them.
            _ => {
                out.push(connector);
                push_lower(&mut out, &words[i], connector);
                i = glue(&mut out, i + 1);
                if joins(i) {
                    out.push(connector);
                }
            }
        }
    }
    out
}

/// `camelcase`: connectors dropped before the character they precede, which becomes upper case, as does the
/// first character after leading connectors; runs of connectors keep all but their last; nothing is lowered.
pub(crate) fn camel(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() && is_connector(chars[i]) {
        out.push(chars[i]);
        i += 1;
    }
    if let Some(first) = chars.get(i) {
        out.extend(first.to_uppercase());
        i += 1;
    }
    while i < chars.len() {
        let c = chars[i];
        match chars.get(i + 1) {
            Some(&next) if is_connector(c) && !is_connector(next) => {
                out.extend(next.to_uppercase());
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Helm v3.11.3 answers: U+FFFD (or an invalid byte) joins its neighbour's word.
    #[test]
    fn replacement_characters_take_their_neighbours_class() {
        assert_eq!(lower_words("n\u{fffd}", '-'), "n\u{fffd}");
        assert_eq!(lower_words("n\u{fffd}x", '-'), "n\u{fffd}x");
        assert_eq!(lower_words("a\u{20ac}b", '_'), "a_\u{20ac}_b");
        assert_eq!(lower_words("n\u{dc}", '-'), "n-\u{fc}");
        assert_eq!(lower_words("\u{fffd}Ab", '_'), "\u{fffd}ab");
        assert_eq!(lower_words("A\u{fffd}B", '_'), "a\u{fffd}b");
    }

    #[test]
    fn snake_and_kebab_case_follow_xstrings() {
        let cases = [
            ("HTTPServer", "http_server"),
            ("_camelCase", "_camel_case"),
            ("NoHTTPS", "no_https"),
            ("Wi_thF", "wi_th_f"),
            ("_AnotherTES_TCaseP", "_another_tes_t_case_p"),
            ("ALL", "all"),
            ("_HELLO_WORLD_", "_hello_world_"),
            ("HELLO____WORLD", "hello____world"),
            ("TW", "tw"),
            ("_C", "_c"),
            ("http2xx", "http_2xx"),
            ("HTTP2XX", "http2_xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("HTTP20xStatus", "http_20x_status"),
            ("HTTP-20xStatus", "http_20x_status"),
            ("a", "a"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
            (" _-_ ", "_____"),
            ("a1b2c3d", "a_1b2c3d"),
            ("A//B%%2c", "a//b%%2c"),
            ("HTTP状态码404/502Error", "http_状态码404/502_error"),
            ("中文(字符)", "中文(字符)"),
            ("混合ABCWords与123数字456", "混合_abc_words_与123_数字456"),
            ("  sentence case  ", "__sentence_case__"),
            (
                " Mixed-hyphen case _and SENTENCE_case and UPPER-case",
                "_mixed_hyphen_case__and_sentence_case_and_upper_case",
            ),
            (
                "FROM CamelCase to snake/kebab-case",
                "from_camel_case_to_snake/kebab_case",
            ),
            ("", ""),
            ("abc_123_def", "abc_123_def"),
        ];
        for (input, want) in cases {
            assert_eq!(lower_words(input, '_'), want, "snakecase {input:?}");
            assert_eq!(
                lower_words(input, '-'),
                want.replace('_', "-"),
                "kebabcase {input:?}"
            );
        }
    }

    #[test]
    fn camel_case_follows_xstrings() {
        let cases = [
            ("http_server", "HttpServer"),
            ("_camel_case", "_CamelCase"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            (" complex -case ", " Complex Case "),
            ("all", "All"),
            ("GOLANG_IS_GREAT", "GOLANGISGREAT"),
            ("GOLANG", "GOLANG"),
            ("a", "A"),
            ("好", "好"),
            (
                "FROM CamelCase to snake/kebab-case",
                "FROMCamelCaseToSnake/kebabCase",
            ),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(camel(input), want, "camelcase {input:?}");
        }
    }
}
