//! The TOON renderer: byte-identical to `@toon-format/toon` 2.0.1 `encode(value, { indent: 2 })`
//! (TOON spec v3.0, comma delimiter, no key folding).
//!
//! The reference first copies its input through `normalizeValue`, which assigns every key with
//! `obj[key] = ...`. For the key `__proto__` that assignment sets the copy's prototype instead of
//! an own property, so such a key disappears from the output and, when its value is an object or
//! array, its fields become inherited. Inherited fields are visible to the tabular check (`key in
//! row`) and to row values (`row[key]`); [`lookup`] reproduces that.

use super::sink::{Counter, Sink};
use super::{write_number, MAX_RENDER_DEPTH};
use crate::js::{array_index_key, is_js_whitespace, next_escape, utf16_len, utf16_len_unescaped};
use crate::value::{Key, Map, Value};

/// The key that `normalizeValue` turns into a prototype link.
const PROTO: &str = "__proto__";

/// Whether `key` is [`PROTO`] (asked of every key: the length first).
#[inline]
fn is_proto(key: &str) -> bool {
    key.len() == PROTO.len() && key == PROTO
}

/// Appends the TOON encoding of `value` to `out`.
pub(crate) fn write_toon(value: &Value, out: &mut impl Sink) {
    let mut enc = Encoder { out, first: true };
    match value {
        Value::Array(items) => enc.array(None, items, 0),
        Value::Object(map) => enc.fields(map.iter(), 0),
        primitive => {
            enc.start_line(0);
            enc.primitive(primitive);
        }
    }
}

struct Encoder<'o, S: Sink> {
    out: &'o mut S,
    first: bool,
}

/// A field as JavaScript reads it from a normalized object: the value, an array prototype's
/// `length`, or nothing with a primitive value.
enum Field<'v> {
    Value(&'v Value),
    Length(usize),
    Absent,
}

impl<S: Sink> Encoder<'_, S> {
    /// Starts a new line (lines are joined by `\n`, with no trailing newline) at `depth`.
    fn start_line(&mut self, depth: usize) {
        let newline = !std::mem::replace(&mut self.first, false);
        if !self.out.keeps() {
            self.out.count(usize::from(newline) + depth * 2);
            return;
        }
        if newline {
            self.out.push('\n');
        }
        let mut width = depth * 2;
        while width > 0 {
            let step = width.min(SPACES.len());
            self.out.push_str(&SPACES[..step]);
            width -= step;
        }
    }

    /// True once the sink keeps nothing more and wants the rest of the rendering counted by
    /// [`Encoder::count_rest`]. The loops over fields, rows and items ask after each one.
    #[inline]
    fn past_bound(&self) -> bool {
        S::HANDS_OVER && !self.out.keeps()
    }

    /// Gives the sink the length of what `rest` writes, rendered into a [`Counter`] by the same
    /// code, so the count is the length of the text it stands for.
    fn count_rest(&mut self, rest: impl FnOnce(&mut Encoder<'_, Counter>)) {
        let mut first = self.first;
        let units = Counter::units_of(|counter| {
            let mut enc = Encoder {
                out: counter,
                first,
            };
            rest(&mut enc);
            first = enc.first;
        });
        self.first = first;
        self.out.count(units);
    }

    /// `key: value` lines for an object's own fields.
    fn fields<'v>(
        &mut self,
        mut entries: impl Iterator<Item = (&'v Key, &'v Value)>,
        depth: usize,
    ) {
        while let Some((key, value)) = entries.next() {
            if !is_proto(key) {
                self.field(key, value, depth);
            }
            if self.past_bound() {
                return self.count_rest(|rest| rest.fields(entries, depth));
            }
        }
    }

    fn field(&mut self, key: &str, value: &Value, depth: usize) {
        if depth > MAX_RENDER_DEPTH && !is_primitive(value) {
            self.field(key, &Value::Null, depth);
            return;
        }
        match value {
            Value::Array(items) => self.array(Some(key), items, depth),
            Value::Object(map) => {
                self.start_line(depth);
                write_key(key, self.out);
                self.out.push(':');
                self.fields(map.iter(), depth + 1);
            }
            primitive => {
                self.start_line(depth);
                write_key(key, self.out);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
    }

    /// An array under `key` (or at the root, or under the empty key, which the reference omits
    /// from headers because it tests the key for truthiness).
    fn array(&mut self, key: Option<&str>, items: &[Value], depth: usize) {
        self.start_line(depth);
        if items.iter().all(is_primitive) {
            self.header(key, items.len(), None);
            self.inline_values(items);
            return;
        }
        let primitive_rows = |v: &Value| matches!(v, Value::Array(a) if a.iter().all(is_primitive));
        if items.iter().all(primitive_rows) {
            self.header(key, items.len(), None);
            self.primitive_rows(items, depth + 1);
            return;
        }
        if let Some(fields) = tabular_fields(items) {
            self.header(key, items.len(), Some(&fields));
            self.rows(items, &fields, depth + 1);
            return;
        }
        self.header(key, items.len(), None);
        self.list_items(items, depth + 1);
    }

    /// `- [N]: a,b` lines at `depth` for arrays of primitives.
    fn primitive_rows(&mut self, items: &[Value], depth: usize) {
        for (i, item) in items.iter().enumerate() {
            self.start_line(depth);
            self.out.push_str("- ");
            if let Value::Array(inner) = item {
                self.inline_array(inner);
            }
            if self.past_bound() {
                let rest = items.get(i + 1..).unwrap_or_default();
                return self.count_rest(|enc| enc.primitive_rows(rest, depth));
            }
        }
    }

    /// The items of a list-form array, at `depth`.
    fn list_items(&mut self, items: &[Value], depth: usize) {
        for (i, item) in items.iter().enumerate() {
            self.list_item(item, depth);
            if self.past_bound() {
                let rest = items.get(i + 1..).unwrap_or_default();
                return self.count_rest(|enc| enc.list_items(rest, depth));
            }
        }
    }

    /// `key[N]{f,g}:`, without the key when it is absent or empty.
    fn header(&mut self, key: Option<&str>, len: usize, fields: Option<&[&str]>) {
        if let Some(key) = key.filter(|k| !k.is_empty()) {
            write_key(key, self.out);
        }
        self.length(len);
        if let Some(fields) = fields {
            self.out.push('{');
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                write_key(f, self.out);
            }
            self.out.push('}');
        }
        self.out.push(':');
    }

    fn length(&mut self, len: usize) {
        self.out.push('[');
        push_usize(self.out, len);
        self.out.push(']');
    }

    /// ` a,b,c` after a header (nothing for an empty array).
    fn inline_values(&mut self, items: &[Value]) {
        for (i, item) in items.iter().enumerate() {
            self.out.push(if i == 0 { ' ' } else { ',' });
            self.primitive(item);
        }
    }

    /// `[N]: a,b,c` for an array of primitives.
    fn inline_array(&mut self, items: &[Value]) {
        self.length(items.len());
        self.out.push(':');
        self.inline_values(items);
    }

    fn rows(&mut self, rows: &[Value], fields: &[&str], depth: usize) {
        for (i, row) in rows.iter().enumerate() {
            if self.past_bound() {
                let rest = rows.get(i..).unwrap_or_default();
                return self.count_rest(|enc| enc.rows(rest, fields, depth));
            }
            let Value::Object(map) = row else { continue };
            self.start_line(depth);
            if keys_match(map, fields) {
                // The usual case: every row lists the header's keys in the header's order.
                let own = map.iter().filter(|(k, _)| !is_proto(k));
                for (i, (_, value)) in own.enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.primitive(value);
                }
                continue;
            }
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                match lookup(map, field, 0) {
                    Field::Value(v) => self.primitive(v),
                    Field::Length(n) => push_usize(self.out, n),
                    // Unreachable after `tabular_fields` accepted the rows.
                    Field::Absent => self.out.push_str("null"),
                }
            }
        }
    }

    /// One element of a list-form array, as `- ...` at `depth`.
    fn list_item(&mut self, value: &Value, depth: usize) {
        if depth > MAX_RENDER_DEPTH && !is_primitive(value) {
            self.list_item(&Value::Null, depth);
            return;
        }
        match value {
            Value::Object(map) => self.list_item_object(map, depth),
            Value::Array(items) => {
                self.start_line(depth);
                self.out.push_str("- ");
                self.array_after_key(items, depth + 1);
            }
            primitive => {
                self.start_line(depth);
                self.out.push_str("- ");
                self.primitive(primitive);
            }
        }
    }

    /// An array that is not tabular, after its key or `- `: inline when every item is a
    /// primitive, else its length and one list item per line at `items_depth`.
    fn array_after_key(&mut self, items: &[Value], items_depth: usize) {
        if items.iter().all(is_primitive) {
            self.inline_array(items);
        } else {
            self.length(items.len());
            self.out.push(':');
            self.list_items(items, items_depth);
        }
    }

    /// An object as a list item: its first field on the `- ` line, the others one level deeper.
    fn list_item_object(&mut self, map: &Map, depth: usize) {
        // The first own field; `fields` skips a `__proto__` key among the others itself.
        let mut entries = map.iter();
        let Some((key, value)) = entries.find(|(k, _)| !is_proto(k)) else {
            self.start_line(depth);
            self.out.push('-');
            return;
        };
        self.start_line(depth);
        self.out.push_str("- ");
        match value {
            Value::Array(items) => {
                if let Some(fields) = tabular_fields(items) {
                    // The reference builds this header with the key as a header key, so an empty
                    // key is dropped here too, unlike the other first-field forms below.
                    self.header(Some(key), items.len(), Some(&fields));
                    self.rows(items, &fields, depth + 2);
                } else {
                    write_key(key, self.out);
                    self.array_after_key(items, depth + 2);
                }
            }
            Value::Object(inner) => {
                write_key(key, self.out);
                self.out.push(':');
                self.fields(inner.iter(), depth + 2);
            }
            primitive => {
                write_key(key, self.out);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
        self.fields(entries, depth + 1);
    }

    fn primitive(&mut self, value: &Value) {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(true) => self.out.push_str("true"),
            Value::Bool(false) => self.out.push_str("false"),
            Value::Number(n) => write_number(n, "null", self.out),
            Value::String(s) => write_string(s, self.out),
            // Callers only pass primitives.
            Value::Array(_) | Value::Object(_) => self.out.push_str("null"),
        }
    }
}

/// A run of spaces long enough for the usual nesting, written with one copy.
const SPACES: &str = "                                                                ";

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn push_usize(out: &mut impl Sink, n: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &b in &buf[i..] {
        out.push(char::from(b));
    }
}

/// The tabular header of an array of objects: the first object's own keys, when every element
/// is an object with exactly that many own keys, each of them holding (or inheriting) a
/// primitive.
fn tabular_fields(items: &[Value]) -> Option<Vec<&str>> {
    let Some(Value::Object(first)) = items.first() else {
        return None;
    };
    let fields: Vec<&str> = first
        .keys()
        .map(Key::as_str)
        .filter(|k| !is_proto(k))
        .collect();
    if fields.is_empty() {
        return None;
    }
    for item in items {
        let Value::Object(row) = item else {
            return None;
        };
        if keys_match(row, &fields) {
            if !row.values().all(is_primitive) {
                return None;
            }
            continue;
        }
        let own = row.keys().filter(|k| !is_proto(k)).count();
        if own != fields.len() {
            return None;
        }
        for field in &fields {
            match lookup(row, field, 0) {
                Field::Value(v) if is_primitive(v) => {}
                Field::Length(_) => {}
                _ => return None,
            }
        }
    }
    Some(fields)
}

/// Whether the object's keys are exactly `fields`, in order, with no `__proto__` key.
fn keys_match(map: &Map, fields: &[&str]) -> bool {
    map.len() == fields.len() && map.keys().zip(fields).all(|(k, f)| k == f)
}

/// `obj[key]` on the reference's normalized copy of `map`: an own field, else one inherited
/// through `__proto__`. Fields inherited from `Object.prototype` or `Array.prototype` are
/// functions, which the callers treat like absent fields.
fn lookup<'v>(map: &'v Map, key: &str, depth: usize) -> Field<'v> {
    if !is_proto(key) {
        if let Some(v) = map.get(key) {
            return Field::Value(v);
        }
    }
    match map.get(PROTO) {
        Some(Value::Object(proto)) if depth < crate::value::MAX_DEPTH => {
            lookup(proto, key, depth + 1)
        }
        Some(Value::Array(items)) if key == "length" => Field::Length(items.len()),
        Some(Value::Array(items)) => array_index_key(key)
            .and_then(|i| items.get(i as usize))
            .map_or(Field::Absent, Field::Value),
        _ => Field::Absent,
    }
}

/// Bytes that force a string value into quotes: structural characters, quotes, backslash,
/// line breaks, tab and the comma delimiter.
static UNSAFE_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let specials = b":\"\\[]{}\n\r\t,";
    let mut i = 0;
    while i < specials.len() {
        table[specials[i] as usize] = true;
        i += 1;
    }
    table
};

/// Bytes a bare key may hold: `[A-Za-z0-9_.]`.
static KEY_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
        b += 1;
    }
    table
};

/// Writes a string value, bare when the reference leaves it unquoted.
fn write_string(s: &str, out: &mut impl Sink) {
    if !out.keeps() {
        out.count(if is_safe_unquoted(s) {
            utf16_len(s)
        } else {
            quoted_units(s)
        });
        return;
    }
    if is_safe_unquoted(s) {
        out.push_str(s);
    } else {
        write_quoted(s, out);
    }
}

fn is_safe_unquoted(s: &str) -> bool {
    let bytes = s.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if first == b'-' || bytes.iter().any(|&b| UNSAFE_BYTE[usize::from(b)]) {
        return false;
    }
    // An ASCII end is whitespace only as a space, vertical tab or form feed (tab and line breaks
    // are unsafe bytes); others are decoded.
    let edge_space = |b: u8, c: Option<char>| match b {
        b' ' | 0x0b | 0x0c => true,
        0..=0x7f => false,
        _ => c.is_some_and(is_js_whitespace),
    };
    if edge_space(first, s.chars().next()) || edge_space(last, s.chars().next_back()) {
        return false;
    }
    match first {
        b'0'..=b'9' => !is_numeric_like(bytes),
        b't' | b'f' | b'n' => !matches!(s, "true" | "false" | "null"),
        _ => true,
    }
}

/// `/^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i` (the reference's other pattern, `^0\d+$`, is a subset).
fn is_numeric_like(bytes: &[u8]) -> bool {
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == bytes.len()
}

/// Writes an object key: bare when it matches `^[A-Za-z_][A-Za-z0-9_.]*$`, else quoted.
fn write_key(key: &str, out: &mut impl Sink) {
    let bytes = key.as_bytes();
    let bare = bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && bytes.iter().all(|&b| KEY_BYTE[usize::from(b)]);
    if !out.keeps() {
        // A bare key is ASCII: a unit a byte.
        out.count(if bare { key.len() } else { quoted_units(key) });
        return;
    }
    if bare {
        out.push_str(key);
    } else {
        write_quoted(key, out);
    }
}

/// The length in UTF-16 units of [`write_quoted`]'s text for `s`: the quotes, `s`, and one more
/// unit for each escaped byte.
fn quoted_units(s: &str) -> usize {
    if let Some(units) = utf16_len_unescaped(s) {
        return units + 2;
    }
    let bytes = s.as_bytes();
    let mut units = utf16_len(s) + 2;
    let mut i = next_escape(bytes, 0);
    while let Some(&b) = bytes.get(i) {
        units += usize::from(matches!(b, b'\\' | b'"' | b'\n' | b'\r' | b'\t'));
        i = next_escape(bytes, i + 1);
    }
    units
}

/// A quoted string with the only escapes TOON has: `\\ \" \n \r \t`.
fn write_quoted(s: &str, out: &mut impl Sink) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    // Every byte escaped here is one JSON escapes too, so the word-at-a-time scan for those finds
    // them all; the other control characters it stops at are written as they are.
    let mut i = next_escape(bytes, 0);
    while let Some(&b) = bytes.get(i) {
        let escape = match b {
            b'\\' => Some("\\\\"),
            b'"' => Some("\\\""),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            _ => None,
        };
        if let Some(escape) = escape {
            out.push_str(s.get(start..i).unwrap_or_default());
            out.push_str(escape);
            start = i + 1;
        }
        i = next_escape(bytes, i + 1);
    }
    out.push_str(s.get(start..).unwrap_or_default());
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    fn toon(src: &str) -> String {
        let mut out = String::new();
        write_toon(&parse(src).unwrap(), &mut out);
        out
    }

    #[test]
    fn string_quoting_follows_the_reference() {
        let cases = [
            (r#""hello world""#, "hello world"),
            (r#""""#, r#""""#),
            (r#"" padded""#, r#"" padded""#),
            (r#""nbsp\u00a0""#, "\"nbsp\u{a0}\""),
            (r#""nel\u0085""#, "nel\u{85}"),
            (r#""true""#, r#""true""#),
            (r#""1.5e-7""#, r#""1.5e-7""#),
            (r#""05""#, r#""05""#),
            (r#""1.""#, "1."),
            (r#""-x""#, r#""-x""#),
            (r#""a,b""#, r#""a,b""#),
            (r#""tab\tq\"b\\""#, r#""tab\tq\"b\\""#),
            (r#""bell\u0007""#, "bell\u{7}"),
            // Control characters TOON does not escape stay as they are between escaped ones, in
            // a string long enough to be scanned a word at a time.
            (
                r#""key: \u0001\u0008 a long run\nthen \"quoted\" and \\ back\u001f\r\tend""#,
                "\"key: \u{1}\u{8} a long run\\nthen \\\"quoted\\\" and \\\\ back\u{1f}\\r\\tend\"",
            ),
            (r#""é😀""#, "é😀"),
        ];
        for (src, want) in cases {
            assert_eq!(toon(src), want, "input {src}");
        }
    }

    #[test]
    fn objects_arrays_and_tables() {
        let cases = [
            ("{}", ""),
            ("[]", "[0]:"),
            (r#"{"a":{},"b":[]}"#, "a:\nb[0]:"),
            (
                r#"{"a b":1,"_x.y":2,"1":3}"#,
                "\"1\": 3\n\"a b\": 1\n_x.y: 2",
            ),
            (r#"{"t":[1,"x",null]}"#, "t[3]: 1,x,null"),
            (
                r#"{"r":[{"id":1,"n":"a"},{"n":"b","id":2}]}"#,
                "r[2]{id,n}:\n  1,a\n  2,b",
            ),
            (r#"[{"a":1},{"a":[1]}]"#, "[2]:\n  - a: 1\n  - a[1]: 1"),
            (r#"[[1,2],[]]"#, "[2]:\n  - [2]: 1,2\n  - [0]:"),
            (r#"[[[1]],{}]"#, "[2]:\n  - [1]:\n    - [1]: 1\n  -"),
            (
                r#"[{"t":[{"x":1}],"k":2}]"#,
                "[1]:\n  - t[1]{x}:\n      1\n    k: 2",
            ),
            (r#"{"":[1]}"#, "[1]: 1"),
            (r#"[{"":[1],"b":{}}]"#, "[1]:\n  - \"\"[1]: 1\n    b:"),
            (r#"[{"":[{"x":1}]}]"#, "[1]:\n  - [1]{x}:\n      1"),
        ];
        for (src, want) in cases {
            assert_eq!(toon(src), want, "input {src}");
        }
    }

    #[test]
    fn proto_keys_vanish_and_lend_fields() {
        let cases = [
            (r#"{"__proto__":{"a":1},"b":2}"#, "b: 2"),
            (
                r#"[{"a":1,"b":2},{"__proto__":{"a":3},"b":4,"z":5}]"#,
                "[2]{a,b}:\n  1,2\n  3,4",
            ),
            (
                r#"[{"b":2,"length":1},{"__proto__":[7],"b":4,"c":5}]"#,
                "[2]{b,length}:\n  2,1\n  4,1",
            ),
            (
                r#"[{"0":1,"b":2},{"__proto__":[7],"b":4,"c":5}]"#,
                "[2]{\"0\",b}:\n  1,2\n  7,4",
            ),
            (
                r#"[{"a":1,"b":2},{"__proto__":{"a":3},"b":4}]"#,
                "[2]:\n  - a: 1\n    b: 2\n  - b: 4",
            ),
            (
                r#"[{"a":1,"b":2},{"__proto__":{"a":{}},"b":4,"c":1}]"#,
                "[2]:\n  - a: 1\n    b: 2\n  - b: 4\n    c: 1",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(toon(src), want, "input {src}");
        }
    }
}
