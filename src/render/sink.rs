//! Where the renderers write: a whole `String`, or a [`Bounded`] prefix that keeps only what a
//! truncation can show and counts the rest.
//!
//! A large value's full rendering can be several times its JSON size, yet a cut text shows only
//! the first `text_max_chars` UTF-16 units; the guidance block needs the full length, not the
//! full text. Rendering into [`Bounded`] keeps the peak memory of a large result near the size of
//! the value itself, which the Workers 128 MB limit needs (decision 0020).

use super::truncate::{find_cut_in, utf16_len, Cut};

/// A text output the renderers append to. Generic (not `dyn`) so that rendering into a `String`
/// compiles to direct appends, with no indirect call per piece of text.
pub trait Sink {
    /// Appends `s`.
    fn push_str(&mut self, s: &str);
    /// Appends `c`.
    fn push(&mut self, c: char);
    /// Appends `n` spaces (deep indentation, which a sink past its bound only counts).
    fn push_spaces(&mut self, n: usize) {
        for _ in 0..n {
            self.push(' ');
        }
    }
    /// Whether the renderers, once this sink keeps nothing more ([`Sink::keeps`]), hand the rest
    /// of the rendering to a [`Counter`] and give this sink only its length: a renderer whose
    /// every output call is a count runs at a fraction of the cost of one that asks a bounded
    /// sink at every piece of text whether it still keeps it.
    const HANDS_OVER: bool = false;
    /// False once nothing more written would be kept, so only lengths matter: the renderers then
    /// give a scalar's length in UTF-16 units to [`Sink::count`] instead of writing its text.
    #[inline]
    fn keeps(&self) -> bool {
        true
    }
    /// Counts `units` UTF-16 units of text that is not written (only once [`Sink::keeps`] is
    /// false).
    #[inline]
    fn count(&mut self, units: usize) {
        let _ = units;
    }
}

impl Sink for String {
    #[inline]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }

    #[inline]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

/// A sink that keeps nothing: the length of what is written, in UTF-16 units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counter {
    units: usize,
}

impl Counter {
    /// The length of what `write` writes into a counter.
    #[inline]
    pub(crate) fn units_of(write: impl FnOnce(&mut Counter)) -> usize {
        let mut counter = Counter::default();
        write(&mut counter);
        counter.units
    }
}

impl Sink for Counter {
    /// Only the renderers' fixed pieces of text (`: `, `- `, brackets) reach a counter, so the
    /// count is inlined where the piece is a constant, and folded away.
    #[inline(always)]
    fn push_str(&mut self, s: &str) {
        self.units += s
            .bytes()
            .map(|b| usize::from((b & 0xc0) != 0x80) + usize::from(b >= 0xf0))
            .sum::<usize>();
    }

    #[inline]
    fn push(&mut self, c: char) {
        self.units += c.len_utf16();
    }

    #[inline]
    fn push_spaces(&mut self, n: usize) {
        self.units += n;
    }

    #[inline]
    fn keeps(&self) -> bool {
        false
    }

    #[inline]
    fn count(&mut self, units: usize) {
        self.units += units;
    }
}

/// A rendering's first characters (every one that starts at or before UTF-16 unit index `max`,
/// which is all [`find_cut_in`] looks at) and the length of the whole, in UTF-16 units.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bounded {
    kept: String,
    /// UTF-16 units written; counted only from the piece that takes `kept` past `max` bytes.
    units: usize,
    /// Whether `units` is counted yet. Until then everything fits (a string has at least as
    /// many bytes as UTF-16 units), so the kept text, most of what a rendering cut at its bound
    /// writes, is copied without counting its units piece by piece.
    counting: bool,
    max: usize,
}

impl Bounded {
    /// An empty sink for a text that will be cut at `max` UTF-16 units.
    pub fn new(max: usize) -> Bounded {
        Bounded {
            kept: String::new(),
            units: 0,
            counting: false,
            max,
        }
    }

    /// True once no further character can be kept.
    #[inline]
    fn full(&self) -> bool {
        self.units > self.max
    }

    /// The length of everything written, in UTF-16 units.
    pub(crate) fn units(&self) -> usize {
        if self.counting {
            self.units
        } else {
            utf16_len(&self.kept)
        }
    }

    /// Takes `n` more bytes without counting, when they keep the kept text within `max` bytes;
    /// otherwise starts counting units (once) and returns false.
    #[inline]
    fn fits_uncounted(&mut self, n: usize) -> bool {
        if !self.counting {
            if self.kept.len() + n <= self.max {
                return true;
            }
            self.units = utf16_len(&self.kept);
            self.counting = true;
        }
        false
    }

    /// The kept text (the whole text when it fits `max`) and where it must be cut, if it must.
    pub(crate) fn finish(self) -> (String, Option<Cut>) {
        let cut = find_cut_in(&self.kept, self.units(), self.max);
        let mut text = self.kept;
        if let Some(cut) = &cut {
            text.truncate(cut.kept_bytes);
        }
        (text, cut)
    }
}

impl Sink for Bounded {
    const HANDS_OVER: bool = true;

    #[inline]
    fn push_str(&mut self, s: &str) {
        if self.fits_uncounted(s.len()) {
            self.kept.push_str(s);
        } else if self.full() {
            self.units += utf16_len(s);
        } else if self.units + s.len() <= self.max {
            // A string has at least as many bytes as UTF-16 units, so all of it starts in bounds.
            self.kept.push_str(s);
            self.units += utf16_len(s);
        } else {
            for c in s.chars() {
                self.push(c);
            }
        }
    }

    #[inline]
    fn push(&mut self, c: char) {
        if self.fits_uncounted(c.len_utf8()) {
            self.kept.push(c);
            return;
        }
        if !self.full() {
            self.kept.push(c);
        }
        self.units += c.len_utf16();
    }

    /// Past the bound, spaces are only counted: indentation grows with depth, and counting it
    /// space by space made a deeply nested value cost its depth times its size.
    fn push_spaces(&mut self, n: usize) {
        if self.keeps() {
            for _ in 0..n {
                self.push(' ');
            }
        } else {
            self.units += n;
        }
    }

    /// Past the bound the rest of a rendering is only counted: building and escaping its text
    /// cost as much as rendering the whole value.
    #[inline]
    fn keeps(&self) -> bool {
        !(self.counting && self.full())
    }

    #[inline]
    fn count(&mut self, units: usize) {
        self.units += units;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::find_cut;

    /// Writes `text` into a bounded sink in pieces of `piece` characters and checks that the
    /// result is the one the whole text gives.
    fn same_as_whole(text: &str, max: usize, piece: usize) {
        let mut sink = Bounded::new(max);
        let chars: Vec<char> = text.chars().collect();
        for (i, part) in chars.chunks(piece.max(1)).enumerate() {
            let part: String = part.iter().collect();
            if i % 3 == 2 {
                for c in part.chars() {
                    sink.push(c);
                }
            } else {
                sink.push_str(&part);
            }
        }
        assert_eq!(sink.units(), utf16_len(text));
        let (kept, cut) = sink.finish();
        let whole = find_cut(text, max);
        assert_eq!(cut, whole, "{text:?} max {max} piece {piece}");
        let expected = whole.map_or(text, |c| &text[..c.kept_bytes]);
        assert_eq!(kept, expected, "{text:?} max {max} piece {piece}");
    }

    #[test]
    fn bounded_prefix_gives_the_cut_of_the_whole_text() {
        let texts = [
            String::new(),
            "abc".to_owned(),
            "ab\ncdef".to_owned(),
            "\nabcdef".to_owned(),
            "line one\nline two\nline three\n".repeat(40),
            "é😀\n€a😀😀\nz".repeat(30),
            "x".repeat(700) + "\n" + &"y".repeat(700),
        ];
        for text in &texts {
            for max in [
                0, 1, 2, 3, 5, 8, 9, 10, 17, 100, 499, 500, 501, 703, 1200, 5000,
            ] {
                for piece in [1, 2, 7, 64, 10_000] {
                    same_as_whole(text, max, piece);
                }
            }
        }
    }

    #[test]
    fn a_bounded_sink_keeps_little_of_a_long_text() {
        let mut sink = Bounded::new(10);
        for _ in 0..1000 {
            sink.push_str("0123456789\n");
        }
        assert_eq!(sink.units(), 11_000);
        assert!(sink.kept.len() <= 11);
        let (kept, cut) = sink.finish();
        assert_eq!(kept, "0123456789");
        assert_eq!(cut.map(|c| c.original_units), Some(11_000));
    }
}
