//! Rendering of tool results as text for a model: TOON (default) or JSON, then truncation.
//!
//! Both renderers are byte-identical to the reference servers' JavaScript (`@toon-format/toon`
//! 2.0.1 `encode(value, { indent: 2 })` and `JSON.stringify(value, null, 2)`); see
//! docs/rendering.md for the parity facts and how the differential tests prove them.

pub mod json;
pub mod sink;
pub mod toon;
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
pub const MAX_RENDER_DEPTH: usize = 2 * crate::value::MAX_DEPTH;

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
    pub fn from_arg(arg: Option<&str>) -> Result<OutputFormat, RenderError> {
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
pub fn write_number(n: &Number, non_finite: &str, out: &mut impl Sink) {
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
pub fn render_into(value: &Value, format: OutputFormat, out: &mut impl Sink) {
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
