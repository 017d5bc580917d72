//! jq's regular expressions (`test`, `match`, `capture`, `scan`, `split/2`, `splits`, `sub`,
//! `gsub`), as jaq-std's natives `matches`, `split_matches` and `split_` with their semantics,
//! under a bound on the compiled pattern and with their matching paid for.
//!
//! Patterns are built at run time, so a program can make one whose compiled form is huge from
//! a short text (`(?:a|b){0,10000}`). regex-bites matches in time proportional to the haystack
//! times the compiled size, so the pattern is compiled under the smallest of a few size bounds
//! it fits, and the haystack is paid for at a rate that grows with that bound, before matching.
//! A pattern past the largest bound, or longer than [`MAX_PATTERN_BYTES`], is refused with an
//! error that says so.

use jaq_core::native::{bome, Fun};
use jaq_core::{Bind, Error, Native, ValR};
use jaq_std::ValT as _;
use regex_bites::bytes::{Regex, RegexBuilder};

use super::metered::M;
use super::Budgeted;
use crate::projection::meter;

/// The longest pattern compiled, in bytes.
pub(crate) const MAX_PATTERN_BYTES: usize = 4096;
/// The compiled size bounds a pattern is tried under, smallest first, in bytes. The largest is
/// the most a pattern may take; regex-bites' own default is 10 MiB.
const SIZE_BOUNDS: [usize; 4] = [1 << 10, 4 << 10, 16 << 10, 64 << 10];
/// Units of fuel per haystack byte per byte of compiled bound: a byte of haystack costs up to
/// one step per compiled state, and a state takes at least 16 bytes, against the 16 steps a
/// unit pays for.
const BOUND_BYTES_PER_UNIT: usize = 256;
/// The deepest nesting of groups and repetitions in a pattern.
const NEST_LIMIT: u32 = 64;
/// Matches collected between two looks at the heap.
const MATCHES_PER_LOOK: usize = 1024;

/// jq's regex flags, as jaq reads them.
#[derive(Clone, Copy, Default)]
struct Flags {
    global: bool,
    ignore_empty: bool,
    insensitive: bool,
    multi_line: bool,
    dot_all: bool,
    lazy: bool,
    extended: bool,
}

impl Flags {
    fn new(text: &str) -> Result<Flags, char> {
        let mut f = Flags::default();
        for c in text.chars() {
            match c {
                'g' => f.global = true,
                'n' => f.ignore_empty = true,
                'i' => f.insensitive = true,
                'm' => f.multi_line = true,
                's' => f.dot_all = true,
                'l' => f.lazy = true,
                'x' => f.extended = true,
                'p' => {
                    f.multi_line = true;
                    f.dot_all = true;
                }
                c => return Err(c),
            }
        }
        Ok(f)
    }
}

/// `pattern` compiled under the smallest size bound it fits, and that bound.
fn compile(pattern: &str, flags: Flags) -> Result<(Regex, usize), Error<M>> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(Error::str(format_args!(
            "regex pattern longer than {MAX_PATTERN_BYTES} bytes"
        )));
    }
    let mut last = None;
    for bound in SIZE_BOUNDS {
        // Compiling stops once the bound is passed, so an attempt costs no more than it.
        if !meter::charge_items((pattern.len() + bound) as u64) {
            return Err(Error::str(meter::reason()));
        }
        let built = RegexBuilder::new(pattern)
            .case_insensitive(flags.insensitive)
            .multi_line(flags.multi_line)
            .dot_matches_new_line(flags.dot_all)
            .swap_greed(flags.lazy)
            .ignore_whitespace(flags.extended)
            .nest_limit(NEST_LIMIT)
            .size_limit(bound)
            .build();
        match built {
            Ok(re) => return Ok((re, bound)),
            Err(e) => last = Some(e),
        }
    }
    let max = SIZE_BOUNDS[SIZE_BOUNDS.len() - 1];
    Err(Error::str(match last {
        Some(e) if e.to_string().contains("size limit") => {
            format!("regex pattern too large once compiled (over {max} bytes): {pattern}")
        }
        Some(e) => format!("invalid regex: {e}"),
        None => "invalid regex".to_owned(),
    }))
}

/// Character positions of byte offsets that never go back before the last mark.
struct CharPos<'a> {
    text: &'a [u8],
    byte: usize,
    chars: usize,
}

impl CharPos<'_> {
    /// The characters before `byte`, counting on from `from` (at or after the last mark).
    fn at(&self, from: (usize, usize), byte: usize) -> usize {
        from.1
            + self.text[from.0..byte]
                .iter()
                .filter(|&&c| c & 0xC0 != 0x80)
                .count()
    }

    /// Moves the mark to `byte` (never backwards) and returns its position.
    fn mark(&mut self, byte: usize) -> (usize, usize) {
        self.chars = self.at((self.byte, self.chars), byte);
        self.byte = byte;
        (self.byte, self.chars)
    }
}

/// The match object of one group: jaq's `offset`, `length`, `string` and `name`.
fn group(
    input: &M,
    pos: &CharPos,
    start: (usize, usize),
    m: regex_bites::bytes::Match,
    name: Option<&str>,
) -> ValR<M> {
    let offset = pos.at(start, m.start());
    let length = pos.at((m.start(), 0), m.end());
    let fields = [
        (M::from("offset".to_owned()), M::from(offset as isize)),
        (M::from("length".to_owned()), M::from(length as isize)),
        (M::from("string".to_owned()), input.as_sub_str(m.as_bytes())),
    ]
    .into_iter()
    .chain(name.map(|n| (M::from("name".to_owned()), M::from(n.to_owned()))));
    jaq_core::ValT::from_map(fields)
}

/// The text of a string value, or a type error.
fn text_of(v: &M) -> Result<&str, Error<M>> {
    v.try_as_utf8_bytes()
        .and_then(|b| std::str::from_utf8(b).map_err(|e| Error::str(e.to_string())))
}

/// Runs `pattern` over the input: the pieces between matches when `split`, the matches (each an
/// array of its groups' match objects) when `matches`, in order, as one array.
fn run(input: &M, pattern: &M, flags: &M, split: bool, matches: bool) -> ValR<M> {
    let flags = Flags::new(text_of(flags)?)
        .map_err(|c| Error::str(format_args!("invalid regex flag: {c}")))?;
    let (re, bound) = compile(text_of(pattern)?, flags)?;
    let text = input.try_as_utf8_bytes()?;
    let per_byte = (bound / BOUND_BYTES_PER_UNIT) as u64;
    if !meter::charge_items(text.len() as u64 * per_byte) {
        return Err(Error::str(meter::reason()));
    }
    let names: Vec<Option<&str>> = re.capture_names().collect();
    let mut pos = CharPos {
        text,
        byte: 0,
        chars: 0,
    };
    let mut out = Vec::new();
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let Some(whole) = caps.get(0) else { continue };
        if flags.ignore_empty && whole.as_bytes().is_empty() {
            continue;
        }
        // Each match is a few values, and its groups are counted from its start.
        if !meter::charge_items((names.len() * (1 + whole.len())) as u64)
            || !meter::room_for_one_more(&out)
        {
            return Err(Error::str(meter::reason()));
        }
        if split {
            out.push(input.as_sub_str(&text[last..whole.start()]));
            last = whole.end();
        }
        if matches {
            let start = pos.mark(whole.start());
            let groups = caps
                .iter()
                .zip(&names)
                .filter_map(|(m, name)| Some(group(input, &pos, start, m?, *name)))
                .collect::<Result<Vec<M>, _>>()?;
            out.push(groups.into_iter().collect());
        }
        if out.len() % MATCHES_PER_LOOK == 0 && !meter::within_memory() {
            return Err(Error::str(meter::reason()));
        }
        if !flags.global {
            break;
        }
    }
    if split {
        out.push(input.as_sub_str(&text[last..]));
    }
    Ok(out.into_iter().collect())
}

/// The natives, under jaq-std's names and arities (the jq definitions of `test`, `match` and
/// the rest call them).
pub(crate) fn natives() -> impl Iterator<Item = Fun<Budgeted>> {
    let vv = || -> Box<[Bind]> { [Bind::Var(()), Bind::Var(())].into() };
    macro_rules! native {
        ($split:expr, $matches:expr) => {
            Native::new(|mut cv| {
                let flags = cv.0.pop_var();
                let pattern = cv.0.pop_var();
                bome(run(&cv.1, &pattern, &flags, $split, $matches))
            })
        };
    }
    let list: [Fun<Budgeted>; 3] = [
        ("matches", vv(), native!(false, true)),
        ("split_matches", vv(), native!(true, true)),
        ("split_", vv(), native!(true, false)),
    ];
    list.into_iter()
}

/// Whether `name/arity` is one of the natives here.
pub(crate) fn replaces(name: &str, arity: usize) -> bool {
    arity == 2 && matches!(name, "matches" | "split_matches" | "split_")
}
