//! `String.prototype.localeCompare` as Node computes it under ICU's root collation, for the
//! text JMESPath's `sort`-like functions compare.

use std::cmp::Ordering;

use super::string::is_js_whitespace;

/// `a.localeCompare(b)` under ICU's root collation, as Node computes it: exact for printable
/// ASCII, and for the Latin letters of U+00C0..U+017F by base letter, then accent, then case;
/// other characters by their ICU group (see [`other_primary`] and docs/projection.md).
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let (ka, kb) = (collation_key(a), collation_key(b));
    let level =
        |k: &[(u32, u8, u8)], f: fn(&(u32, u8, u8)) -> u32| k.iter().map(f).collect::<Vec<u32>>();
    level(&ka, |e| e.0)
        .cmp(&level(&kb, |e| e.0))
        .then_with(|| level(&ka, |e| u32::from(e.1)).cmp(&level(&kb, |e| u32::from(e.1))))
        .then_with(|| level(&ka, |e| u32::from(e.2)).cmp(&level(&kb, |e| u32::from(e.2))))
}

/// ICU root primary order of printable ASCII and the Latin-1 punctuation and symbols, as
/// Node's `localeCompare` sorts them (variable characters are not ignored by default).
const ORDER: &str = "\t\n\u{b}\u{c}\r _-\u{2013}\u{2014},;:!\u{a1}?\u{bf}.\u{b7}'\"\u{ab}\u{bb}()[]{}\u{a7}\u{b6}@*/\\&#%\u{2022}`\u{b4}^\u{af}\u{a8}\u{b8}\u{b0}\u{a9}\u{ae}\u{2192}+\u{b1}\u{f7}\u{d7}<=>\u{ac}|\u{a6}~\u{2605}\u{2713}\u{a4}\u{a2}$\u{a3}\u{a5}\u{20ac}0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

/// The position of `c` in [`ORDER`], spaced 2^24 apart so other characters fit between.
fn order_weight(c: char) -> Option<u32> {
    ORDER.chars().position(|x| x == c).map(|i| (i as u32) << 24)
}

/// Base letters of U+00C0..U+017F (`.`: none) and the accent's rank among the base letter's
/// variants in ICU's order (base 36), both read off Node's `localeCompare`.
const LATIN_BASE: &str = "AAAAAA.CEEEEIIII.NOOOOO.OUUUUY..aaaaaa.ceeeeiiii.nooooo.ouuuuy.yAaAaAaCcCcCcCcDdDdEeEeEeEeEeGgGgGgGgHhHhIiIiIiIiIi..JjKk.LlLlLl..LlNnNnNn...OoOoOo..RrRrRrSsSsSsSsTtTtTtUuUuUuUuUuUuWwYyYZzZzZz.";
const LATIN_RANK: &str = "21476505214621450321475082146100214765052146214503214750821461039933881122443311229933778855221133441122669933887a00111101133220044114422000993366001133221122443322113388aa33557799112231133220";

/// Collation elements: (primary, secondary, tertiary); ignorable characters give none.
fn collation_key(s: &str) -> Vec<(u32, u8, u8)> {
    let mut out = Vec::with_capacity(s.len());
    let primary = |c: char| order_weight(c.to_ascii_lowercase());
    for c in s.chars() {
        let cp = c as u32;
        if c.is_ascii() {
            if let Some(p) = primary(c) {
                out.push((p, 0, u8::from(c.is_ascii_uppercase()) * 2));
            }
            continue;
        }
        if let Some(p) = order_weight(c) {
            out.push((p, 0, 0));
            continue;
        }
        // Superscript digits and ordinal indicators are their letter or digit, third level.
        let variant = match c {
            '\u{b9}' | '\u{bc}' | '\u{bd}' => Some('1'),
            '\u{b2}' => Some('2'),
            '\u{b3}' | '\u{be}' => Some('3'),
            '\u{aa}' => Some('a'),
            '\u{ba}' => Some('o'),
            _ => None,
        };
        if let Some(v) = variant {
            out.push((primary(v).unwrap_or(0), 0, 1));
            continue;
        }
        // Other spaces weigh as the space, after it at the third level.
        if is_js_whitespace(c) {
            out.push((primary(' ').unwrap_or(0), 0, 1));
            continue;
        }
        // Ligatures and ß expand to two letters, after the plain spelling at the third level.
        let expansion = match c {
            'ß' => Some(("s", "s", 1)),
            'æ' => Some(("a", "e", 1)),
            'Æ' => Some(("a", "e", 2)),
            'œ' => Some(("o", "e", 1)),
            'Œ' => Some(("o", "e", 2)),
            _ => None,
        };
        if let Some((x, y, t)) = expansion {
            for part in [x, y] {
                out.push((
                    primary(part.chars().next().unwrap_or('a')).unwrap_or(0),
                    36,
                    t,
                ));
            }
            continue;
        }
        let latin = (0xC0..0x180).contains(&cp).then(|| (cp - 0xC0) as usize);
        let base = latin
            .and_then(|i| LATIN_BASE.as_bytes().get(i))
            .filter(|b| **b != b'.');
        match (base, latin) {
            (Some(&b), Some(i)) => {
                let rank = LATIN_RANK
                    .as_bytes()
                    .get(i)
                    .and_then(|r| char::from(*r).to_digit(36))
                    .unwrap_or(0);
                out.push((
                    primary(char::from(b)).unwrap_or(0),
                    rank as u8,
                    u8::from(c.is_uppercase()) * 2,
                ));
            }
            _ => {
                if let Some(p) = other_primary(c) {
                    out.push((p, 0, 0));
                }
            }
        }
    }
    out
}

/// Primary weights for characters not in [`ORDER`] nor Latin letters, by the group ICU puts
/// them in: whitespace with the space, dashes and general punctuation with ASCII's, arrows
/// before `+`, other symbols and emoji after `~`, currency before the digits, other scripts
/// after Latin in ICU's script order, U+FFFD and U+FFFF last; by code point within a group.
/// `None`: ignorable.
fn other_primary(c: char) -> Option<u32> {
    let cp = c as u32;
    let at = |a: char| order_weight(a).unwrap_or(0);
    // A weight just after `anchor`, below the next character of ORDER.
    let after = |anchor: char| at(anchor) + 0x80_0000 + (cp >> 1);
    Some(match cp {
        0x300..=0x36F | 0x200B..=0x200F | 0xFEFF | 0xAD => return None,
        0x2010..=0x2027 | 0x2030..=0x205E => after('\u{2022}'),
        0x2190..=0x21FF => after('\u{2192}'),
        0x20A0..=0x20CF => after('\u{20ac}'),
        0x2100..=0x218F | 0x2200..=0x2BFF | 0x1F000..=0x1FAFF => after('\u{2713}'),
        0xFFFD => 0xFFFF_FFF0,
        0xFFFF => 0xFFFF_FFFF,
        _ => {
            // After every Latin letter: ICU's script order, then code point.
            let group = match cp {
                0xB5 | 0x370..=0x3FF => 1,
                0x400..=0x52F => 2,
                0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => 4,
                0x3040..=0x30FF | 0xFF66..=0xFF9F => 5,
                0x3400..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF => 6,
                _ => 3,
            };
            at('Z') + 0x100_0000 + group * 0x20_0000 + (cp & 0x1F_FFFF)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_compare_orders_case_after_letters() {
        assert_eq!(locale_compare("a", "B"), Ordering::Less);
        assert_eq!(locale_compare("a", "A"), Ordering::Less);
        assert_eq!(locale_compare("Aa", "ab"), Ordering::Less);
        assert_eq!(locale_compare("_", "a"), Ordering::Less);
        // Accented Latin letters sort with their base letter, after it.
        let mut words = [
            "ae", "æ", "af", "e", "E", "é", "É", "éa", "ef", "f", "n", "ñ", "o", "ø", "p", "ss",
            "ß", "st",
        ];
        words.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(
            words,
            [
                "ae", "æ", "af", "e", "E", "é", "É", "éa", "ef", "f", "n", "ñ", "o", "ø", "p",
                "ss", "ß", "st"
            ]
        );
        assert_eq!(locale_compare("héllo", "hz"), Ordering::Less);
        assert_eq!(locale_compare("hello", "héllo"), Ordering::Less);
    }
}
