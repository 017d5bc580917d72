//! A strict JSON parser (RFC 8259, as `JSON.parse` accepts it) producing [`Value`].
//!
//! Written by hand rather than through serde because it must keep number literals and JavaScript
//! key order, and because it bounds nesting depth so a hostile body cannot exhaust the stack.

use super::{Interner, Key, Map, Number, Value};
use crate::js::next_escape;
use std::borrow::Cow;
use std::fmt;

/// Nesting deeper than this is rejected: far beyond any real API body, far below stack limits.
pub const MAX_DEPTH: usize = 512;

/// Why a text is not JSON, with the byte offset where parsing stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What was wrong.
    pub(crate) message: &'static str,
    /// Byte offset into the input.
    pub offset: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// Whether the parse stopped because the value needed more memory than its [`Allowance`]
    /// gave, rather than because the text is not JSON.
    pub fn over_allowance(&self) -> bool {
        self.message == OVER_ALLOWANCE
    }
}

/// The message of a parse stopped by its [`Allowance`].
const OVER_ALLOWANCE: &str = "the value needs more memory than the parse may take";

/// The memory a parse may hold in what it builds, and where it asks for more.
///
/// What a parsed value costs depends on its shape, not on the length of its text: `[0,0,...]`
/// takes some 40 bytes of memory per value, 2 bytes of text each. A caller bounding memory gives
/// the parse what the body's size pays for and lets it grow from there; past what it is given,
/// the parse stops with an error ([`ParseError::over_allowance`]), never a partial value.
///
/// The parser counts, as wasm32 lays them out: each value's node in its array, or its entry in
/// its object; each number's and string's heap block as the allocator rounds it (a 4-byte
/// header, rounded up to 8 bytes); each key not shared with others; the scratch vectors the open
/// arrays and objects are gathered in, at their capacity, before they grow; and for objects
/// rebuilt with an index (integer-like or repeated keys, or many of them) three entries more per
/// entry. The shared
/// keys (at most [`super::Interner::MAX_KEYS`] of at most 64 bytes) and the text itself are not
/// counted.
pub struct Allowance<'m> {
    allowed: usize,
    spent: usize,
    more: Option<&'m mut dyn FnMut(usize) -> bool>,
}

impl std::fmt::Debug for Allowance<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Allowance")
            .field("allowed", &self.allowed)
            .field("spent", &self.spent)
            .finish()
    }
}

/// The least an [`Allowance`] asks for when it grows.
const GROWTH_STEP: usize = 256 * 1024;

impl<'m> Allowance<'m> {
    /// No bound: for texts the server wrote itself or already bounded by other means.
    pub fn unbounded() -> Allowance<'static> {
        Allowance::fixed(usize::MAX)
    }

    /// At most `bytes`, never more.
    pub fn fixed(bytes: usize) -> Allowance<'static> {
        Allowance {
            allowed: bytes,
            spent: 0,
            more: None,
        }
    }

    /// `bytes`, then more as long as `more` grants it: it is asked for a number of bytes (a
    /// quarter of what is allowed so far, at least 256 KiB, then at least what is
    /// missing) and says whether it took them.
    pub fn growing(bytes: usize, more: &'m mut dyn FnMut(usize) -> bool) -> Allowance<'m> {
        Allowance {
            allowed: bytes,
            spent: 0,
            more: Some(more),
        }
    }

    /// This allowance, leaving an empty one in its place (while a parser holds it).
    fn take(&mut self) -> Allowance<'m> {
        let empty = Allowance {
            allowed: 0,
            spent: 0,
            more: None,
        };
        std::mem::replace(self, empty)
    }

    /// Bytes counted so far.
    pub fn spent(&self) -> usize {
        self.spent
    }

    /// Bytes the parse may hold now, grown included.
    pub fn allowed(&self) -> usize {
        self.allowed
    }

    /// Counts `bytes` more; false when they are past what is allowed and no more is granted.
    #[inline(always)]
    fn charge(&mut self, bytes: usize) -> bool {
        self.spent = self.spent.saturating_add(bytes);
        self.spent <= self.allowed || self.extend()
    }

    #[cold]
    fn extend(&mut self) -> bool {
        let Some(more) = self.more.as_mut() else {
            return false;
        };
        let missing = self.spent - self.allowed;
        let step = missing.max(GROWTH_STEP);
        for ask in [step.max(self.allowed / 4), step] {
            if more(ask) {
                self.allowed = self.allowed.saturating_add(ask);
                return true;
            }
        }
        false
    }
}

/// What a heap block asked for with `bytes` takes in wasm32's allocator (dlmalloc): a 4-byte
/// header, rounded up to 8 bytes, 16 at least; nothing for nothing asked.
const fn heap_block(bytes: usize) -> usize {
    if bytes == 0 {
        return 0;
    }
    let block = (bytes + 4 + 7) & !7;
    if block < 16 {
        16
    } else {
        block
    }
}

// Sizes as wasm32 lays them out, whatever the target, so that the count, and the tests of it, are
// the deployed module's (a 64-bit host's are larger, and only tests run there).
/// A value's node in its array.
const NODE: usize = 16;
/// An entry of an object.
const ENTRY: usize = 24;
/// What a key allocated on its own takes besides its text: an `Arc`'s two counts.
const KEY_HEADER: usize = 8;
/// A key's interner id, beside its entry while its object is open.
const KEY_ID: usize = std::mem::size_of::<u32>();
#[cfg(target_arch = "wasm32")]
const _: () = assert!(
    NODE == std::mem::size_of::<Value>()
        && ENTRY == std::mem::size_of::<(Key, Value)>()
        && KEY_HEADER == 2 * std::mem::size_of::<usize>()
);

/// Parses a complete JSON text.
///
/// A `\u` escape naming a lone surrogate becomes U+FFFD: Rust strings hold only scalar values
/// (see docs/decisions/0002-lone-surrogates.md).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_within(text, &mut Allowance::unbounded())
}

/// [`parse`] within `room`: the parse stops with an error once what it builds needs more than
/// `room` allows and grants.
pub fn parse_within(text: &str, room: &mut Allowance<'_>) -> Result<Value, ParseError> {
    let mut p = Parser::new(Cow::Borrowed(text), room.take());
    let parsed = p.document();
    *room = p.room;
    parsed
}

/// A failed [`parse_owned`]: why, and the text when it is still whole.
#[derive(Debug)]
pub struct OwnedParseError {
    /// Why the text is not JSON.
    pub error: ParseError,
    /// The text, unless the parse had already released part of it.
    pub text: Option<String>,
}

/// [`parse`] of a text the parser may consume: every [`RELEASE_BYTES`] or so, the part already
/// parsed is dropped and the rest moved to the front of the buffer, whose end is returned to the
/// allocator, so the text shrinks while the value grows instead of both being alive whole at the
/// end (a large body's peak memory). A text that is not JSON is given back when the error comes
/// before the first release, as it does for a text that is not JSON at all.
pub fn parse_owned(text: String) -> Result<Value, OwnedParseError> {
    parse_owned_within(text, &mut Allowance::unbounded())
}

/// [`parse_owned`] within `room` (see [`parse_within`]). A text given back with an error that is
/// [over its allowance](ParseError::over_allowance) is JSON all the same.
pub fn parse_owned_within(
    text: String,
    room: &mut Allowance<'_>,
) -> Result<Value, OwnedParseError> {
    let mut p = Parser::new(Cow::Owned(text), room.take());
    let parsed = p.document();
    *room = p.room;
    match parsed {
        Ok(v) => Ok(v),
        Err(error) => Err(OwnedParseError {
            error,
            text: match p.text {
                Cow::Owned(text) if p.base == 0 => Some(text),
                _ => None,
            },
        }),
    }
}

/// How much parsed text [`parse_owned`] lets pile up before releasing it: at least this many
/// bytes, and a quarter of what is left (so a large text is moved a few dozen times in all, not
/// once per step).
pub const RELEASE_BYTES: usize = 256 * 1024;

/// Parses a complete JSON text from bytes, which must be UTF-8 (a BOM is not allowed, as in
/// `JSON.parse`).
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(ParseError {
            message: "invalid UTF-8",
            offset: e.valid_up_to(),
        }),
    }
}

struct Parser<'a, 'm> {
    /// What is left of the text: all of it, unless released (`base` > 0).
    text: Cow<'a, str>,
    /// The offset in the whole text of `text`'s first byte.
    base: usize,
    /// The position in `text`.
    pos: usize,
    /// The position in `text` from which the parsed part is released; never for borrowed text.
    release_at: usize,
    /// Entries of the objects being parsed, innermost last; each object takes its own off the
    /// end when it closes, so every map and array is allocated once at its exact size (which
    /// also keeps a parsed tree compact in memory, and rendering it fast).
    entries: Vec<(Key, Value)>,
    /// The interner's id of each entry's key, alongside `entries`.
    key_ids: Vec<u32>,
    /// Items of the arrays being parsed, likewise.
    items: Vec<Value>,
    /// The object keys met so far, shared between the entries that repeat them.
    keys: Interner,
    /// What the value may cost, counted as it is built; held here rather than borrowed, as it
    /// is counted several times per value.
    room: Allowance<'m>,
}

impl<'a, 'm> Parser<'a, 'm> {
    fn new(text: Cow<'a, str>, room: Allowance<'m>) -> Parser<'a, 'm> {
        let release_at = match text {
            Cow::Owned(_) => RELEASE_BYTES,
            Cow::Borrowed(_) => usize::MAX,
        };
        Parser {
            text,
            base: 0,
            pos: 0,
            release_at,
            entries: Vec::new(),
            key_ids: Vec::new(),
            items: Vec::new(),
            keys: Interner::default(),
            room,
        }
    }

    /// Counts `bytes` of what is built against the allowance.
    #[inline(always)]
    fn charge(&mut self, bytes: usize) -> Result<(), ParseError> {
        if self.room.charge(bytes) {
            Ok(())
        } else {
            Err(self.err(OVER_ALLOWANCE))
        }
    }

    /// Makes room for one more element of `size` bytes (as wasm32 lays it out) in the scratch
    /// vector `vec`, doubling it when full, after counting what it grows by: a growth the
    /// allowance cannot pay for never happens, as the vector's move would briefly hold both.
    #[inline(always)]
    fn make_room<T>(
        vec: &mut Vec<T>,
        size: usize,
        room: &mut Allowance<'_>,
    ) -> Result<(), &'static str> {
        if vec.len() < vec.capacity() {
            return Ok(());
        }
        let more = vec.capacity().max(4);
        if !room.charge(more.saturating_mul(size)) {
            return Err(OVER_ALLOWANCE);
        }
        vec.reserve_exact(more);
        Ok(())
    }

    fn document(&mut self) -> Result<Value, ParseError> {
        self.skip_ws();
        let root = self.keys.root();
        let v = self.value(0, root)?;
        self.skip_ws();
        if self.pos != self.text.len() {
            return Err(self.err("unexpected data after the JSON value"));
        }
        Ok(v)
    }

    fn err(&self, message: &'static str) -> ParseError {
        ParseError {
            message,
            offset: self.base + self.pos,
        }
    }

    /// Between two values of an array or object (the position is at a structural character or
    /// white space, so on a character boundary): drops the parsed text once enough has piled up.
    fn release(&mut self) {
        if self.pos < self.release_at {
            return;
        }
        if let Cow::Owned(text) = &mut self.text {
            text.drain(..self.pos);
            text.shrink_to_fit();
            self.base += self.pos;
            self.pos = 0;
            self.release_at = RELEASE_BYTES.max(text.len() / 4);
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Inline: called several times per value, and most JSON has no white space at all.
    #[inline(always)]
    fn skip_ws(&mut self) {
        if let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.skip_more_ws();
        }
    }

    fn skip_more_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect_word(&mut self, word: &'static str, v: Value) -> Result<Value, ParseError> {
        if self.text.as_bytes()[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("unexpected token"))
        }
    }

    /// The value at the position; `owner` is the interner id of the key whose value it is (or
    /// whose array holds it), from which its first key is guessed.
    fn value(&mut self, depth: usize, owner: u32) -> Result<Value, ParseError> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'{') => self.object(depth + 1, owner),
            Some(b'[') => self.array(depth + 1, owner),
            Some(b'"') => {
                let text = self.string()?;
                self.charge(heap_block(text.capacity()))?;
                Ok(Value::String(text))
            }
            Some(b't') => self.expect_word("true", Value::Bool(true)),
            Some(b'f') => self.expect_word("false", Value::Bool(false)),
            Some(b'n') => self.expect_word("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected token")),
        }
    }

    fn object(&mut self, depth: usize, owner: u32) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(Map::new()));
        }
        let start = self.entries.len();
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let (key, id) = self.key(owner, self.entries.len() - start)?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':' after an object key"));
            }
            self.pos += 1;
            self.skip_ws();
            let v = self.value(depth, id)?;
            // The entry in its object, besides its place in the scratch vectors.
            self.charge(ENTRY)?;
            Self::make_room(&mut self.entries, ENTRY, &mut self.room)
                .and_then(|()| Self::make_room(&mut self.key_ids, KEY_ID, &mut self.room))
                .map_err(|message| self.err(message))?;
            self.entries.push((key, v));
            self.key_ids.push(id);
            self.release();
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    let distinct = self.keys.close_object(owner, &self.key_ids[start..]);
                    self.key_ids.truncate(start);
                    let entries = self.entries.split_off(start);
                    if distinct {
                        return Ok(Value::Object(Map::from_distinct_named(entries)));
                    }
                    // Rebuilt one entry at a time, the entries grown by doubling beside an
                    // index of their keys (integer-like, repeated, or many).
                    self.charge(entries.len().saturating_mul(3 * ENTRY))?;
                    return Ok(Value::Object(Map::from_entries(entries)));
                }
                _ => return Err(self.err("expected ',' or '}' in an object")),
            }
        }
    }

    fn array(&mut self, depth: usize, owner: u32) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting too deep"));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(Vec::new()));
        }
        let start = self.items.len();
        loop {
            self.skip_ws();
            let v = self.value(depth, owner)?;
            // The node in its array, besides its place in the scratch vector.
            self.charge(NODE)?;
            Self::make_room(&mut self.items, NODE, &mut self.room)
                .map_err(|message| self.err(message))?;
            self.items.push(v);
            self.release();
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(self.items.split_off(start)));
                }
                _ => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            self.digits();
        }
        self.charge(heap_block(8 + self.pos - start))?;
        Ok(Value::Number(Number::from_literal_unchecked(
            &self.text[start..self.pos],
        )))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// The end of the string at the position when it has no escape: the closing quote's index.
    fn plain_string_end(&self) -> Option<usize> {
        let end = next_escape(self.text.as_bytes(), self.pos + 1);
        (self.text.as_bytes().get(end) == Some(&b'"')).then_some(end)
    }

    /// An object key and its interner id, the `index`-th key of an object that is the value of
    /// the key of id `owner`: the interner's guess when the text has it, else the text between
    /// the quotes interned as it is when it has no escape.
    fn key(&mut self, owner: u32, index: usize) -> Result<(Key, u32), ParseError> {
        let start = self.pos + 1;
        let json = self.text.as_bytes().get(start..).unwrap_or_default();
        if let Some((key, id)) = self.keys.guessed(owner, index, json) {
            self.pos = start + key.len() + 1;
            return Ok((key, id));
        }
        let (key, id) = match self.plain_string_end() {
            Some(end) => {
                self.pos = end + 1;
                self.keys.key_and_id(&self.text[start..end])
            }
            None => {
                let text = self.string()?;
                self.keys.key_and_id(&text)
            }
        };
        if id == Interner::UNSHARED {
            self.charge(heap_block(KEY_HEADER + key.len()))?;
        }
        Ok((key, id))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        // Most strings have no escape: one scan, one allocation of the exact size.
        if let Some(end) = self.plain_string_end() {
            let text = self.text[self.pos + 1..end].to_owned();
            self.pos = end + 1;
            return Ok(text);
        }
        self.pos += 1;
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                Some(b) if b < 0x20 => return Err(self.err("control character in string")),
                // Up to the next quote, backslash or control character, a word at a time.
                Some(_) => self.pos = next_escape(self.text.as_bytes(), self.pos),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let hi = self.hex4()?;
                let c = if (0xD800..0xDC00).contains(&hi)
                    && self.text.as_bytes()[self.pos..].starts_with(b"\\u")
                {
                    let save = self.pos;
                    self.pos += 2;
                    let lo = self.hex4()?;
                    if (0xDC00..0xE000).contains(&lo) {
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                    } else {
                        self.pos = save;
                        None
                    }
                } else {
                    char::from_u32(hi)
                };
                out.push(c.unwrap_or('\u{FFFD}'));
                return Ok(());
            }
            _ => return Err(self.err("invalid escape in string")),
        };
        out.push(c);
        self.pos += 1;
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self
            .text
            .as_bytes()
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.err("invalid \\u escape"))?;
        let mut n = 0;
        for &d in digits {
            let v = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.err("invalid \\u escape"))?;
            n = n * 16 + v;
        }
        self.pos += 4;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_of_a_top_level_array_are_guessed_from_the_item_before() {
        let room = Allowance::unbounded();
        let mut p = Parser::new(Cow::Borrowed(r#"[{"a":1,"b":2},{"a":3,"b":4}]"#), room);
        let v = p.document().unwrap();
        assert_eq!(v, parse(r#"[{"a":1,"b":2},{"a":3,"b":4}]"#).unwrap());
        let root = p.keys.root();
        let (a, _) = p
            .keys
            .guessed(root, 0, b"a\":")
            .expect("the first key is guessed");
        let (b, _) = p
            .keys
            .guessed(root, 1, b"b\":")
            .expect("the second key is guessed");
        assert_eq!((&*a, &*b), ("a", "b"));
        // The root's slot is no key's: a key spelled like its name is a key of its own.
        assert_ne!(p.keys.key_and_id("").1, root);
    }

    #[test]
    fn accepts_what_json_parse_accepts() {
        for ok in [
            "0",
            "-0",
            "1.5e-7",
            "1E+2",
            " [ ] ",
            "{}",
            r#""\u00e9\ud83d\ude00\/""#,
            "null",
            "[true,false,{\"a\":[1,{}]}]",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "'x'",
            "\"\t\"",
            "\"\\x\"",
            "[1] 2",
            "\u{feff}1",
            "nul",
            "-",
            "1e",
            "\"\\u12\"",
            "NaN",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn surrogate_escapes() {
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap(), Value::from("😀"));
        assert_eq!(parse(r#""\ud800x""#).unwrap(), Value::from("\u{FFFD}x"));
        assert_eq!(
            parse(r#""\udc00\ud800\u0041""#).unwrap(),
            Value::from("\u{FFFD}\u{FFFD}A")
        );
    }

    #[test]
    fn depth_is_bounded() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep).unwrap_err().message, "nesting too deep");
        let bomb = "{\"a\":".repeat(100_000);
        assert!(parse(&bomb).is_err());
        // Objects in objects, each key guessed from the one above it.
        let nested = |n: usize| "{\"a\":".repeat(n) + "1" + &"}".repeat(n);
        let v = parse(&nested(MAX_DEPTH)).unwrap();
        assert_eq!(v.to_compact_json(), nested(MAX_DEPTH));
        assert_eq!(
            parse(&nested(MAX_DEPTH + 1)).unwrap_err().message,
            "nesting too deep"
        );
    }

    #[test]
    fn repeated_keys_share_one_allocation_and_escaped_keys_are_decoded() {
        let v = parse(r#"[{"id":1,"a\u0062":2},{"id":3,"ab":4}]"#).unwrap();
        let Value::Array(items) = &v else { panic!() };
        let key = |i: usize, n: usize| {
            let Value::Object(m) = &items[i] else {
                panic!()
            };
            m.keys().nth(n).unwrap().clone()
        };
        assert_eq!(key(0, 1), "ab");
        assert!(std::ptr::eq(key(0, 0).as_ptr(), key(1, 0).as_ptr()));
        assert!(std::ptr::eq(key(0, 1).as_ptr(), key(1, 1).as_ptr()));
        assert_eq!(v.to_compact_json(), r#"[{"id":1,"ab":2},{"id":3,"ab":4}]"#);
    }

    #[test]
    fn strings_with_escapes_anywhere_decode_as_serde_json_does() {
        // Escapes and the closing quote at every offset from the word boundaries the scan uses,
        // in texts shorter and longer than a word, surrogate pairs split at every place.
        let pieces = [
            r"\n",
            r#"\""#,
            r"\\",
            r"\u00e9",
            r"\ud83d\ude00",
            r"\ud800",
            r"\udc00x",
            "é",
            "😀",
        ];
        for before in 0..18 {
            for after in 0..10 {
                for piece in pieces {
                    let text = format!("\"{}{piece}{}\"", "a".repeat(before), "b".repeat(after));
                    let want: String = serde_json::from_str(&text).unwrap_or_else(|_| {
                        text[1..text.len() - 1]
                            .replace(r"\ud800", "\u{FFFD}")
                            .replace(r"\udc00", "\u{FFFD}")
                    });
                    assert_eq!(parse(&text).unwrap(), Value::from(want.as_str()), "{text}");
                    // As a key too, and with the text ending right after the string.
                    let object = format!("{{{text}:{text}}}");
                    let Value::Object(map) = parse(&object).unwrap() else {
                        panic!("{object}")
                    };
                    assert_eq!(map.keys().next().map(Key::as_str), Some(want.as_str()));
                }
            }
        }
        for bad in [
            "\"ab\u{1}c\"",
            "\"abcdefghij\u{1f}\"",
            "\"abcdefgh",
            "\"a\\",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keys_in_a_changing_order_repeated_or_not_shared_build_objects_as_json_parse() {
        // Items of one array with the same keys, then others in another order, repeated,
        // integer-like and too long to share: the guess from the previous item is wrong each time.
        let long = "k".repeat(Interner::MAX_KEY_BYTES + 1);
        let text = format!(
            r#"[{{"a":1,"b":2}},{{"a":1,"b":2}},{{"b":3,"a":4}},{{"a":5,"a":6}},{{"b":1,"1":0,"a":1}},
               {{"{long}":1,"{long}":2}},{{"a":[{{"x":1}}],"b":{{"a":2}}}},{{"b":7,"b":8,"c":9}}]"#
        );
        let v = parse(&text).unwrap();
        assert_eq!(
            v.to_compact_json(),
            format!(
                r#"[{{"a":1,"b":2}},{{"a":1,"b":2}},{{"b":3,"a":4}},{{"a":6}},{{"1":0,"b":1,"a":1}},{{"{long}":2}},{{"a":[{{"x":1}}],"b":{{"a":2}}}},{{"b":8,"c":9}}]"#
            )
        );
        let Value::Array(items) = &v else { panic!() };
        assert_eq!(items[4].get("1"), Some(&Value::from(0)));
        assert_eq!(items[7].get("c"), Some(&Value::from(9)));
    }

    #[test]
    fn a_guessed_key_is_taken_only_when_the_text_is_exactly_it() {
        // The second item's keys start like the first's, or go on past them, or spell them with
        // an escape; a key whose text needs escapes is never taken from the guess.
        let v = parse(concat!(
            r#"[{"ab":1,"a\"b":2,"c":{"x":1}},{"abc":1,"a\"b":2,"c":{"x\u0079":2}},"#,
            r#"{"a\u0062":1,"a\"b":2,"cd":{"x":3}},{"a":1,"ab":2}]"#
        ))
        .unwrap();
        assert_eq!(
            v.to_compact_json(),
            concat!(
                r#"[{"ab":1,"a\"b":2,"c":{"x":1}},{"abc":1,"a\"b":2,"c":{"xy":2}},"#,
                r#"{"ab":1,"a\"b":2,"cd":{"x":3}},{"a":1,"ab":2}]"#
            )
        );
        for cut in [
            r#"[{"ab":1},{"ab"#,
            r#"[{"ab":1},{"ab""#,
            r#"[{"ab":1},{"a"#,
        ] {
            assert!(parse(cut).is_err(), "{cut}");
        }
    }

    /// A JSON array of `n` objects, about 60 bytes each.
    fn large(n: usize) -> String {
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"id":{i},"name":"item {i}","tags":["a","é"],"ok":true}}"#))
            .collect();
        format!("[{}]", items.join(",\n"))
    }

    #[test]
    fn an_owned_text_parses_as_a_borrowed_one_while_it_is_released() {
        let text = large(100_000);
        assert!(text.len() > 4 * RELEASE_BYTES);
        let owned = parse_owned(text.clone()).unwrap();
        assert_eq!(owned, parse(&text).unwrap());
        assert_eq!(
            owned.to_compact_json(),
            parse(&text).unwrap().to_compact_json()
        );
    }

    #[test]
    fn a_broken_owned_text_gives_its_text_back_only_before_the_first_release() {
        let early = format!("<html>{}", large(100_000));
        let failed = parse_owned(early.clone()).unwrap_err();
        assert_eq!(failed.error.offset, 0);
        assert_eq!(failed.text.as_deref(), Some(early.as_str()));
        // Broken near its end: the error's offset is still in the whole text.
        let mut late = large(100_000);
        late.insert(late.len() - 1, ',');
        let failed = parse_owned(late.clone()).unwrap_err();
        assert_eq!(failed.error, parse(&late).unwrap_err());
        assert_eq!(failed.text, None);
        // A short text is never released.
        let failed = parse_owned("[1,}".to_owned()).unwrap_err();
        assert_eq!(failed.text.as_deref(), Some("[1,}"));
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        assert_eq!(parse_bytes(b"\"\xff\"").unwrap_err().offset, 1);
    }

    /// Texts of one shape each, the dense ones a few hundred KB.
    fn shapes() -> Vec<(&'static str, String)> {
        let run = r#"{"id":123456789,"name":"CI","head_branch":"main","status":"completed","run_number":42,"actor":{"login":"octocat","id":1},"labels":["a","b"],"draft":false}"#;
        let many = |item: &str, n: usize| format!("[{}{item}]", format!("{item},").repeat(n - 1));
        let keyed = |key: &str| {
            let entries: String = (1..100_000).map(|i| format!("\"{key}{i}\":0,")).collect();
            format!("{{{entries}\"{key}0\":0}}")
        };
        vec![
            ("numbers", many("0", 200_000)),
            ("empty objects", many("{}", 200_000)),
            ("empty strings", many(r#""""#, 200_000)),
            ("short strings", many(r#""ab""#, 200_000)),
            ("escaped strings", many(r#""a\n""#, 100_000)),
            ("empty arrays", many("[]", 200_000)),
            ("pairs", many("[0,0]", 100_000)),
            ("small objects", many(r#"{"a":0}"#, 100_000)),
            ("integer keys", keyed("")),
            ("distinct keys", keyed("k")),
            (
                "runs",
                format!(
                    r#"{{"total_count":5000,"workflow_runs":{}}}"#,
                    many(run, 5000)
                ),
            ),
        ]
    }

    #[test]
    fn the_count_is_within_a_factor_of_what_the_heap_holds_for_every_shape() {
        // The count is wasm32's and includes the scratch vectors freed at the end; the host's
        // nodes are larger (8-byte words) and its heap count has no allocator overhead.
        for (shape, text) in shapes() {
            let before = crate::memory::heap::live();
            let mut room = Allowance::unbounded();
            let value = parse_within(&text, &mut room).unwrap();
            let held = (crate::memory::heap::live() - before) as f64;
            let counted = room.spent() as f64;
            let ratio = held / counted;
            assert!(
                (0.4..=2.5).contains(&ratio),
                "{shape}: held {held}, counted {counted}"
            );
            // Dense shapes cost many times their text: what the allowance exists for.
            assert!(
                counted > 2.5 * text.len() as f64,
                "{shape}: {counted} for {}",
                text.len()
            );
            drop(value);
        }
    }

    #[test]
    fn a_parse_past_its_allowance_fails_as_over_it_and_one_within_it_matches_parse() {
        for (shape, text) in shapes() {
            let mut room = Allowance::unbounded();
            let whole = parse_within(&text, &mut room).unwrap();
            let needed = room.spent();
            let mut exact = Allowance::fixed(needed);
            assert_eq!(parse_within(&text, &mut exact).unwrap(), whole, "{shape}");
            let error = parse_within(&text, &mut Allowance::fixed(needed - 1)).unwrap_err();
            assert!(error.over_allowance(), "{shape}: {error}");
            let owned = parse_owned_within(text, &mut Allowance::fixed(needed / 2)).unwrap_err();
            assert!(owned.error.over_allowance(), "{shape}");
        }
        let broken = parse_within("[0,", &mut Allowance::fixed(1 << 20)).unwrap_err();
        assert!(!broken.over_allowance());
    }

    #[test]
    fn a_growing_allowance_asks_in_steps_and_stops_where_it_is_refused() {
        let text = format!("[{}0]", "0,".repeat(499_999));
        let needed = {
            let mut room = Allowance::unbounded();
            parse_within(&text, &mut room).unwrap();
            room.spent()
        };
        for limit in [needed / 2, needed + GROWTH_STEP] {
            let (mut granted, mut asks) = (0usize, Vec::new());
            let mut more = |bytes: usize| {
                asks.push(bytes);
                let ok = granted + bytes <= limit;
                if ok {
                    granted += bytes;
                }
                ok
            };
            let mut room = Allowance::growing(0, &mut more);
            let parsed = parse_within(&text, &mut room);
            assert_eq!(parsed.is_ok(), limit > needed, "limit {limit} of {needed}");
            assert!(room.allowed() <= limit && room.spent() <= needed);
            assert!(asks.iter().all(|&ask| ask >= GROWTH_STEP), "{asks:?}");
            // Steps grow with what is held, so a large value is granted in a few dozen asks.
            assert!(asks.len() < 64, "{} asks", asks.len());
        }
    }

    #[test]
    fn a_scratch_vector_is_counted_before_it_grows() {
        let mut room = Allowance::fixed(4 * NODE);
        let mut items: Vec<Value> = Vec::new();
        assert_eq!(Parser::make_room(&mut items, NODE, &mut room), Ok(()));
        assert_eq!((items.capacity(), room.spent()), (4, 4 * NODE));
        items.extend(std::iter::repeat_n(Value::Null, 4));
        assert_eq!(
            Parser::make_room(&mut items, NODE, &mut room),
            Err(OVER_ALLOWANCE)
        );
        assert_eq!(items.capacity(), 4);
    }
}
