//! A bounded rendering only counts the text past its bound, scalar by scalar, without writing it;
//! the total it reports (printed in the truncation message) must be exactly the UTF-16 length of
//! the full rendering. Checked over many generated values in both formats, at bounds that put the
//! switch from writing to counting everywhere: before the first character, inside, at the end.

use crate::render::{find_cut, render, render_bounded, utf16_len, OutputFormat};
use crate::value::{parse, Value};

/// A small deterministic generator (xorshift64*), so a failure replays.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Pieces of string values (as JSON source), chosen for the TOON quoting rules (structural
/// characters, leading `-`, edge whitespace, keywords, numeric-looking text), the escapes of
/// both formats, and characters of one, two and three UTF-8 bytes and two UTF-16 units.
const STRING_PIECES: &[&str] = &[
    "a",
    "hello world",
    " ",
    "-",
    ":",
    ",",
    "[",
    "]",
    "{",
    "}",
    "\\\"",
    "\\\\",
    "\\n",
    "\\r",
    "\\t",
    "\\b",
    "\\f",
    "\\u0001",
    "\\u001f",
    "\\u007f",
    "\\u00a0",
    "\\u0085",
    "\\u2028",
    "\\ufeff",
    "é",
    "日本",
    "😀",
    "\\ud83d\\ude00",
    "true",
    "false",
    "null",
    "1.5e3",
    "-2E-7",
    "05",
    "0",
    "1.",
    "https://api.github.com/repos/octo-org/hello-world/actions/runs/1",
    "2024-01-02T03:04:05Z",
    "a long plain run of ascii text for the word-at-a-time scans",
    "#",
    "/",
];

/// Number literals: integers printed as written, literals whose digits are the answer, ones that
/// need the double formatted, and ones JavaScript reads as Infinity.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-17",
    "123456789012345",
    "1234567890123456789",
    "99999999999999999999999",
    "1.50",
    "0.1",
    "-0.0",
    "1e21",
    "1E+2",
    "1e20",
    "1.5e-7",
    "0.000001",
    "1e-7",
    "123.456e5",
    "5e-324",
    "1.7976931348623157e308",
    "0.30000000000000004",
    "1e400",
    "-1e400",
];

/// Keys (as JSON source): bare and quoted ones, the empty key (which TOON headers drop), array
/// index keys (which JavaScript orders first), and the keys the reference's normalization treats
/// specially.
const KEYS: &[&str] = &[
    "id",
    "name",
    "status",
    "_x.y",
    "a b",
    "",
    "0",
    "1",
    "length",
    "__proto__",
    "é",
    "k\\n",
    "key-with-dash",
    "😀",
    "\\\"q\\\"",
];

fn string(g: &mut Gen) -> String {
    let mut s = String::from("\"");
    for _ in 0..g.below(4) + usize::from(g.below(3) == 0) {
        s.push_str(g.pick(STRING_PIECES));
    }
    s.push('"');
    s
}

fn scalar(g: &mut Gen) -> String {
    match g.below(8) {
        0 => "null".to_owned(),
        1 => "true".to_owned(),
        2 => "false".to_owned(),
        3 => g.pick(NUMBERS).to_owned(),
        4 => format!("{}", g.next() % 100_000),
        _ => string(g),
    }
}

fn key(g: &mut Gen) -> String {
    format!("\"{}\"", g.pick(KEYS))
}

fn object(g: &mut Gen, depth: usize) -> String {
    let fields: Vec<String> = (0..g.below(5))
        .map(|_| format!("{}:{}", key(g), value(g, depth + 1)))
        .collect();
    format!("{{{}}}", fields.join(","))
}

fn array(items: Vec<String>) -> String {
    format!("[{}]", items.join(","))
}

/// Rows with the same keys and primitive values, now and then one whose keys differ in order,
/// number or kind, or that inherits through `__proto__`.
fn table(g: &mut Gen) -> String {
    let keys: Vec<String> = (0..1 + g.below(4)).map(|_| key(g)).collect();
    let rows = (0..g.below(5))
        .map(|_| {
            let mut fields: Vec<String> =
                keys.iter().map(|k| format!("{k}:{}", scalar(g))).collect();
            match g.below(10) {
                0 => fields.reverse(),
                1 => fields.push(format!("{}:{}", key(g), scalar(g))),
                2 => {
                    fields.pop();
                }
                3 => fields.push(format!("\"__proto__\":{}", object(g, 3))),
                4 => fields.push(format!("\"x\":{}", value(g, 3))),
                _ => {}
            }
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    array(rows)
}

fn value(g: &mut Gen, depth: usize) -> String {
    if depth >= 4 || g.below(10) < 3 {
        return scalar(g);
    }
    match g.below(8) {
        0 => object(g, depth),
        1 => object(g, depth),
        2 => table(g),
        3 => array((0..g.below(5)).map(|_| scalar(g)).collect()),
        4 => array(
            (0..g.below(4))
                .map(|_| array((0..g.below(4)).map(|_| scalar(g)).collect()))
                .collect(),
        ),
        5 => array((0..g.below(4)).map(|_| object(g, depth + 1)).collect()),
        6 => if g.below(2) == 0 { "[]" } else { "{}" }.to_owned(),
        _ => array((0..g.below(5)).map(|_| value(g, depth + 1)).collect()),
    }
}

/// The bounded rendering of `value` at `max` is the full rendering cut at `max`: the same cut,
/// the whole text's length among it, and the same kept text.
fn check(value: &Value, format: OutputFormat, max: usize, source: &str) {
    let full = render(value, format);
    let (text, cut) = render_bounded(value, format, max);
    let whole = find_cut(&full, max);
    assert_eq!(cut, whole, "{format:?} at {max} of {source}");
    let kept = whole.map_or(full.as_str(), |c| &full[..c.kept_bytes]);
    assert_eq!(text, kept, "{format:?} at {max} of {source}");
}

#[test]
fn counting_past_the_bound_gives_the_full_renderings_length() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let source = value(&mut g, 0);
        let value = parse(&source).unwrap_or_else(|e| panic!("{source}: {e:?}"));
        for format in [OutputFormat::Toon, OutputFormat::Json] {
            let units = utf16_len(&render(&value, format));
            let random = g.below(units + 2);
            for max in [
                0,
                1,
                2,
                units / 3,
                units / 2,
                units.saturating_sub(1),
                units,
                random,
            ] {
                check(&value, format, max, &source);
            }
        }
    }
}

#[test]
fn containers_past_the_render_depth_are_counted_as_null() {
    // Deeper than the parser allows, as a projection can build; a thread with a stack for it.
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let mut deep = Value::from("leaf");
            for i in 0..crate::render::MAX_RENDER_DEPTH + 5 {
                deep = if i % 2 == 0 {
                    Value::Array(vec![deep, Value::from("x")])
                } else {
                    let mut map = crate::value::Map::new();
                    map.insert("k".into(), deep);
                    map.insert("s".into(), Value::from("a: b"));
                    Value::Object(map)
                };
            }
            for format in [OutputFormat::Toon, OutputFormat::Json] {
                for max in [0, 100, 5000] {
                    check(&deep, format, max, "deep");
                }
            }
        })
        .expect("thread starts");
    handle.join().expect("no failure");
}
