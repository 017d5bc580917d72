//! A step's tail made shorter: a run of lines that differ only in numbers, durations and hex ids
//! (`Compiling dependency-12 v1.2.3`, `test case_041 ... ok`), or a run of progress and
//! passing-test lines (`✓ 12 [chromium] › cart.spec.ts:17:3 › removes an item (812ms)`), becomes
//! one entry that says how many lines it stands for and which (decision 0105). Decisive lines
//! never join a run: workflow commands (`##[error]`, `##[warning]`...), lines that speak of an
//! error, a failure, a panic or a kill, and the step's last [`VERBATIM_LAST_LINES`] lines. A
//! blank line before those is left out: it says nothing, and the gap in the numbering shows
//! where it was.
//!
//! The work is linear in the tail's text, which the ring already bounds (at most
//! [`super::MAX_TAIL_LINES`] lines of at most [`crate::logs::line::MAX_TEXT_CHARS`] characters), so the
//! log's size never matters here.

use super::Entry;

/// Fewest lines a run must have to be collapsed: two lines cost about what their collapsed
/// entry does.
pub(crate) const MIN_RUN: usize = 3;
/// The step's last lines, always shown as they are: where a step ends is where it failed.
pub(crate) const VERBATIM_LAST_LINES: usize = 3;
/// What stands for a number, a duration or a hex id in a run's shape.
const MASK: char = '#';

/// Words (ASCII case ignored) that make a line decisive.
const DECISIVE_WORDS: &[&str] = &[
    "error",
    "fail",
    "panic",
    "fatal",
    "exception",
    "abort",
    "killed",
    "timed out",
    "timeout",
    "warn",
    "denied",
    "assert",
];
/// Marks of a failed test or check some runners write instead of a word.
const DECISIVE_MARKS: &[char] = &['✘', '✗', '✖', '×', '❌'];

/// First words of progress and passing-test lines (after the shape's masking and leading
/// spaces): the lines of one such run differ in what compiled or passed, which a failure's
/// reader does not need line by line.
const PROGRESS_OPENINGS: &[&str] = &[
    "✓ ",
    "✔ ",
    "√ ",
    "PASS ",
    "ok ",
    "ok\t",
    "--- PASS: ",
    "=== RUN ",
    "Compiling ",
    "Checking ",
    "Downloaded ",
    "Downloading ",
    "Installing ",
];
/// Last words of passing-test lines (cargo's `test x ... ok`, pytest's `x PASSED [ 12%]` once
/// masked).
const PROGRESS_ENDINGS: &[&str] = &[" ... ok", " PASSED", " PASSED [ #%]", " PASSED [#%]"];

/// `text` with each number (`12`, `4.7.1`, `10:00:05`), each duration (`812ms`, `5.3 s`, `4m`)
/// and each hex id of at least 7 digits with a decimal one (`5f0c2e1a`) replaced by [`MASK`].
pub(crate) fn shape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let word_start = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if word_start && c.is_ascii_alphanumeric() {
            let end = (i..chars.len())
                .find(|&j| !chars[j].is_ascii_alphanumeric())
                .unwrap_or(chars.len());
            let word = &chars[i..end];
            if word.len() >= 7
                && word.iter().all(char::is_ascii_hexdigit)
                && word.iter().any(char::is_ascii_digit)
                && !word.iter().all(char::is_ascii_digit)
            {
                out.push(MASK);
                i = end;
                continue;
            }
        }
        if c.is_ascii_digit() {
            i = skip_number(&chars, i);
            i = skip_unit(&chars, i);
            out.push(MASK);
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The index after the number starting at `chars[at]`: digits, and more digits after each `.`,
/// `,` or `:` between digits.
fn skip_number(chars: &[char], at: usize) -> usize {
    let mut i = at;
    loop {
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        let joined = matches!(chars.get(i), Some('.' | ',' | ':'))
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if !joined {
            return i;
        }
        i += 1;
    }
}

/// The index after a duration's unit right after a number at `chars[at]` (one space allowed
/// between), or `at` when there is none.
fn skip_unit(chars: &[char], at: usize) -> usize {
    const UNITS: &[&str] = &[
        "ms", "µs", "us", "ns", "s", "sec", "secs", "m", "min", "mins", "h",
    ];
    let start = if chars.get(at) == Some(&' ') {
        at + 1
    } else {
        at
    };
    let end = (start..chars.len())
        .find(|&j| !chars[j].is_alphabetic())
        .unwrap_or(chars.len());
    if end == start {
        return at;
    }
    let word: String = chars[start..end].iter().collect();
    if UNITS.contains(&word.as_str()) {
        end
    } else {
        at
    }
}

/// Whether `text` must be shown as it is.
fn decisive(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.starts_with("##[") || trimmed.starts_with("::") {
        return true;
    }
    if text.chars().any(|c| DECISIVE_MARKS.contains(&c)) {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    DECISIVE_WORDS.iter().any(|w| lower.contains(w))
}

/// What lines must share to join one run.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    /// Shown as it is.
    Decisive,
    /// Progress or a passed test: the opening or ending that says so.
    Progress(&'static str),
    /// Anything else: its shape.
    Shape,
}

fn key(shape: &str) -> Key {
    let trimmed = shape.trim_start();
    if let Some(opening) = PROGRESS_OPENINGS.iter().find(|o| trimmed.starts_with(*o)) {
        return Key::Progress(opening);
    }
    if let Some(ending) = PROGRESS_ENDINGS.iter().find(|e| trimmed.ends_with(*e)) {
        return Key::Progress(ending);
    }
    Key::Shape
}

/// One line of the tail as the grouping sees it.
struct Seen {
    entry: Entry,
    shape: String,
    key: Key,
}

impl Seen {
    fn joins(&self, other: &Seen) -> bool {
        match (&self.key, &other.key) {
            (Key::Decisive, _) | (_, Key::Decisive) => false,
            (Key::Progress(a), Key::Progress(b)) => a == b,
            (Key::Shape, Key::Shape) => self.shape == other.shape,
            _ => false,
        }
    }
}

/// `tail` (consecutive lines ending with the step's last) without its blank lines (but among
/// the last [`VERBATIM_LAST_LINES`]), and with each run of at least [`MIN_RUN`] alike lines
/// replaced by one entry: numbered as the run's first line, its text
/// `[N lines FIRST-LAST] ` then the lines' shared shape (numbers, durations and ids shown as
/// `#`), or the run's last line as it is when the lines differ in more (what compiled or
/// passed last before the failure).
pub(crate) fn collapse(tail: Vec<Entry>) -> Vec<Entry> {
    let verbatim_from = tail.len().saturating_sub(VERBATIM_LAST_LINES);
    let seen: Vec<Seen> = tail
        .into_iter()
        .enumerate()
        .filter(|(i, entry)| *i >= verbatim_from || !entry.text.trim().is_empty())
        .map(|(i, entry)| {
            let shape = shape(&entry.text);
            let key = if i >= verbatim_from || decisive(&entry.text) {
                Key::Decisive
            } else {
                key(&shape)
            };
            Seen { entry, shape, key }
        })
        .collect();
    let mut out = Vec::with_capacity(seen.len());
    let mut run: Vec<Seen> = Vec::new();
    for line in seen {
        if run.last().is_some_and(|last| !last.joins(&line)) {
            flush(&mut run, &mut out);
        }
        run.push(line);
    }
    flush(&mut run, &mut out);
    out
}

/// Moves `run` to `out`: as one entry when it is long enough, else line by line.
fn flush(run: &mut Vec<Seen>, out: &mut Vec<Entry>) {
    if run.len() < MIN_RUN {
        out.extend(run.drain(..).map(|s| s.entry));
        return;
    }
    let (first, last) = (&run[0], &run[run.len() - 1]);
    let one_shape = run.iter().all(|s| s.shape == first.shape);
    let shown = if one_shape {
        first.shape.as_str()
    } else {
        last.entry.text.as_str()
    };
    out.push(Entry {
        line: first.entry.line,
        text: format!(
            "[{} lines {}-{}] {shown}",
            run.len(),
            first.entry.line,
            last.entry.line
        ),
    });
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(first: u64, texts: &[&str]) -> Vec<Entry> {
        texts
            .iter()
            .zip(first..)
            .map(|(text, line)| Entry {
                line,
                text: (*text).to_owned(),
            })
            .collect()
    }

    fn shown(entries: &[Entry]) -> Vec<(u64, &str)> {
        entries.iter().map(|e| (e.line, e.text.as_str())).collect()
    }

    #[test]
    fn shapes_mask_numbers_durations_and_ids() {
        for (text, want) in [
            (
                "   Compiling dependency-407 v4.7.1",
                "   Compiling dependency-# v#",
            ),
            (
                " PASS  src/module373/feature373.test.ts (5.3 s)",
                " PASS  src/module#/feature#.test.ts (#)",
            ),
            ("done in 812ms, then 4m 12s", "done in #, then # #"),
            (
                "deps/integration-5f0c2e1a at 2026-01-01T10:00:05Z",
                "deps/integration-# at #-#-#T#Z",
            ),
            // Words that merely look like hex, and plain words, stay.
            ("cafebabe deadbeef 1234567 ms", "cafebabe deadbeef #"),
            ("3 items, 2 more", "# items, # more"),
            ("Grüße 12 µs", "Grüße #"),
        ] {
            assert_eq!(shape(text), want, "{text}");
        }
    }

    #[test]
    fn runs_of_alike_lines_collapse_and_decisive_lines_stay() {
        let mut texts: Vec<String> = (0..12)
            .map(|i| format!("test import::case_{i:03} ... ok"))
            .collect();
        texts.extend(
            [
                "error: test failed, to rerun pass `--test integration`",
                "",
                "Caused by:",
                "  process didn't exit successfully (signal: 9, SIGKILL: kill)",
                "##[error]Process completed with exit code 101.",
            ]
            .map(str::to_owned),
        );
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let out = collapse(entries(100, &texts));
        assert_eq!(
            shown(&out),
            [
                (100, "[12 lines 100-111] test import::case_# ... ok"),
                (
                    112,
                    "error: test failed, to rerun pass `--test integration`"
                ),
                (114, "Caused by:"),
                (
                    115,
                    "  process didn't exit successfully (signal: 9, SIGKILL: kill)"
                ),
                (116, "##[error]Process completed with exit code 101."),
            ]
        );
    }

    #[test]
    fn progress_lines_collapse_to_the_last_one() {
        let texts = [
            "   Compiling dependency-418 v3.8.5",
            "   Compiling dependency-419 v4.9.6",
            "   Compiling imgtool v0.4.0 (/home/runner/work/logs/logs)",
            "error[E0308]: mismatched types",
            "1",
            "2",
            "3",
            "4",
            "5",
        ];
        assert_eq!(
            shown(&collapse(entries(7, &texts)))[..2],
            [
                (
                    7,
                    "[3 lines 7-9]    Compiling imgtool v0.4.0 (/home/runner/work/logs/logs)"
                ),
                (10, "error[E0308]: mismatched types"),
            ]
        );
        let playwright = [
            "  ✓  11 [chromium] › tests/cart.spec.ts:17:3 › cart › removes an item (812ms)",
            "  ✓  12 [chromium] › tests/cart.spec.ts:30:3 › cart › applies a coupon (1.4s)",
            "  ✓  13 [chromium] › tests/login.spec.ts:8:3 › signs in (2.0s)",
            "  ✘  14 [chromium] › tests/pay.spec.ts:9:3 › pays (30.0s)",
            "1",
            "2",
            "3",
            "4",
            "##[error]The operation was canceled.",
        ];
        let out = collapse(entries(40, &playwright));
        assert_eq!(out.len(), 7);
        assert_eq!(out[1].text, playwright[3]);
        assert_eq!(
            out[0].text,
            "[3 lines 40-42]   ✓  13 [chromium] › tests/login.spec.ts:8:3 › signs in (2.0s)"
        );
    }

    #[test]
    fn short_runs_the_last_lines_and_different_shapes_stay() {
        // Two alike lines stay two; the last three stay whatever they are.
        let texts = ["a 1", "a 2", "b", "c 1", "c 2", "c 3", "c 4", "c 5"];
        assert_eq!(
            shown(&collapse(entries(1, &texts))),
            shown(&entries(1, &texts))
        );
        let texts = [
            "x 1", "x 2", "x 3", "y 1", "y 2", "y 3", "z", "z", "z", "z", "z",
        ];
        assert_eq!(
            shown(&collapse(entries(1, &texts))),
            [
                (1, "[3 lines 1-3] x #"),
                (4, "[3 lines 4-6] y #"),
                (7, "z"),
                (8, "z"),
                (9, "z"),
                (10, "z"),
                (11, "z"),
            ]
        );
        assert!(collapse(Vec::new()).is_empty());
    }

    #[test]
    fn blank_lines_are_left_out_but_among_the_last() {
        let texts = ["a", "", " ", "b", "", "c", "", "d"];
        assert_eq!(
            shown(&collapse(entries(1, &texts))),
            [(1, "a"), (4, "b"), (6, "c"), (7, ""), (8, "d")]
        );
    }

    #[test]
    fn decisive_lines_never_join_a_run() {
        let texts = [
            "warning: unused variable 1",
            "warning: unused variable 2",
            "warning: unused variable 3",
            "##[group]Run 1",
            "##[group]Run 2",
            "##[group]Run 3",
            "FAIL src/a1.test.ts",
            "FAIL src/a2.test.ts",
            "FAIL src/a3.test.ts",
            "end",
            "end",
            "end",
            "end",
            "end",
        ];
        assert_eq!(
            shown(&collapse(entries(1, &texts))),
            shown(&entries(1, &texts))
        );
    }
}
