//! JavaScript semantics the reference interpreter inherits from its host language: number
//! printing and parsing, UTF-16 string order, `trim`, and `localeCompare` for ASCII text.

use std::cmp::Ordering;

/// `parseInt(text)` for the digit-and-dash runs the lexer produces.
pub(crate) fn parse_int(text: &str) -> f64 {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let end = digits.bytes().take_while(u8::is_ascii_digit).count();
    if end == 0 {
        return f64::NAN;
    }
    // Decimal digit strings always parse; very long ones round to the nearest double or to
    // infinity, as parseInt's do.
    let value: f64 = digits[..end].parse().unwrap_or(f64::NAN);
    if neg {
        -value
    } else {
        value
    }
}

/// Whether `c` is whitespace to JavaScript's `trim` (WhiteSpace and LineTerminator).
pub(crate) fn is_js_space(c: char) -> bool {
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

/// `String.prototype.trimLeft`.
pub(crate) fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_space)
}

/// `String(n)` / `Number.prototype.toString()`.
pub(crate) fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n == 0.0 {
        return "0".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, like ECMAScript's Number::toString.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let point = exp + 1;
    let mut out = String::new();
    if n < 0.0 {
        out.push('-');
    }
    if k <= point && point <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (point - k) as usize));
    } else if 0 < point && point <= 21 {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if point > 0 { '+' } else { '-' });
        out.push_str(&(point - 1).abs().to_string());
    }
    out
}

/// `Number(s)` (StringToNumber): NaN when `s` is not a numeric literal.
pub(crate) fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            if rest.is_empty() || !rest.chars().all(|c| c.is_digit(radix)) {
                return f64::NAN;
            }
            return rest.chars().fold(0.0, |acc, c| {
                acc * radix as f64 + c.to_digit(radix).unwrap_or(0) as f64
            });
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if !is_decimal_literal(unsigned) {
        return f64::NAN;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// StrUnsignedDecimalLiteral without the `Infinity` case.
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

/// String order of JavaScript's `<` and of `Array.prototype.sort`: by UTF-16 code units.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order equals code point order; it differs from code unit order only where an
    // astral character meets U+E000..U+FFFF, which the slow path handles.
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a.as_bytes()[common..], &b.as_bytes()[common..]);
    match (ra.first(), rb.first()) {
        (Some(&x), Some(&y)) if x >= 0xee || y >= 0xee => a.encode_utf16().cmp(b.encode_utf16()),
        _ => ra.cmp(rb),
    }
}

/// The UTF-16 length of `s` (JavaScript's `.length`).
pub(crate) fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `a.localeCompare(b)` under ICU's root collation, exact for printable ASCII.
///
/// Characters outside printable ASCII sort after it by code point; see docs/projection.md.
pub(crate) fn locale_compare(a: &str, b: &str) -> Ordering {
    let primary = |s: &str| s.chars().filter_map(primary_weight).collect::<Vec<u32>>();
    primary(a).cmp(&primary(b)).then_with(|| {
        // Tertiary level: at the first difference in case, lowercase sorts first.
        let case = |s: &str| {
            s.chars()
                .filter(|c| primary_weight(*c).is_some())
                .map(|c| c.is_ascii_uppercase())
                .collect::<Vec<bool>>()
        };
        case(a).cmp(&case(b))
    })
}

/// ICU root primary order of printable ASCII (variable characters are not ignored by default).
const ASCII_ORDER: &str = "\t\n\u{b}\u{c}\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

fn primary_weight(c: char) -> Option<u32> {
    if c.is_ascii() {
        let lower = c.to_ascii_lowercase();
        ASCII_ORDER.find(lower).map(|i| i as u32)
    } else {
        Some(0x1_0000 + c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_like_javascript() {
        for (n, s) in [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (-0.0, "0"),
            (123.456, "123.456"),
            (-2.5e-10, "-2.5e-10"),
            (f64::INFINITY, "Infinity"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(number_to_string(n), s);
        }
    }

    #[test]
    fn strings_convert_like_javascript() {
        assert_eq!(string_to_number(" 12 "), 12.0);
        assert_eq!(string_to_number(""), 0.0);
        assert_eq!(string_to_number("0x1F"), 31.0);
        assert_eq!(string_to_number("1."), 1.0);
        assert_eq!(string_to_number(".5e1"), 5.0);
        assert_eq!(string_to_number("-Infinity"), f64::NEG_INFINITY);
        for bad in ["inf", "NaN", "1e", "-0x1", "1_0", ".", "e5", "infinity"] {
            assert!(string_to_number(bad).is_nan(), "{bad}");
        }
    }

    #[test]
    fn utf16_order_differs_from_code_points_for_astral() {
        assert_eq!(cmp_utf16("\u{10000}", "\u{ffff}"), Ordering::Less);
        assert_eq!(cmp_utf16("a", "b"), Ordering::Less);
        assert_eq!(cmp_utf16("ab", "a"), Ordering::Greater);
        assert_eq!(utf16_len("a😀"), 3);
    }

    #[test]
    fn locale_compare_orders_case_after_letters() {
        assert_eq!(locale_compare("a", "B"), Ordering::Less);
        assert_eq!(locale_compare("a", "A"), Ordering::Less);
        assert_eq!(locale_compare("Aa", "ab"), Ordering::Less);
        assert_eq!(locale_compare("_", "a"), Ordering::Less);
    }
}
