//! JavaScript numbers: ECMAScript `Number::toString(x)` (as `String(n)` and `JSON.stringify`
//! print them), `Number(text)` and `parseInt(text)`.
//!
//! The printed digits are the shortest that read back to the same double (an exact tie takes the
//! even digit); the layout is fixed-point for decimal exponents in `[-6, 21)` and exponent form
//! (`1e+21`, `1.5e-7`) outside it. `-0` prints `0`. A short literal is laid out from its own
//! digits; any other double goes through `ryu-js`, which implements the same rules.

use super::string::is_js_whitespace;

/// Up to this many significant digits, a decimal literal is itself the shortest round-trip form
/// of the double it denotes (IEEE 754 binary64 guarantees 15 decimal digits survive the trip).
const EXACT_DIGITS: usize = 15;

/// A number as ECMAScript prints it, held on the stack.
#[derive(Clone, Copy)]
pub(crate) struct NumberText {
    bytes: [u8; 32],
    len: usize,
}

impl NumberText {
    fn new() -> NumberText {
        NumberText {
            bytes: [0; 32],
            len: 0,
        }
    }

    /// Appends `bytes` (ASCII: digits, sign, `.`, `e`); the buffer holds any printed number.
    fn put(&mut self, bytes: &[u8]) {
        if let Some(slot) = self.bytes.get_mut(self.len..self.len + bytes.len()) {
            slot.copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII was put.
        std::str::from_utf8(self.bytes.get(..self.len).unwrap_or_default()).unwrap_or("NaN")
    }
}

/// `String(x)` for the number parsed from the JSON literal `literal` whose double is `value`;
/// `None` for NaN and the infinities (a literal such as `1e400` is Infinity, as in `JSON.parse`).
pub(crate) fn format_literal(literal: &str, value: f64) -> Option<NumberText> {
    if is_canonical_integer(literal.as_bytes()) {
        // The commonest case (ids, counts, sizes): JSON forbids leading zeros, so a short
        // integer literal other than `-0` is exactly what JavaScript prints.
        let mut text = NumberText::new();
        text.put(literal.as_bytes());
        return Some(text);
    }
    if let Some(digits) = Digits::from_literal(literal) {
        // Most other upstream numbers are short literals whose digits are already the answer,
        // so the double is never formatted.
        return Some(digits.layout());
    }
    format_f64(value)
}

/// The length of [`format_literal`]'s text, without copying it when the literal is printed as
/// written.
pub(crate) fn format_literal_len(literal: &str, value: f64) -> Option<usize> {
    if is_canonical_integer(literal.as_bytes()) {
        return Some(literal.len());
    }
    format_literal(literal, value).map(|text| text.len)
}

/// `String(v)` for a finite double; `None` for NaN and the infinities.
pub(crate) fn format_f64(v: f64) -> Option<NumberText> {
    if !v.is_finite() {
        return None;
    }
    let mut buf = ryu_js::Buffer::new();
    let mut text = NumberText::new();
    text.put(buf.format_finite(v).as_bytes());
    Some(text)
}

/// `String(n)`, NaN and the infinities included.
pub(crate) fn to_string(n: f64) -> String {
    match format_f64(n) {
        Some(text) => text.as_str().to_owned(),
        None if n.is_nan() => "NaN".to_owned(),
        None if n > 0.0 => "Infinity".to_owned(),
        None => "-Infinity".to_owned(),
    }
}

/// `-?[0-9]{1,15}` and not `-0`: printed as written.
fn is_canonical_integer(bytes: &[u8]) -> bool {
    let digits = match bytes.split_first() {
        Some((b'-', rest)) => rest,
        _ => bytes,
    };
    !digits.is_empty()
        && digits.len() <= EXACT_DIGITS
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.len() > 1 || digits.len() == bytes.len() || digits != b"0")
}

/// A decimal `0.d1d2...dk × 10^point` with no leading or trailing zero digits, and its sign.
struct Digits {
    negative: bool,
    buf: [u8; 24],
    len: usize,
    point: i32,
}

impl Digits {
    fn push(&mut self, digit: u8) -> bool {
        match self.buf.get_mut(self.len) {
            Some(slot) => {
                *slot = digit;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// The digits of a JSON number literal when they are exactly what JavaScript prints for it:
    /// at most [`EXACT_DIGITS`] significant digits and a magnitude well inside the normal range.
    fn from_literal(literal: &str) -> Option<Digits> {
        let bytes = literal.as_bytes();
        let (negative, rest) = match bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, bytes),
        };
        let mut d = Digits {
            negative,
            buf: [0; 24],
            len: 0,
            point: 0,
        };
        // Digits before the decimal point that come after the first significant one, including
        // zeros that may later prove trailing.
        let mut int_digits: i32 = 0;
        let mut leading_frac_zeros: i32 = 0;
        let mut pending_zeros = 0usize;
        let mut in_fraction = false;
        let mut i = 0;
        while let Some(&b) = rest.get(i) {
            match b {
                b'0'..=b'9' => {
                    if d.len == 0 && b == b'0' {
                        if in_fraction {
                            leading_frac_zeros += 1;
                        }
                    } else if b == b'0' {
                        pending_zeros += 1;
                        if !in_fraction {
                            int_digits += 1;
                        }
                    } else {
                        for _ in 0..pending_zeros {
                            if d.len >= EXACT_DIGITS {
                                return None;
                            }
                            d.push(b'0');
                        }
                        pending_zeros = 0;
                        if d.len >= EXACT_DIGITS {
                            return None;
                        }
                        d.push(b);
                        if !in_fraction {
                            int_digits += 1;
                        }
                    }
                }
                b'.' => in_fraction = true,
                b'e' | b'E' => break,
                _ => return None,
            }
            i += 1;
        }
        if d.len == 0 {
            // Zero in any spelling (`0`, `-0`, `0.00e5`) prints `0`.
            d.negative = false;
            d.push(b'0');
            d.point = 1;
            return Some(d);
        }
        let exp = match rest.get(i) {
            Some(_) => parse_exponent(rest.get(i + 1..)?)?,
            None => 0,
        };
        let base = if int_digits > 0 {
            int_digits
        } else {
            -leading_frac_zeros
        };
        d.point = base.checked_add(exp)?;
        // Keep away from subnormals and overflow, where the 15-digit guarantee ends.
        (-290..=290).contains(&d.point).then_some(d)
    }

    /// Lays the digits out as ECMAScript Number::toString does (at most 23 bytes: a sign, 21
    /// digits and a point; or `0.00000` and 15 digits; or 15 digits and an exponent).
    fn layout(&self) -> NumberText {
        let mut text = NumberText::new();
        let mut put = |bytes: &[u8]| text.put(bytes);
        let digits = self.buf.get(..self.len).unwrap_or_default();
        let k = self.len as i32;
        let n = self.point;
        if self.negative {
            put(b"-");
        }
        if k <= n && n <= 21 {
            put(digits);
            for _ in 0..(n - k) {
                put(b"0");
            }
        } else if 0 < n && n <= 21 {
            let (int, frac) = digits.split_at((n as usize).min(digits.len()));
            put(int);
            put(b".");
            put(frac);
        } else if -6 < n && n <= 0 {
            put(b"0.");
            for _ in 0..(-n) {
                put(b"0");
            }
            put(digits);
        } else {
            let (first, rest) = digits.split_at(1.min(digits.len()));
            put(first);
            if !rest.is_empty() {
                put(b".");
                put(rest);
            }
            let e = n - 1;
            put(if e < 0 { b"e-" } else { b"e+" });
            let mut exp = [0u8; 10];
            let mut at = exp.len();
            let mut rem = e.unsigned_abs();
            loop {
                at -= 1;
                exp[at] = b'0' + (rem % 10) as u8;
                rem /= 10;
                if rem == 0 {
                    break;
                }
            }
            put(exp.get(at..).unwrap_or_default());
        }
        text
    }
}

/// Parses `[+-]?\d+`, saturating far beyond any exponent that matters.
fn parse_exponent(bytes: &[u8]) -> Option<i32> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i32 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.saturating_mul(10).saturating_add(i32::from(b - b'0'));
    }
    value = value.min(100_000);
    Some(if negative { -value } else { value })
}

/// `Number(s)` (StringToNumber): NaN when `s` is not a numeric literal.
pub fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_whitespace);
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

/// `parseInt(text, 10)`: leading JavaScript whitespace, an optional sign, then the longest run
/// of digits; `None` where JavaScript gives NaN. Very long runs round to the nearest double or
/// to infinity, as parseInt's do.
pub fn parse_int(text: &str) -> Option<f64> {
    let t = text.trim_start_matches(is_js_whitespace);
    let (negative, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() {
        return None;
    }
    let value: f64 = digits.parse().ok()?;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A double exactly halfway between two 17-digit shortest candidates (…954.2 and …954.3):
    /// written as a sum because the exact literal trips clippy's precision lint.
    const TIE: f64 = 1355249111074954.0 + 0.25;

    fn printed(text: Option<NumberText>) -> String {
        text.map_or_else(|| "null".to_owned(), |t| t.as_str().to_owned())
    }

    fn from_literal(lit: &str) -> String {
        let value: f64 = lit.parse().unwrap();
        printed(format_literal(lit, value))
    }

    fn from_f64(v: f64) -> String {
        printed(format_f64(v))
    }

    #[test]
    fn literals_print_as_javascript_does() {
        let cases = [
            ("0", "0"),
            ("-0", "0"),
            ("0.0", "0"),
            ("-0.0e10", "0"),
            ("1", "1"),
            ("1.0", "1"),
            ("1.50", "1.5"),
            ("-12.340", "-12.34"),
            ("100", "100"),
            ("1e2", "100"),
            ("1E+2", "100"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("1.5e-7", "1.5e-7"),
            ("123e-9", "1.23e-7"),
            ("1e21", "1e+21"),
            ("999999999999999999999", "1e+21"),
            ("100000000000000000000", "100000000000000000000"),
            ("1.5e300", "1.5e+300"),
            ("12345678901234567890", "12345678901234567000"),
            ("9007199254740993", "9007199254740992"),
            ("0.1", "0.1"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("123456789012345.6", "123456789012345.6"),
            ("1e400", "null"),
            ("-1e400", "null"),
            ("5e-324", "5e-324"),
            ("1e-400", "0"),
            ("4.35", "4.35"),
            ("0.00001234", "0.00001234"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ];
        for (lit, want) in cases {
            assert_eq!(from_literal(lit), want, "literal {lit}");
        }
    }

    #[test]
    fn doubles_print_as_javascript_does() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (1e-6, "0.000001"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123456789.125, "123456789.125"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (2f64.powi(53), "9007199254740992"),
            (TIE, "1355249111074954.2"),
            (0.5, "0.5"),
            (2f64.powi(60), "1152921504606847000"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ];
        for (v, want) in cases {
            assert_eq!(from_f64(v), want, "double {v:e}");
        }
    }

    #[test]
    fn canonical_integers_are_copied() {
        assert!(is_canonical_integer(b"0"));
        assert!(is_canonical_integer(b"-12"));
        assert!(is_canonical_integer(b"123456789012345"));
        assert!(!is_canonical_integer(b"-0"));
        assert!(!is_canonical_integer(b"-"));
        assert!(!is_canonical_integer(b""));
        assert!(!is_canonical_integer(b"1234567890123456"));
        assert!(!is_canonical_integer(b"1.0"));
        assert!(!is_canonical_integer(b"1e5"));
    }

    #[test]
    fn fast_path_agrees_with_the_double_path() {
        for lit in [
            "1.25",
            "-3",
            "0.5e-3",
            "42e5",
            "7.000000000000001",
            "1e-6",
            "1e-7",
            "2e21",
        ] {
            let slow = from_f64(lit.parse().unwrap());
            assert_eq!(from_literal(lit), slow, "literal {lit}");
        }
    }

    #[test]
    fn string_conversion_covers_nan_and_infinities() {
        for (n, s) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (-0.0, "0"),
            (-2.5e-10, "-2.5e-10"),
            (TIE, "1355249111074954.2"),
        ] {
            assert_eq!(to_string(n), s);
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
    fn parse_int_reads_leading_digits() {
        assert_eq!(parse_int("20971520"), Some(20_971_520.0));
        assert_eq!(parse_int("  12abc"), Some(12.0));
        assert_eq!(parse_int("\u{feff}7"), Some(7.0));
        assert_eq!(parse_int("-3"), Some(-3.0));
        assert_eq!(parse_int("+3-"), Some(3.0));
        assert_eq!(parse_int("1e400"), Some(1.0));
        assert_eq!(parse_int(&"9".repeat(400)), Some(f64::INFINITY));
        // U+0085 is Unicode whitespace but not JavaScript whitespace.
        for nan in ["abc", "", "-", "\u{85}1"] {
            assert_eq!(parse_int(nan), None, "{nan:?}");
        }
    }
}
