//! Rendering of tool results as text for a model: TOON (default) or JSON, then truncation.
//!
//! Both renderers are byte-identical to the reference servers' JavaScript (`@toon-format/toon`
//! 2.0.1 `encode(value, { indent: 2 })` and `JSON.stringify(value, null, 2)`); see
//! docs/rendering.md for the parity facts and how the differential tests prove them.

pub mod json;
pub(crate) mod sink;
#[cfg(test)]
mod tests_depth;
#[cfg(test)]
mod tests_goldens;
#[cfg(test)]
mod tests_length;
#[cfg(test)]
mod tests_spec_fixtures;
#[cfg(test)]
mod tests_truncate;
pub(crate) mod toon;
pub mod truncate;

use crate::value::{Number, Value};
use std::fmt;
use std::str::FromStr;

pub use sink::{Bounded, Sink};
pub use truncate::{
    find_cut, find_cut_in, truncate, utf16_len, ArtifactRef, Cut, Truncated, DEFAULT_MAX_UNITS,
};

/// Containers nested deeper than this many levels render as `null`.
///
/// The renderers recurse once per level. The parser stops at [`crate::value::MAX_DEPTH`] (512),
/// but a projection can build deeper values; past this bound (twice the parser's) a value would
/// risk the 1 MiB wasm stack, and the reference itself would have failed with a stack overflow
/// long before, so there is no parity to keep.
pub(crate) const MAX_RENDER_DEPTH: usize = 2 * crate::value::MAX_DEPTH;

/// The text format of a tool result, chosen by the tool argument `outputFormat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// TOON, the reference servers' default.
    #[default]
    Toon,
    /// Two-space indented JSON.
    Json,
}

impl OutputFormat {
    /// The name used in the `outputFormat` argument.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Toon => "toon",
            OutputFormat::Json => "json",
        }
    }

    /// The format for an optional `outputFormat` argument: TOON when it is absent.
    pub(crate) fn from_arg(arg: Option<&str>) -> Result<OutputFormat, RenderError> {
        arg.map_or(Ok(OutputFormat::Toon), str::parse)
    }
}

impl FromStr for OutputFormat {
    type Err = RenderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "toon" => Ok(OutputFormat::Toon),
            "json" => Ok(OutputFormat::Json),
            other => Err(RenderError::UnknownFormat(other.to_owned())),
        }
    }
}

/// Why a result could not be rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenderError {
    /// `outputFormat` named a format other than `toon` or `json`.
    UnknownFormat(String),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::UnknownFormat(name) => {
                write!(f, "outputFormat must be \"toon\" or \"json\", not {name:?}")
            }
        }
    }
}

impl std::error::Error for RenderError {}

/// Writes `n` as JavaScript's `String(n)` does, with `non_finite` standing in for NaN and the
/// infinities (both renderers print `null` there).
#[inline]
pub(crate) fn write_number(n: &Number, non_finite: &str, out: &mut impl Sink) {
    if !out.keeps() {
        let len = crate::js::number::format_literal_len(n.literal(), n.as_f64());
        // ASCII: a unit a byte.
        out.count(len.unwrap_or(non_finite.len()));
        return;
    }
    match crate::js::number::format_literal(n.literal(), n.as_f64()) {
        Some(text) => out.push_str(text.as_str()),
        None => out.push_str(non_finite),
    }
}

/// Renders `value` as text in `format` (not truncated).
pub fn render(value: &Value, format: OutputFormat) -> String {
    let mut out = String::new();
    render_into(value, format, &mut out);
    out
}

/// Renders `value` in `format` for a text that will be cut at `max_units` UTF-16 units: the text
/// (only the kept prefix when it is cut) and the cut, exactly as [`find_cut`] on the full
/// rendering finds it, without ever holding the full rendering.
pub fn render_bounded(
    value: &Value,
    format: OutputFormat,
    max_units: usize,
) -> (String, Option<Cut>) {
    let mut sink = Bounded::new(max_units);
    render_into(value, format, &mut sink);
    sink.finish()
}

/// Appends the rendering of `value` in `format` to `out` (a `String`, which a caller may reuse
/// or presize, or a [`Bounded`] sink).
pub(crate) fn render_into(value: &Value, format: OutputFormat, out: &mut impl Sink) {
    match format {
        OutputFormat::Toon => toon::write_toon(value, out),
        OutputFormat::Json => json::write_json(value, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    #[test]
    fn output_format_argument() {
        assert_eq!(OutputFormat::from_arg(None), Ok(OutputFormat::Toon));
        assert_eq!(OutputFormat::from_arg(Some("json")), Ok(OutputFormat::Json));
        assert_eq!("toon".parse(), Ok(OutputFormat::Toon));
        let err = OutputFormat::from_arg(Some("JSON")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "outputFormat must be \"toon\" or \"json\", not \"JSON\""
        );
        assert_eq!(OutputFormat::Json.as_str(), "json");
    }

    /// A sink that keeps `bound` units and records what reaches it as text after that.
    struct Probe {
        bound: usize,
        written: usize,
        counted: usize,
        pieces_past: usize,
    }

    impl Sink for Probe {
        const HANDS_OVER: bool = true;
        fn push_str(&mut self, s: &str) {
            if self.keeps() {
                self.written += utf16_len(s);
            } else {
                self.counted += utf16_len(s);
                self.pieces_past += 1;
            }
        }
        fn push(&mut self, c: char) {
            self.push_str(c.encode_utf8(&mut [0; 4]));
        }
        fn keeps(&self) -> bool {
            self.written <= self.bound
        }
        fn count(&mut self, units: usize) {
            self.counted += units;
        }
    }

    /// Past its bound a sink is handed lengths, not text: only the few pieces that close the
    /// containers open at the bound reach it.
    #[test]
    fn past_the_bound_only_lengths_are_handed_over() {
        let item = r#"{"id":12,"url":"https://x.test/a:b","n":"é\t😀","t":[{"a":1,"b":"x"}]}"#;
        let src = format!(
            r#"{{"data":{{"items":[{}]}},"next":null}}"#,
            [item; 500].join(",")
        );
        let v = parse(&src).unwrap();
        for format in [OutputFormat::Toon, OutputFormat::Json] {
            let mut probe = Probe {
                bound: 1000,
                written: 0,
                counted: 0,
                pieces_past: 0,
            };
            render_into(&v, format, &mut probe);
            let whole = utf16_len(&render(&v, format));
            assert_eq!(probe.written + probe.counted, whole, "{format:?}");
            assert!(probe.pieces_past < 10, "{format:?}: {}", probe.pieces_past);
        }
    }

    #[test]
    fn renders_both_formats() {
        let v = parse(r#"{"id":1,"tags":["a","b"]}"#).unwrap();
        assert_eq!(render(&v, OutputFormat::Toon), "id: 1\ntags[2]: a,b");
        assert_eq!(
            render(&v, OutputFormat::Json),
            "{\n  \"id\": 1,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}"
        );
    }
}
