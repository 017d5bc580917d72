//! One log line made readable: the runner's timestamp prefix, ANSI escape sequences, carriage
//! returns and other control characters removed, invalid UTF-8 replaced, and the GitHub workflow
//! markers (`##[group]`, `##[endgroup]`, `##[error]`) recognised.

use crate::time::parse_iso8601_seconds;

/// Longest line text an excerpt shows, in characters; longer lines are cut with a marker saying
/// how much was left out.
pub(crate) const MAX_TEXT_CHARS: usize = 400;

/// Marker of a step section's start in GitHub logs.
pub(crate) const GROUP: &str = "##[group]";
/// Marker of a section's end in GitHub logs.
pub(crate) const END_GROUP: &str = "##[endgroup]";
/// Marker of an error line in GitHub logs.
pub(crate) const ERROR: &str = "##[error]";

/// What a line means to the excerpt besides its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Output.
    Plain,
    /// `##[group]<title>`: a section starts (a step's header, or a group a script opened).
    GroupStart,
    /// `##[endgroup]`.
    GroupEnd,
    /// `##[error]<message>`.
    Error,
}

/// What [`clean`] learnt about a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cleaned {
    /// The line's timestamp in whole Unix seconds, when it had one.
    pub(crate) seconds: Option<u64>,
    /// The marker it carries.
    pub kind: Kind,
}

/// Cleans `raw` (one line, without its `\n`) into `out`, which is cleared first.
pub(crate) fn clean(raw: &[u8], out: &mut String) -> Cleaned {
    out.clear();
    let mut raw = raw;
    while let Some(rest) = raw.strip_suffix(b"\r") {
        raw = rest;
    }
    if let Some(rest) = raw.strip_prefix("\u{feff}".as_bytes()) {
        raw = rest;
    }
    let seconds = timestamp(raw).map(|(seconds, len)| {
        raw = &raw[len..];
        seconds
    });
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == 0x1b {
            i = skip_escape(raw, i);
            continue;
        }
        if b == b'\t' || (b >= 0x20 && b != 0x7f) {
            bytes.push(b);
        }
        i += 1;
    }
    out.push_str(&String::from_utf8_lossy(&bytes));
    let kind = if out.starts_with(GROUP) {
        Kind::GroupStart
    } else if out.starts_with(END_GROUP) {
        Kind::GroupEnd
    } else if out.starts_with(ERROR) {
        Kind::Error
    } else {
        Kind::Plain
    };
    Cleaned { seconds, kind }
}

/// A leading `2026-01-01T00:00:05.1234567Z ` (GitHub's runner stamp): its seconds and length,
/// the one space after it included.
fn timestamp(raw: &[u8]) -> Option<(u64, usize)> {
    let z = raw.iter().take(40).position(|&b| b == b'Z')?;
    let stamp = std::str::from_utf8(&raw[..=z]).ok()?;
    let seconds = parse_iso8601_seconds(stamp)?;
    let len = if raw.get(z + 1) == Some(&b' ') {
        z + 2
    } else {
        z + 1
    };
    Some((seconds, len))
}

/// The index after the escape sequence starting at `raw[at]` (ESC): CSI (`ESC [` parameters,
/// intermediates, one final byte), OSC (`ESC ]` up to BEL or `ESC \`), or ESC, intermediates
/// and one byte.
fn skip_escape(raw: &[u8], at: usize) -> usize {
    match raw.get(at + 1) {
        Some(b'[') => {
            let mut i = at + 2;
            while i < raw.len() && !(0x40..=0x7e).contains(&raw[i]) {
                i += 1;
            }
            (i + 1).min(raw.len())
        }
        Some(b']') => {
            let mut i = at + 2;
            while i < raw.len() {
                if raw[i] == 0x07 {
                    return i + 1;
                }
                if raw[i] == 0x1b && raw.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            raw.len()
        }
        Some(_) => {
            // nF sequences (`ESC ( B`): intermediate bytes, then one final byte.
            let mut i = at + 1;
            while raw.get(i).is_some_and(|b| (0x20..=0x2f).contains(b)) {
                i += 1;
            }
            (i + 1).min(raw.len())
        }
        None => at + 1,
    }
}

/// `text` as an excerpt shows it: at most [`MAX_TEXT_CHARS`] characters, then ` …[+N chars]`.
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let left = text[cut..].chars().count();
            format!("{} …[+{left} chars]", &text[..cut])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cleaned(raw: &[u8]) -> (String, Cleaned) {
        let mut out = String::from("left over");
        let c = clean(raw, &mut out);
        (out, c)
    }

    #[test]
    fn cleans_lines() {
        let cases: [(&[u8], &str, Option<u64>, Kind); 10] = [
            (
                b"2026-01-01T00:00:05.1234567Z ##[group]Run cargo build\r",
                "##[group]Run cargo build",
                Some(1_767_225_605),
                Kind::GroupStart,
            ),
            (
                b"2026-01-01T00:00:05.1234567Z \x1b[1m\x1b[91merror[E0308]\x1b[0m: mismatched types",
                "error[E0308]: mismatched types",
                Some(1_767_225_605),
                Kind::Plain,
            ),
            (
                b"2026-01-01T00:00:06Z ##[error]Process completed with exit code 101.",
                "##[error]Process completed with exit code 101.",
                Some(1_767_225_606),
                Kind::Error,
            ),
            (b"##[endgroup]", "##[endgroup]", None, Kind::GroupEnd),
            (
                "\u{feff}2026-01-01T00:00:00.0000000Z Grüße, 世界".as_bytes(),
                "Grüße, 世界",
                Some(1_767_225_600),
                Kind::Plain,
            ),
            (b"bad \xff byte", "bad \u{fffd} byte", None, Kind::Plain),
            (
                b"\x1b]8;;https://x.example\x07link\x1b]8;;\x1b\\ done",
                "link done",
                None,
                Kind::Plain,
            ),
            (b"tab\there\x08\x00 \x1b(Bx", "tab\there x", None, Kind::Plain),
            (b"cut at the end \x1b[", "cut at the end ", None, Kind::Plain),
            (
                b"2026-99-01T00:00:05Z not a stamp",
                "2026-99-01T00:00:05Z not a stamp",
                None,
                Kind::Plain,
            ),
        ];
        for (raw, text, seconds, kind) in cases {
            let (out, c) = cleaned(raw);
            assert_eq!(out, text, "{raw:?}");
            assert_eq!(c, Cleaned { seconds, kind }, "{raw:?}");
        }
    }

    #[test]
    fn shortens_long_lines_on_character_boundaries() {
        assert_eq!(shorten("short"), "short");
        let long = "é".repeat(MAX_TEXT_CHARS + 7);
        let short = shorten(&long);
        assert!(short.starts_with(&"é".repeat(MAX_TEXT_CHARS)));
        assert!(short.ends_with(" …[+7 chars]"), "{short}");
        assert_eq!(
            shorten(&"x".repeat(MAX_TEXT_CHARS)),
            "x".repeat(MAX_TEXT_CHARS)
        );
    }
}
