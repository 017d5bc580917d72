//! Truncation of rendered text to the reference servers' bound, with their guidance block.
//!
//! The rule (`truncateForAI` in the reference servers): text longer than the bound, counted in
//! UTF-16 code units as JavaScript's `.length` counts, is cut at the last `\n` at or before unit
//! index `max` when that newline lies after index `max - 500`, else at `max` exactly; the cut
//! text is followed by a fixed guidance block. Where the reference names a local file holding the
//! raw response, we name the artifact holding the full value, when the caller saved one.
//!
//! Finding the cut ([`find_cut`]) and writing the result ([`Cut::apply`]) are separate so a caller
//! can save the artifact only once it knows the text will be cut.

use std::borrow::Cow;

/// The reference's default bound, in UTF-16 code units (`MCP_TEXT_MAX_CHARS` overrides it).
pub const DEFAULT_MAX_UNITS: usize = 40_000;

/// How far before the bound a newline may lie and still be the cut point.
const NEWLINE_WINDOW: usize = 500;

/// The guidance lines that follow the optional artifact line, as the reference writes them.
const ADVICE: &str =
    "\n- Consider refining your request with more specific filters or selecting fewer fields\
\n- For paginated data, use smaller page sizes or specific identifiers\
\n- When searching, use more targeted queries to reduce result sets";

/// A stored copy of the full value that the guidance block points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRef {
    /// The artifact id, as `artifact_read` accepts it.
    pub id: String,
}

impl ArtifactRef {
    /// The guidance line naming this artifact (it takes the place of the reference's line naming
    /// a local file).
    pub fn guidance_line(&self) -> String {
        format!(
            "- The full response is saved as artifact `{}`: read it with the `artifact_read` tool",
            self.id
        )
    }
}

/// Where a text is cut: the kept prefix and the sizes the guidance block reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Length of the kept prefix in bytes (always on a UTF-8 character boundary).
    pub(crate) kept_bytes: usize,
    /// Length of the kept prefix in UTF-16 code units.
    pub(crate) kept_units: usize,
    /// Length of the whole text in UTF-16 code units.
    pub(crate) original_units: usize,
}

/// A text after truncation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncated<'a> {
    /// The text to show: the input itself when it fits, else the kept prefix and guidance.
    pub text: Cow<'a, str>,
    /// The cut, when one was made.
    pub(crate) cut: Option<Cut>,
}

pub use crate::js::utf16_len;

/// Where `text` must be cut to fit `max_units`, or `None` when it fits.
///
/// Unlike the reference, a cut never splits a surrogate pair: when unit `max_units` falls inside
/// an astral character, that character is dropped whole.
pub fn find_cut(text: &str, max_units: usize) -> Option<Cut> {
    find_cut_in(text, utf16_len(text), max_units)
}

/// [`find_cut`] for a text of `original_units` UTF-16 units of which `prefix` holds at least
/// every character that starts at or before unit index `max_units` (all the rule ever reads), so
/// a caller need not keep the rest of a long text (see [`super::sink::Bounded`]).
pub fn find_cut_in(prefix: &str, original_units: usize, max_units: usize) -> Option<Cut> {
    let text = prefix;
    if original_units <= max_units {
        return None;
    }
    // The character boundary at or just before unit index `max_units`: whole ASCII words first
    // (one unit a byte), then character by character.
    let bytes = text.as_bytes();
    let mut units = 0;
    while units + 8 <= max_units {
        match bytes.get(units..units + 8) {
            Some(word) if word.is_ascii() => units += 8,
            _ => break,
        }
    }
    // Only ASCII is behind, so the byte offset is the unit count.
    let start = units;
    let mut bound = text.len();
    for (i, c) in text.get(start..).unwrap_or_default().char_indices() {
        let width = c.len_utf16();
        if units + width > max_units {
            bound = start + i;
            break;
        }
        units += width;
    }
    let window_start = max_units.saturating_sub(NEWLINE_WINDOW);
    // `lastIndexOf('\n', max)` also finds a newline exactly at index `max`.
    if units == max_units && text.as_bytes().get(bound) == Some(&b'\n') && units > window_start {
        return Some(Cut {
            kept_bytes: bound,
            kept_units: units,
            original_units,
        });
    }
    let mut at = units;
    for (i, c) in text.get(..bound).unwrap_or_default().char_indices().rev() {
        at -= c.len_utf16();
        if at <= window_start {
            break;
        }
        if c == '\n' {
            return Some(Cut {
                kept_bytes: i,
                kept_units: at,
                original_units,
            });
        }
    }
    Some(Cut {
        kept_bytes: bound,
        kept_units: units,
        original_units,
    })
}

impl Cut {
    /// The kept prefix of `text` (the text this cut was found in) followed by the guidance block.
    pub fn apply(&self, text: &str, artifact: Option<&ArtifactRef>) -> String {
        let kept = text.get(..self.kept_bytes).unwrap_or(text);
        let kept_units = self.kept_units as f64;
        let original = self.original_units as f64;
        // `Math.round` of positive values, which `f64::round` matches (ties go up either way).
        let tokens_k = (kept_units / 4000.0).round() as u64;
        let percent = (kept_units / original * 100.0).round() as u64;
        let original_k = (original / 1000.0).round() as u64;
        let mut out = String::with_capacity(kept.len() + 600);
        out.push_str(kept);
        out.push_str("\n---\n## Response Truncated\n\nThis response was truncated to ~");
        out.push_str(&format!(
            "{tokens_k}k tokens ({percent}% of original {original_k}k chars)."
        ));
        out.push_str("\n\n**To access the complete data:**");
        if let Some(artifact) = artifact {
            out.push('\n');
            out.push_str(&artifact.guidance_line());
        }
        out.push_str(ADVICE);
        out
    }
}

/// Truncates `text` to `max_units` UTF-16 code units with the reference's rule and guidance
/// block, naming `artifact` when the caller saved the full value.
pub fn truncate<'a>(
    text: &'a str,
    max_units: usize,
    artifact: Option<&ArtifactRef>,
) -> Truncated<'a> {
    match find_cut(text, max_units) {
        None => Truncated {
            text: Cow::Borrowed(text),
            cut: None,
        },
        Some(cut) => Truncated {
            text: Cow::Owned(cut.apply(text, artifact)),
            cut: Some(cut),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_borrowed_unchanged() {
        let t = truncate("abc", 3, None);
        assert!(matches!(t.text, Cow::Borrowed("abc")));
        assert_eq!(t.cut, None);
    }

    #[test]
    fn small_bound_cuts_with_guidance() {
        let cut = find_cut("ab\ncdef", 5).unwrap();
        // The newline at index 2 lies after max(0, 5 - 500) = 0.
        assert_eq!(
            (cut.kept_bytes, cut.kept_units, cut.original_units),
            (2, 2, 7)
        );
        let text = cut.apply("ab\ncdef", Some(&ArtifactRef { id: "a1".into() }));
        assert_eq!(
            text,
            "ab\n---\n## Response Truncated\n\nThis response was truncated to ~0k tokens (29% of \
             original 0k chars).\n\n**To access the complete data:**\n- The full response is saved \
             as artifact `a1`: read it with the `artifact_read` tool\n- Consider refining your \
             request with more specific filters or selecting fewer fields\n- For paginated data, \
             use smaller page sizes or specific identifiers\n- When searching, use more targeted \
             queries to reduce result sets"
        );
    }

    /// The rule on UTF-16 units, as the reference applies it (except that a surrogate pair is
    /// never split): the kept units, or `None` when the text fits.
    fn reference_kept_units(text: &str, max: usize) -> Option<usize> {
        let units: Vec<u16> = text.encode_utf16().collect();
        if units.len() <= max {
            return None;
        }
        let last_newline = units[..=max].iter().rposition(|&u| u == u16::from(b'\n'));
        match last_newline {
            Some(at) if at > max.saturating_sub(NEWLINE_WINDOW) => Some(at),
            // The bound, one unit earlier when it would split a surrogate pair.
            _ if (0xDC00..0xE000).contains(&units[max]) => Some(max - 1),
            _ => Some(max),
        }
    }

    #[test]
    fn cuts_match_the_rule_on_utf16_units() {
        let line = "ascii line of some length\n";
        let texts = [
            line.repeat(200),
            "x".repeat(3000),
            "é".repeat(1500) + &"a\n".repeat(700),
            "abcdefg😀".repeat(400),
            line.repeat(30) + &"😀".repeat(900) + "\n" + &"b".repeat(900),
        ];
        for text in &texts {
            for max in [
                0, 1, 7, 8, 9, 15, 16, 17, 499, 500, 501, 777, 1000, 1024, 2000, 2047,
            ] {
                let cut = find_cut(text, max);
                assert_eq!(
                    cut.map(|c| c.kept_units),
                    reference_kept_units(text, max),
                    "max {max}"
                );
                if let Some(cut) = cut {
                    assert_eq!(utf16_len(&text[..cut.kept_bytes]), cut.kept_units);
                }
            }
        }
    }

    #[test]
    fn newline_at_index_zero_is_not_after_the_window_start() {
        let cut = find_cut("\nabcdef", 3).unwrap();
        assert_eq!(cut.kept_bytes, 3);
    }
}
