//! Truncation at the reference's bound: exact fits, the newline window's edges and astral
//! characters at the cut.

use crate::render::{find_cut, truncate, utf16_len, ArtifactRef, DEFAULT_MAX_UNITS};

const MAX: usize = DEFAULT_MAX_UNITS;
const MARKER: &str = "\n---\n## Response Truncated\n";

/// `len` units of ASCII filler with a newline at each of `newlines`.
fn text_with_newlines(len: usize, newlines: &[usize]) -> String {
    let mut bytes = vec![b'a'; len];
    for &at in newlines {
        bytes[at] = b'\n';
    }
    String::from_utf8(bytes).unwrap()
}

fn kept(text: &str) -> &str {
    let t = truncate(text, MAX, None);
    match t.text {
        std::borrow::Cow::Borrowed(s) => s,
        std::borrow::Cow::Owned(_) => {
            let cut = t.cut.unwrap();
            &text[..cut.kept_bytes]
        }
    }
}

#[test]
fn exactly_at_the_bound_is_untouched() {
    let text = text_with_newlines(MAX, &[100]);
    let t = truncate(&text, MAX, None);
    assert_eq!(t.cut, None);
    assert_eq!(t.text, text.as_str());
    let over = text_with_newlines(MAX + 1, &[]);
    assert!(truncate(&over, MAX, None).text.contains(MARKER));
}

#[test]
fn no_newline_in_the_window_cuts_at_the_bound() {
    let text = text_with_newlines(MAX + 10, &[]);
    assert_eq!(kept(&text).len(), MAX);
}

#[test]
fn newline_at_39500_is_outside_the_window() {
    let text = text_with_newlines(MAX + 10, &[39_500]);
    assert_eq!(kept(&text).len(), MAX);
}

#[test]
fn newline_at_39501_is_the_cut() {
    let text = text_with_newlines(MAX + 10, &[39_501]);
    assert_eq!(kept(&text).len(), 39_501);
    assert!(!kept(&text).ends_with('\n'));
}

#[test]
fn the_last_newline_in_the_window_wins() {
    let text = text_with_newlines(MAX + 10, &[39_600, 39_900, 40_001]);
    assert_eq!(kept(&text).len(), 39_900);
}

#[test]
fn newline_exactly_at_the_bound_is_found() {
    let text = text_with_newlines(MAX + 10, &[39_700, MAX]);
    assert_eq!(kept(&text).len(), MAX);
    let cut = find_cut(&text, MAX).unwrap();
    assert_eq!((cut.kept_units, cut.original_units), (MAX, MAX + 10));
}

#[test]
fn astral_character_straddling_the_bound_is_dropped_whole() {
    // 39,999 units of ASCII, then a surrogate pair at units 39,999..40,001.
    let text = format!("{}😀{}", "a".repeat(MAX - 1), "b".repeat(10));
    let cut = find_cut(&text, MAX).unwrap();
    assert_eq!(cut.kept_units, MAX - 1);
    assert_eq!(cut.kept_bytes, MAX - 1);
    assert_eq!(cut.original_units, MAX + 11);
}

#[test]
fn astral_character_ending_at_the_bound_is_kept() {
    let text = format!("{}😀{}", "a".repeat(MAX - 2), "b".repeat(10));
    let cut = find_cut(&text, MAX).unwrap();
    assert_eq!(cut.kept_units, MAX);
    assert!(text[..cut.kept_bytes].ends_with('😀'));
}

#[test]
fn multibyte_text_is_counted_in_utf16_units() {
    // 'é' is 2 UTF-8 bytes and 1 UTF-16 unit: 40,000 of them fit.
    let text = "é".repeat(MAX);
    assert_eq!(utf16_len(&text), MAX);
    assert_eq!(truncate(&text, MAX, None).cut, None);
    let text = "é".repeat(MAX + 1);
    let cut = find_cut(&text, MAX).unwrap();
    assert_eq!((cut.kept_units, cut.kept_bytes), (MAX, 2 * MAX));
}

#[test]
fn newline_search_counts_astral_units() {
    // Astral characters before the newline shift its UTF-16 index by one each.
    let mut text = "😀".repeat(100);
    text.push_str(&"a".repeat(39_350));
    text.push('\n'); // at unit 200 + 39,350 = 39,550
    text.push_str(&"b".repeat(1_000));
    let cut = find_cut(&text, MAX).unwrap();
    assert_eq!(cut.kept_units, 39_550);
    assert_eq!(cut.kept_bytes, 400 + 39_350);
}

#[test]
fn guidance_block_reports_rounded_sizes_and_the_artifact() {
    let text = text_with_newlines(100_000, &[39_999]);
    let artifact = ArtifactRef {
        id: "art_123".to_owned(),
    };
    let t = truncate(&text, MAX, Some(&artifact));
    let (head, guidance) = t.text.split_at(39_999);
    assert!(head.bytes().all(|b| b == b'a'));
    assert_eq!(
        guidance,
        "\n---\n## Response Truncated\n\nThis response was truncated to ~10k tokens (40% of \
         original 100k chars).\n\n**To access the complete data:**\n- The full response is saved \
         as artifact `art_123`: read it with the `artifact_read` tool\n- Consider refining your \
         request with more specific filters or selecting fewer fields\n- For paginated data, use \
         smaller page sizes or specific identifiers\n- When searching, use more targeted queries \
         to reduce result sets"
    );
    let without = truncate(&text, MAX, None);
    assert!(!without.text.contains("artifact"));
}

#[test]
fn a_custom_bound_applies_the_same_rule() {
    let text = text_with_newlines(2_000, &[600]);
    // Window is (1000 - 500, 1000]: the newline at 600 lies in it.
    assert_eq!(find_cut(&text, 1_000).unwrap().kept_units, 600);
    // With a bound below 500 the window starts at 0.
    assert_eq!(find_cut(&text, 300).unwrap().kept_units, 300);
}
