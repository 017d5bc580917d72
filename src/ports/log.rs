//! The one shape of a log line: single-line JSON `{"level":..,"event":..,<fields>}`, bounded in
//! size. Fields carry what callers and upstreams sent (paths, origins, error texts), so every
//! string is cut to [`MAX_VALUE_BYTES`] with a marker and the line stays under
//! [`MAX_LINE_BYTES`] however many fields it has.

use crate::value::write_json_string;
use std::borrow::Cow;

/// The longest string value (and field name) kept whole, in bytes; longer ones are cut at a
/// character boundary and end with a marker giving the original length.
pub const MAX_VALUE_BYTES: usize = 1024;

/// The longest line, in bytes. A field that would pass it is left out and counted in
/// `omittedFields`. Larger than one cut value at its worst escaping (six bytes a byte), so the
/// first field always fits.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// Room kept for `,"omittedFields":N}`.
const TAIL_BYTES: usize = 40;

/// How serious a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Normal operation worth recording (decisions, upstream calls).
    Info,
    /// Something went wrong for one request, or a setting was adjusted.
    Warn,
    /// The server is misconfigured or a dependency failed.
    Error,
}

impl Level {
    /// The `level` value written.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    /// A string, cut to [`MAX_VALUE_BYTES`].
    Str(&'a str),
    /// A non-negative integer.
    Int(u64),
    /// A boolean.
    Bool(bool),
    /// `null` (an absent optional value).
    Null,
}

impl<'a> From<&'a str> for Field<'a> {
    fn from(value: &'a str) -> Field<'a> {
        Field::Str(value)
    }
}

impl<'a> From<&'a String> for Field<'a> {
    fn from(value: &'a String) -> Field<'a> {
        Field::Str(value)
    }
}

impl From<u64> for Field<'_> {
    fn from(value: u64) -> Self {
        Field::Int(value)
    }
}

impl From<u16> for Field<'_> {
    fn from(value: u16) -> Self {
        Field::Int(value.into())
    }
}

impl From<usize> for Field<'_> {
    fn from(value: usize) -> Self {
        Field::Int(u64::try_from(value).unwrap_or(u64::MAX))
    }
}

impl From<bool> for Field<'_> {
    fn from(value: bool) -> Self {
        Field::Bool(value)
    }
}

impl<'a, T: Into<Field<'a>>> From<Option<T>> for Field<'a> {
    fn from(value: Option<T>) -> Field<'a> {
        value.map_or(Field::Null, Into::into)
    }
}

/// The line for `event` at `level` with `fields` in order, within [`MAX_LINE_BYTES`].
pub(crate) fn format(level: Level, event: &str, fields: &[(&str, Field<'_>)]) -> String {
    let mut line = String::with_capacity(96);
    line.push_str("{\"level\":\"");
    line.push_str(level.as_str());
    line.push_str("\",\"event\":");
    write_json_string(&cut(event), &mut line);
    let mut part = String::new();
    let mut omitted = 0usize;
    for (name, value) in fields {
        part.clear();
        part.push(',');
        write_json_string(&cut(name), &mut part);
        part.push(':');
        match value {
            Field::Str(text) => write_json_string(&cut(text), &mut part),
            Field::Int(n) => part.push_str(&n.to_string()),
            Field::Bool(b) => part.push_str(if *b { "true" } else { "false" }),
            Field::Null => part.push_str("null"),
        }
        if line.len() + part.len() + TAIL_BYTES > MAX_LINE_BYTES {
            omitted += 1;
        } else {
            line.push_str(&part);
        }
    }
    if omitted > 0 {
        line.push_str(",\"omittedFields\":");
        line.push_str(&omitted.to_string());
    }
    line.push('}');
    line
}

/// `text` whole when short, else its first [`MAX_VALUE_BYTES`] (at a character boundary) and a
/// marker with the full length.
fn cut(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_VALUE_BYTES {
        return Cow::Borrowed(text);
    }
    let mut end = MAX_VALUE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…[cut, {} bytes]", &text[..end], text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value as Json};

    fn parse(line: &str) -> Json {
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    #[test]
    fn fields_follow_level_and_event_in_order() {
        let line = format(
            Level::Warn,
            "upstream",
            &[
                ("path", "/a\"b".into()),
                ("status", Some(502u16).into()),
                ("rule", Option::<&str>::None.into()),
                ("bytes", 3usize.into()),
                ("hit", true.into()),
            ],
        );
        assert_eq!(
            line,
            r#"{"level":"warn","event":"upstream","path":"/a\"b","status":502,"rule":null,"bytes":3,"hit":true}"#
        );
    }

    #[test]
    fn a_long_value_is_cut_with_a_marker() {
        let path = format!("/{}", "é".repeat(1 << 20));
        let line = format(
            Level::Info,
            "policy_decision",
            &[("path", path.as_str().into())],
        );
        assert!(line.len() < MAX_LINE_BYTES, "{}", line.len());
        let value = parse(&line)["path"].as_str().unwrap().to_owned();
        assert!(value.starts_with("/éé"));
        assert!(
            value.ends_with(&format!("…[cut, {} bytes]", path.len())),
            "{value}"
        );
        assert!(value.len() <= MAX_VALUE_BYTES + 32);
    }

    #[test]
    fn many_long_values_keep_the_line_bounded_and_count_what_was_left_out() {
        let control = "\u{1}".repeat(10_000);
        let fields: Vec<(&str, Field<'_>)> =
            (0..20).map(|_| ("x", control.as_str().into())).collect();
        let line = format(Level::Error, "e", &fields);
        assert!(line.len() <= MAX_LINE_BYTES, "{}", line.len());
        let record = parse(&line);
        assert_eq!(record["level"], json!("error"));
        assert!(record["omittedFields"].as_u64().unwrap() >= 19, "{record}");
    }

    #[test]
    fn a_long_field_name_or_event_is_cut_too() {
        let name = "n".repeat(50_000);
        let line = format(Level::Info, &name, &[(name.as_str(), Field::Null)]);
        assert!(line.len() < 3 * MAX_VALUE_BYTES, "{}", line.len());
        parse(&line);
    }
}
