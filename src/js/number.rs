//! JavaScript number printing: ECMAScript `Number::toString(x, 10)`, as `String(n)` and
//! `JSON.stringify` print finite numbers.
//!
//! The digits are the shortest that read back to the same double (ties resolved to the closest,
//! as V8 does); the layout is fixed-point for decimal exponents in `[-6, 21)` and exponent form
//! (`1e+21`, `1.5e-7`) outside it. `-0` prints `0`.

use super::sink::Sink;
use crate::value::Number;
use std::fmt::Write as _;

/// Up to this many significant digits, a decimal literal is itself the shortest round-trip form
/// of the double it denotes (IEEE 754 binary64 guarantees 15 decimal digits survive the trip).
const EXACT_DIGITS: usize = 15;

/// Writes `n` as JavaScript's `String(n)` would, with `non_finite` standing in for NaN and the
/// infinities (both renderers print `null` there).
pub fn write_number(n: &Number, non_finite: &str, out: &mut impl Sink) {
    let literal = n.literal();
    if is_canonical_integer(literal.as_bytes()) {
        // The commonest case (ids, counts, sizes): JSON forbids leading zeros, so a short
        // integer literal other than `-0` is exactly what JavaScript prints.
        out.push_str(literal);
        return;
    }
    if let Some(digits) = Digits::from_literal(literal) {
        // Fast path: most upstream numbers are short literals whose digits are already the
        // answer, so the double is never formatted.
        digits.write(out);
        return;
    }
    write_f64(n.as_f64(), non_finite, out);
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

/// Writes the double `v` as JavaScript's `String(v)` would, with `non_finite` for NaN and the
/// infinities.
pub fn write_f64(v: f64, non_finite: &str, out: &mut impl Sink) {
    if !v.is_finite() {
        out.push_str(non_finite);
        return;
    }
    if v == 0.0 {
        out.push('0');
        return;
    }
    let mut buf = StackBuf::default();
    // `{:e}` without a precision prints the shortest round-trip digits: `d[.ddd]e[-]x`.
    if write!(buf, "{:e}", v.abs()).is_err() {
        // Unreachable (StackBuf holds any f64 in `{:e}` form); Rust's own Display is a
        // correct-enough fallback rather than a panic.
        out.push_str(&v.to_string());
        return;
    }
    let text = buf.as_bytes();
    let e_at = text.iter().position(|&b| b == b'e').unwrap_or(text.len());
    let mut digits = Digits {
        negative: v < 0.0,
        buf: [0; 24],
        len: 0,
        point: 0,
    };
    for &b in text.get(..e_at).unwrap_or_default() {
        if b.is_ascii_digit() && !digits.push(b) {
            out.push_str(&v.to_string());
            return;
        }
    }
    let exp = parse_exponent(text.get(e_at + 1..).unwrap_or_default()).unwrap_or(0);
    digits.point = exp + 1;
    prefer_even_on_tie(&mut digits, v.abs());
    digits.write(out);
}

/// ECMAScript breaks an exact tie between two equally close shortest digit strings by taking the
/// even one; Rust's shortest formatting takes the upper one. A tie means `v` lies exactly on the
/// midpoint of the odd last digit and an even neighbour (checked in integers), and the neighbour
/// reads back to `v` too.
fn prefer_even_on_tie(digits: &mut Digits, v: f64) {
    let Some(&last) = digits.buf.get(digits.len.wrapping_sub(1)) else {
        return;
    };
    if (last - b'0').is_multiple_of(2) {
        return;
    }
    // The significant digits without the last one, as an integer.
    let head = digits
        .buf
        .get(..digits.len - 1)
        .unwrap_or_default()
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    // The midpoint of `last` and `last ± 1` has one more digit, a 5: `t × 10^f`.
    let f = digits.point - digits.len as i32 - 1;
    for even in [last - 1, last + 1] {
        if even > b'9' {
            continue;
        }
        let low = u64::from(last.min(even) - b'0');
        let t = (head * 10 + low) * 10 + 5;
        if !equals_decimal(v, t, f) {
            continue;
        }
        let mut alt = StackBuf::default();
        if digits.write_scientific(&mut alt, Some(even)).is_err() {
            return;
        }
        let reads_back = std::str::from_utf8(alt.as_bytes())
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            == Some(v);
        if reads_back {
            if let Some(slot) = digits.buf.get_mut(digits.len - 1) {
                *slot = even;
            }
            while digits.len > 1 && digits.buf.get(digits.len - 1) == Some(&b'0') {
                digits.len -= 1;
            }
        }
        return;
    }
}

/// Whether the positive finite double `v` equals `t × 10^f` exactly.
///
/// Both sides are written as an odd integer times a power of two (`10^f = 5^f × 2^f`); they are
/// equal when both parts are.
fn equals_decimal(v: f64, t: u64, f: i32) -> bool {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (m, q) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    if m == 0 || t == 0 {
        return m == t;
    }
    let (m_twos, t_twos) = (m.trailing_zeros() as i32, t.trailing_zeros() as i32);
    let (m_odd, t_odd) = (u128::from(m >> m_twos), u128::from(t >> t_twos));
    if t_twos + f != m_twos + q {
        return false;
    }
    let power_of_five = |n: i32| 5u128.checked_pow(n.unsigned_abs());
    if f >= 0 {
        power_of_five(f).and_then(|p| t_odd.checked_mul(p)) == Some(m_odd)
    } else {
        power_of_five(f).and_then(|p| m_odd.checked_mul(p)) == Some(t_odd)
    }
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

    /// Writes `d.ddde<exp>` (unsigned), optionally with another last digit.
    fn write_scientific(&self, out: &mut StackBuf, last: Option<u8>) -> std::fmt::Result {
        for (i, &d) in self
            .buf
            .get(..self.len)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if i == 1 {
                out.write_str(".")?;
            }
            let d = if i + 1 == self.len {
                last.unwrap_or(d)
            } else {
                d
            };
            out.write_char(char::from(d))?;
        }
        write!(out, "e{}", self.point - 1)
    }

    /// Lays the digits out as ECMAScript Number::toString does.
    fn write(&self, out: &mut impl Sink) {
        // Composed on the stack and copied once: at most 1 + 21 + 1 + 6 + ... bytes.
        let mut text = [0u8; 48];
        let mut len = 0;
        let mut put = |bytes: &[u8]| {
            if let Some(slot) = text.get_mut(len..len + bytes.len()) {
                slot.copy_from_slice(bytes);
                len += bytes.len();
            }
        };
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
        // Only ASCII digits, signs, '.', 'e' were written.
        out.push_str(std::str::from_utf8(text.get(..len).unwrap_or_default()).unwrap_or("NaN"));
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

/// A fixed buffer for formatting one double without allocating.
#[derive(Default)]
struct StackBuf {
    bytes: [u8; 32],
    len: usize,
}

impl StackBuf {
    fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A double exactly halfway between two 17-digit shortest candidates (…954.2 and …954.3):
    /// written as a sum because the exact literal trips clippy's precision lint.
    const TIE: f64 = 1355249111074954.0 + 0.25;

    fn from_literal(lit: &str) -> String {
        let mut out = String::new();
        write_number(&Number::from_literal(lit).unwrap(), "null", &mut out);
        out
    }

    fn from_f64(v: f64) -> String {
        let mut out = String::new();
        write_f64(v, "null", &mut out);
        out
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
    fn exact_decimal_comparison() {
        assert!(equals_decimal(TIE, 135524911107495425, -2));
        assert!(!equals_decimal(TIE, 135524911107495435, -2));
        assert!(equals_decimal(0.5, 5, -1));
        assert!(!equals_decimal(0.1, 1, -1));
        assert!(equals_decimal(1e22, 1, 22));
        assert!(equals_decimal(1536.0, 15360, -1));
        assert!(!equals_decimal(1e23, 1, 23));
        assert!(!equals_decimal(5e-324, 0, 0));
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
            let n = Number::from_literal(lit).unwrap();
            let mut slow = String::new();
            write_f64(n.as_f64(), "null", &mut slow);
            assert_eq!(from_literal(lit), slow, "literal {lit}");
        }
    }
}
