//! JavaScript strings: what `trim()` removes, `.length` in UTF-16 units, the order of `<`, and
//! the string literals `JSON.stringify` writes.

use std::cmp::Ordering;

/// What JavaScript's `String.prototype.trim` removes: WhiteSpace and LineTerminator (not U+0085,
/// which Unicode counts as whitespace; U+FEFF yes).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// Whether `text.trim() === ''`.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(is_js_whitespace)
}

/// `String.prototype.trimStart`.
pub fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

/// Length of `text` in UTF-16 code units (JavaScript's `.length`).
pub fn utf16_len(text: &str) -> usize {
    // Every character starts with one non-continuation byte and counts one unit, except the
    // four-byte (astral) ones, which are surrogate pairs: two units. Eight bytes at a time: the
    // renderers count every piece of a long text past its cut, and most of it is ASCII.
    let bytes = text.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let mut units = 0;
    for chunk in &mut words {
        units += word_units(word(chunk));
    }
    units
        + words
            .remainder()
            .iter()
            .map(|&b| byte_units(b))
            .sum::<usize>()
}

/// [`utf16_len`] of `text` when none of its bytes needs an escape in a JSON string (a control
/// character, `"` or `\\`), else `None`: both in one pass, for the lengths of quoted strings,
/// which seldom need an escape.
pub fn utf16_len_unescaped(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let mut units = 0;
    for chunk in &mut words {
        let x = word(chunk);
        if escape_hits(x) != 0 {
            return None;
        }
        units += word_units(x);
    }
    for &b in words.remainder() {
        if b < 0x20 || b == b'"' || b == b'\\' {
            return None;
        }
        units += byte_units(b);
    }
    Some(units)
}

#[inline(always)]
fn word(chunk: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    u64::from_le_bytes(word)
}

/// UTF-16 units of the characters that start in the eight bytes of `x`.
#[inline(always)]
fn word_units(x: u64) -> usize {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    if x & HIGHS == 0 {
        return 8;
    }
    // High bit of each byte: set for a continuation byte (10xxxxxx), and for a four-byte lead
    // (11110xxx).
    let continuation = x & !(x << 1) & HIGHS;
    let astral = x & (x << 1) & (x << 2) & (x << 3) & HIGHS;
    8 - continuation.count_ones() as usize + astral.count_ones() as usize
}

/// UTF-16 units of the character that starts at byte `b`, if one does.
#[inline(always)]
fn byte_units(b: u8) -> usize {
    usize::from((b & 0xc0) != 0x80) + usize::from(b >= 0xf0)
}

/// String order of JavaScript's `<` and of `Array.prototype.sort`: by UTF-16 code units.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order equals code point order; it differs from code unit order only where an
    // astral character meets U+E000..U+FFFF, which the slow path handles.
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a.as_bytes()[common..], &b.as_bytes()[common..]);
    match (ra.first(), rb.first()) {
        (Some(&x), Some(&y)) if x >= 0xee || y >= 0xee => a.encode_utf16().cmp(b.encode_utf16()),
        _ => ra.cmp(rb),
    }
}

/// Writes `s` as a JSON string literal with `JSON.stringify`'s escapes, handing the text to
/// `push` in pieces (so any output, a `String` or a renderer's sink, takes it without a copy).
pub fn write_json_string(s: &str, mut push: impl FnMut(&str)) {
    push("\"");
    write_json_chars(s, &mut push);
    push("\"");
}

/// Writes `s` escaped as [`write_json_string`] does, without the quotes: the inside of a JSON
/// string, which may be written a slice at a time (every escape stands for one byte).
pub fn write_json_chars(s: &str, mut push: impl FnMut(&str)) {
    let bytes = s.as_bytes();
    let mut start = 0;
    loop {
        let i = next_escape(bytes, start);
        push(s.get(start..i).unwrap_or_default());
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'"' => push("\\\""),
            b'\\' => push("\\\\"),
            b'\n' => push("\\n"),
            b'\r' => push("\\r"),
            b'\t' => push("\\t"),
            0x08 => push("\\b"),
            0x0c => push("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let code = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ];
                // Six ASCII bytes.
                push(std::str::from_utf8(&code).unwrap_or_default());
            }
        }
        start = i + 1;
    }
}

/// The length in bytes of what [`write_json_string`] writes for `s`, without writing it.
pub fn json_string_len(s: &str) -> usize {
    // The quotes, and every byte once; an escape adds to that.
    s.len() + 2 + json_escapes_extra(s.as_bytes())
}

/// The length in UTF-16 units of what [`write_json_string`] writes for `s`, without writing it.
pub fn json_string_units(s: &str) -> usize {
    // Escapes are ASCII: they add as many units as bytes.
    match utf16_len_unescaped(s) {
        Some(units) => units + 2,
        None => utf16_len(s) + 2 + json_escapes_extra(s.as_bytes()),
    }
}

/// What the escapes of [`write_json_string`] add to `bytes`: one for a two-character escape,
/// five for a `\u00XX` one.
fn json_escapes_extra(bytes: &[u8]) -> usize {
    let mut extra = 0;
    let mut i = next_escape(bytes, 0);
    while let Some(&b) = bytes.get(i) {
        extra += match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            _ => 5,
        };
        i = next_escape(bytes, i + 1);
    }
    extra
}

/// The index of the first byte at or after `from` that needs an escape (a control character,
/// `"` or `\`: also where a JSON string's plain run ends), or `bytes.len()`.
///
/// Eight bytes at a time: most strings (keys, URLs, names, dates) need no escape at all. All the
/// bytes it looks for are ASCII, so the index is never inside a multi-byte UTF-8 sequence.
pub fn next_escape(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let hits = escape_hits(u64::from_le_bytes(word));
        if hits != 0 {
            return i + first_hit(hits);
        }
        i += 8;
    }
    // The tail, fewer than eight bytes: short keys and values end here, so it is checked as one
    // word too, its bytes at the bottom and harmless ones above them. A long text's last eight
    // bytes are loaded at once and shifted down; a short one is assembled in a register (a copy
    // through memory would stall the load that follows).
    let tail_len = bytes.len().saturating_sub(i);
    if tail_len == 0 {
        return bytes.len();
    }
    const PLAIN: u64 = u64::from_le_bytes([b'a'; 8]);
    let word = match bytes.get(bytes.len().saturating_sub(8)..) {
        Some(last) if last.len() == 8 => <[u8; 8]>::try_from(last).map_or(PLAIN, |last| {
            // 1..=7 bytes below the tail to drop.
            let below = 8 * (8 - tail_len as u32);
            (u64::from_le_bytes(last) >> below) | (PLAIN << (64 - below))
        }),
        _ => bytes
            .get(i..)
            .unwrap_or_default()
            .iter()
            .rev()
            .fold(PLAIN, |w, &b| (w << 8) | u64::from(b)),
    };
    match escape_hits(word) {
        0 => bytes.len(),
        hits => i + first_hit(hits),
    }
}

/// The high bit of each of the eight bytes (little-endian) that is a control character, `"` or
/// `\\`, and possibly of bytes above such a one (SWAR: each term has a high bit set when a byte
/// is below 0x20, or zero after the xor; a borrow can only spill upwards from a byte that is
/// one), so the lowest bit set is exact.
#[inline(always)]
fn escape_hits(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let hits = (x.wrapping_sub(ONES * 0x20) & !x)
        | (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash);
    hits & HIGHS
}

/// The index in its word of the lowest byte [`escape_hits`] marks.
#[inline(always)]
fn first_hit(hits: u64) -> usize {
    (hits.trailing_zeros() / 8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(s: &str) -> String {
        let mut out = String::new();
        write_json_string(s, |piece| out.push_str(piece));
        out
    }

    #[test]
    fn string_escapes_match_json_stringify() {
        assert_eq!(
            literal("a\"\\\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é😀\u{2028}"),
            "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é😀\u{2028}\""
        );
        assert_eq!(literal(""), "\"\"");
    }

    #[test]
    fn lengths_of_literals_agree_with_the_literals() {
        let pieces = [
            "a", "é", "日", "😀", "\"", "\\", "\n", "\u{1}", "\u{7f}", "\u{2028}",
        ];
        for len in 0..20 {
            for (k, piece) in pieces.iter().enumerate() {
                for at in 0..len {
                    // A piece at every position of ASCII runs shorter and longer than a word.
                    let s = "x".repeat(at) + piece + &"y".repeat(len - at) + pieces[len % (k + 1)];
                    let needs_escape = s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
                    let units = utf16_len(&s);
                    assert_eq!(units, s.encode_utf16().count(), "{s:?}");
                    assert_eq!(
                        utf16_len_unescaped(&s),
                        (!needs_escape).then_some(units),
                        "{s:?}"
                    );
                    let lit = literal(&s);
                    assert_eq!(json_string_len(&s), lit.len(), "{s:?}");
                    assert_eq!(json_string_units(&s), lit.encode_utf16().count(), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn escape_scan_finds_every_position() {
        for len in 0..20 {
            for at in 0..len {
                for special in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    assert_eq!(
                        next_escape(&bytes, 0),
                        at,
                        "len {len} at {at} byte {special}"
                    );
                    assert_eq!(next_escape(&bytes, at + 1), len);
                }
            }
        }
        // The first of several, from any start, in texts shorter and longer than a word.
        let naive = |bytes: &[u8], from: usize| {
            (from..bytes.len())
                .find(|&i| bytes[i] < 0x20 || bytes[i] == b'"' || bytes[i] == b'\\')
                .unwrap_or(bytes.len())
        };
        for len in 0..20 {
            for a in 0..len {
                for b in a..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[a] = 0x01;
                    bytes[b] = b'"';
                    for from in 0..=len {
                        assert_eq!(
                            next_escape(&bytes, from),
                            naive(&bytes, from),
                            "len {len} at {a}, {b} from {from}"
                        );
                    }
                }
            }
        }
        // Bytes just above the escaped ranges and non-ASCII bytes need no escape.
        let clean = "!#[]~\u{7f}é😀 !#[]~\u{7f}é😀";
        assert_eq!(next_escape(clean.as_bytes(), 0), clean.len());
    }

    #[test]
    fn whitespace_trim_and_blank() {
        assert!(is_blank(" \n\t\u{FEFF}\u{3000}"));
        assert!(is_blank(""));
        assert!(!is_blank(" x "));
        // U+0085 is Unicode whitespace but not JavaScript whitespace.
        assert!(!is_blank("\u{85}"));
        assert_eq!(trim_start("\u{a0} x "), "x ");
    }

    #[test]
    fn utf16_length_and_order() {
        assert_eq!(utf16_len("a😀é"), 4);
        assert_eq!(cmp_utf16("\u{10000}", "\u{ffff}"), Ordering::Less);
        assert_eq!(cmp_utf16("a", "b"), Ordering::Less);
        assert_eq!(cmp_utf16("ab", "a"), Ordering::Greater);
    }

    /// Texts whose characters of every UTF-8 width and every escape class fall at every offset
    /// of an eight-byte word, and tails of every length.
    fn mixed_texts() -> Vec<String> {
        let pieces = [
            "a", "é", "€", "😀", "\"", "\\", "\n", "\u{1}", "\u{7f}", "\u{2028}", "xyz",
        ];
        let mut texts = vec![String::new()];
        for (i, first) in pieces.iter().enumerate() {
            for (j, second) in pieces.iter().enumerate() {
                for pad in 0..9 {
                    let mut t = "p".repeat(pad);
                    t.push_str(first);
                    t.push_str(&"q".repeat((i + j) % 9));
                    t.push_str(second);
                    texts.push(t);
                }
            }
        }
        texts
    }

    #[test]
    fn utf16_length_counts_units_a_word_at_a_time() {
        for text in mixed_texts() {
            assert_eq!(utf16_len(&text), text.encode_utf16().count(), "{text:?}");
        }
    }

    #[test]
    fn json_string_length_is_the_written_length() {
        for text in mixed_texts() {
            assert_eq!(json_string_len(&text), literal(&text).len(), "{text:?}");
        }
    }
}
