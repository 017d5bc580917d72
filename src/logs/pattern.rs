//! The `grep` argument: a user-supplied regular expression, matched in linear time (no
//! backtracking blow-ups) with bounded pattern length, compiled size and nesting, a bound on the
//! matching work of one call, and a clear error for a bad or too costly pattern.
//!
//! `regex-bites` matches with a Pike VM: each byte of text may step every state of the compiled
//! program, so a program of `P` bytes costs up to about `P` times what a one-state program does
//! per byte (`(?:.?){0,200}QQ` is 22 KiB on wasm32 and steps hundreds of states per byte). A log
//! is as long as 512 MiB, so the compiled-size bound alone leaves minutes of CPU. Each line
//! matched is therefore charged its window's bytes times the program bytes past
//! [`FREE_PROGRAM_BYTES`], against [`WORK_BUDGET`] for the whole call; a pattern that would go
//! past it stops matching, and the call answers [`CODE_OVER_BUDGET`] (decision 0096).

use regex_bites::{Regex, RegexBuilder};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Longest pattern accepted, in bytes.
pub(crate) const MAX_PATTERN_BYTES: usize = 256;
/// Most bytes of one line the pattern is matched against (its start): the match time is
/// proportional to pattern size times line length, so both are bounded.
pub(crate) const MATCH_WINDOW_BYTES: usize = 4096;
/// Largest compiled program, in bytes as `regex-bites` counts them on the running target (wasm32
/// in production; about 1.5 times more on a 64-bit host). `(?:.?){0,2000}QQ` (219 KiB) and
/// `a{1000}{1000}` are refused here, at once.
pub(crate) const COMPILED_SIZE_LIMIT: usize = 32 * 1024;
/// Program bytes matched without charge: a literal of [`MAX_PATTERN_BYTES`] or a pattern such as
/// `(?i)error\[E\d+\]|FAILED` (644 bytes) costs about what reading the log does, whatever its
/// length.
pub(crate) const FREE_PROGRAM_BYTES: usize = 1024;
/// Work one call's grep may do: the sum over the lines matched of window bytes times program
/// bytes past [`FREE_PROGRAM_BYTES`]: about 140 ms of workerd CPU at worst
/// (docs/reliability.md, `bench/job-logs-grep.mjs`).
pub(crate) const WORK_BUDGET: u64 = 1 << 28;
/// `_meta.code` of a call whose grep pattern would cost more than [`WORK_BUDGET`].
pub(crate) const CODE_OVER_BUDGET: &str = "grep_over_budget";
/// Deepest nesting of groups and repetitions.
const NEST_LIMIT: u32 = 32;

/// A compiled `grep` pattern. Clones share one work budget: the jobs of one call draw on it.
#[derive(Clone, Debug)]
pub(crate) struct Grep {
    regex: Regex,
    program_bytes: usize,
    budget: Arc<Budget>,
}

/// The work budget of one call's grep.
#[derive(Debug)]
struct Budget {
    /// Work left.
    left: AtomicU64,
    /// Bytes matched so far, for the error's text.
    scanned: AtomicU64,
    /// Set once a line could not be paid for; nothing is matched after it.
    stopped: AtomicBool,
}

/// A pattern stopped for want of budget: what it cost, for the model to choose a cheaper one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OverBudget {
    /// The pattern as given.
    pub(crate) pattern: String,
    /// Its compiled size.
    pub(crate) program_bytes: usize,
    /// Bytes of log it was matched against before it stopped.
    pub(crate) scanned_bytes: u64,
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "grep {:?} costs too much to match against these logs: it compiles to {} bytes, \
             and each log byte costs in proportion to the bytes past {FREE_PROGRAM_BYTES}; its \
             budget ran out after {} bytes of log. Use a shorter, simpler pattern (fewer \
             counted or optional repetitions such as `(.?){{0,100}}`, fewer alternatives), e.g. \
             the literal text you look for.",
            self.pattern, self.program_bytes, self.scanned_bytes
        )
    }
}

/// Why a `grep` pattern does not compile; its `Display` says what is wrong, for the model to
/// correct.
#[derive(Debug)]
pub(crate) enum BadPattern {
    /// The pattern is empty.
    Empty,
    /// The pattern is longer than [`MAX_PATTERN_BYTES`]: its length.
    TooLong(usize),
    /// Not a regular expression, or one that compiles past [`COMPILED_SIZE_LIMIT`].
    Invalid(regex_bites::Error),
}

impl fmt::Display for BadPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadPattern::Empty => f.write_str("grep must not be empty"),
            BadPattern::TooLong(len) => {
                write!(
                    f,
                    "grep is {len} bytes long; the limit is {MAX_PATTERN_BYTES}"
                )
            }
            BadPattern::Invalid(e) => write!(
                f,
                "grep is not a valid regular expression (Rust regex syntax, e.g. \
                 `error|FAIL(ED)?`, `(?i)panicked at`), or compiles to more than \
                 {COMPILED_SIZE_LIMIT} bytes (use fewer or smaller repetitions): {e}"
            ),
        }
    }
}

impl std::error::Error for BadPattern {}

impl Grep {
    /// Compiles `pattern`; the error says what is wrong, for the model to correct.
    pub(crate) fn new(pattern: &str) -> Result<Grep, BadPattern> {
        if pattern.is_empty() {
            return Err(BadPattern::Empty);
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(BadPattern::TooLong(pattern.len()));
        }
        let build = |limit: usize| {
            RegexBuilder::new(pattern)
                .size_limit(limit)
                .nest_limit(NEST_LIMIT)
                .build()
        };
        let regex = build(COMPILED_SIZE_LIMIT).map_err(BadPattern::Invalid)?;
        // regex-bites tells a program's size only through its limit: the smallest limit it
        // compiles under, found in at most 15 compilations of a program already known to fit.
        let (mut low, mut high) = (0, COMPILED_SIZE_LIMIT);
        while low < high {
            let mid = (low + high) / 2;
            if build(mid).is_ok() {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        Ok(Grep {
            regex,
            program_bytes: low,
            budget: Arc::new(Budget {
                left: AtomicU64::new(WORK_BUDGET),
                scanned: AtomicU64::new(0),
                stopped: AtomicBool::new(false),
            }),
        })
    }

    /// The pattern as given.
    pub(crate) fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// The compiled program's size in bytes.
    #[cfg(test)]
    pub(crate) fn program_bytes(&self) -> usize {
        self.program_bytes
    }

    /// Whether the first [`MATCH_WINDOW_BYTES`] of `line` match; `None`, without matching, once
    /// the call's work budget cannot pay for the line (and for every line after it).
    pub(crate) fn is_match(&self, line: &str) -> Option<bool> {
        let mut end = line.len().min(MATCH_WINDOW_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        let budget = &self.budget;
        if budget.stopped.load(Ordering::Relaxed) {
            return None;
        }
        let charged = self.program_bytes.saturating_sub(FREE_PROGRAM_BYTES) as u64;
        // The line's end counts as a byte: an empty line is a step too.
        let cost = (end as u64 + 1) * charged;
        let paid = budget
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(cost)
            });
        if paid.is_err() {
            budget.stopped.store(true, Ordering::Relaxed);
            return None;
        }
        budget.scanned.fetch_add(end as u64, Ordering::Relaxed);
        Some(self.regex.is_match(&line[..end]))
    }

    /// What stopped the pattern, once its budget is spent.
    pub(crate) fn over_budget(&self) -> Option<OverBudget> {
        self.budget
            .stopped
            .load(Ordering::Relaxed)
            .then(|| OverBudget {
                pattern: self.as_str().to_owned(),
                program_bytes: self.program_bytes,
                scanned_bytes: self.budget.scanned.load(Ordering::Relaxed),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_and_refuses() {
        let g = Grep::new(r"(?i)error\[E\d+\]|FAILED").unwrap();
        assert_eq!(g.is_match("  ERROR[E0308]: mismatched types"), Some(true));
        assert_eq!(g.is_match("test result: FAILED. 1 passed"), Some(true));
        assert_eq!(g.is_match("all good"), Some(false));
        assert_eq!(g.as_str(), r"(?i)error\[E\d+\]|FAILED");
        for (bad, says) in [
            ("", "empty"),
            ("(unclosed", "not a valid regular expression"),
            (&"a".repeat(MAX_PATTERN_BYTES + 1), "the limit is 256"),
            ("a{1000}{1000}", "more than 32768 bytes"),
            ("(?:.?){0,2000}QQ", "use fewer or smaller repetitions"),
            (
                &format!("{}a{}", "(".repeat(40), ")".repeat(40)),
                "not a valid",
            ),
        ] {
            let err = Grep::new(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn the_program_size_is_the_smallest_limit_it_compiles_under() {
        for pattern in ["error", r"(?i)error\[E\d+\]|FAILED", "(?:.?){0,60}QQ"] {
            let g = Grep::new(pattern).unwrap();
            let size = g.program_bytes();
            let under = |limit| RegexBuilder::new(pattern).size_limit(limit).build().is_ok();
            assert!(under(size) && !under(size - 1), "{pattern}: {size}");
        }
    }

    #[test]
    fn matches_only_the_start_of_long_lines() {
        let g = Grep::new("needle").unwrap();
        let mut line = "é".repeat(MATCH_WINDOW_BYTES / 2 - 1);
        line.push_str("xneedle");
        // The window ends inside "needle", on a character boundary after the é's.
        assert_eq!(g.is_match(&line), Some(false));
        assert_eq!(g.is_match(&format!("needle{line}")), Some(true));
    }

    #[test]
    fn pathological_patterns_stay_linear() {
        // (a*)*b against a long run of a's backtracks exponentially in backtracking engines;
        // here the work is proportional to pattern size times window, so it simply says no.
        let g = Grep::new("(a*)*b").unwrap();
        assert_eq!(g.is_match(&"a".repeat(100_000)), Some(false));
        let g = Grep::new("(x+x+)+y").unwrap();
        assert_eq!(g.is_match(&"x".repeat(100_000)), Some(false));
    }

    #[test]
    fn small_programs_match_any_amount_of_text_for_free() {
        let g = Grep::new(r"(?i)error\[E\d+\]|FAILED").unwrap();
        assert!(
            g.program_bytes() <= FREE_PROGRAM_BYTES,
            "{}",
            g.program_bytes()
        );
        let line = "x".repeat(MATCH_WINDOW_BYTES);
        for _ in 0..1000 {
            assert_eq!(g.is_match(&line), Some(false));
        }
        assert_eq!(g.budget.left.load(Ordering::Relaxed), WORK_BUDGET);
        assert_eq!(g.over_budget(), None);
    }

    #[test]
    fn a_large_program_stops_when_its_budget_is_spent_and_its_clones_with_it() {
        let g = Grep::new("(?:.?){0,60}QQ").unwrap();
        let charged = (g.program_bytes() - FREE_PROGRAM_BYTES) as u64;
        let line = "y".repeat(999);
        let lines_paid = WORK_BUDGET / (1000 * charged);
        let job2 = g.clone();
        for i in 0..lines_paid {
            let grep = if i % 2 == 0 { &g } else { &job2 };
            assert_eq!(grep.is_match(&line), Some(false), "line {i}");
        }
        assert_eq!(g.over_budget(), None);
        // The next line is not matched, nor any after it, even a short one that would fit.
        assert_eq!(job2.is_match(&line), None);
        assert_eq!(g.is_match(""), None);
        let over = g.over_budget().unwrap();
        assert_eq!(
            over,
            OverBudget {
                pattern: "(?:.?){0,60}QQ".into(),
                program_bytes: g.program_bytes(),
                scanned_bytes: lines_paid * 999,
            }
        );
        let text = over.to_string();
        assert!(text.contains("Use a shorter, simpler pattern"), "{text}");
        // A fresh compilation has a fresh budget.
        assert_eq!(
            Grep::new("(?:.?){0,60}QQ").unwrap().is_match(&line),
            Some(false)
        );
    }
}
