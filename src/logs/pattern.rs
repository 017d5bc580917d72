//! The `grep` argument: a user-supplied regular expression, matched in linear time (no
//! backtracking blow-ups) with bounded pattern length, compiled size and nesting, and a clear
//! error for a bad pattern.

use regex_bites::{Regex, RegexBuilder};

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 256;
/// Most bytes of one line the pattern is matched against (its start): the match time is
/// proportional to pattern size times line length, so both are bounded.
pub const MATCH_WINDOW_BYTES: usize = 4096;
/// Largest compiled program, in bytes (`a{1000}{1000}` is short but would compile to millions
/// of states).
const COMPILED_SIZE_LIMIT: usize = 256 * 1024;
/// Deepest nesting of groups and repetitions.
const NEST_LIMIT: u32 = 32;

/// A compiled `grep` pattern.
#[derive(Clone, Debug)]
pub struct Grep {
    regex: Regex,
}

impl Grep {
    /// Compiles `pattern`; the error says what is wrong, for the model to correct.
    pub fn new(pattern: &str) -> Result<Grep, String> {
        if pattern.is_empty() {
            return Err("grep must not be empty".into());
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(format!(
                "grep is {} bytes long; the limit is {MAX_PATTERN_BYTES}",
                pattern.len()
            ));
        }
        RegexBuilder::new(pattern)
            .size_limit(COMPILED_SIZE_LIMIT)
            .nest_limit(NEST_LIMIT)
            .build()
            .map(|regex| Grep { regex })
            .map_err(|e| {
                format!(
                    "grep is not a valid regular expression (Rust regex syntax, e.g. \
                     `error|FAIL(ED)?`, `(?i)panicked at`): {e}"
                )
            })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// Whether the first [`MATCH_WINDOW_BYTES`] of `line` match.
    pub fn is_match(&self, line: &str) -> bool {
        let mut end = line.len().min(MATCH_WINDOW_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        self.regex.is_match(&line[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_and_refuses() {
        let g = Grep::new(r"(?i)error\[E\d+\]|FAILED").unwrap();
        assert!(g.is_match("  ERROR[E0308]: mismatched types"));
        assert!(g.is_match("test result: FAILED. 1 passed"));
        assert!(!g.is_match("all good"));
        assert_eq!(g.as_str(), r"(?i)error\[E\d+\]|FAILED");
        for (bad, says) in [
            ("", "empty"),
            ("(unclosed", "not a valid regular expression"),
            (&"a".repeat(MAX_PATTERN_BYTES + 1), "the limit is 256"),
            ("a{1000}{1000}", "not a valid regular expression"),
            (
                &format!("{}a{}", "(".repeat(40), ")".repeat(40)),
                "not a valid",
            ),
        ] {
            let err = Grep::new(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn matches_only_the_start_of_long_lines() {
        let g = Grep::new("needle").unwrap();
        let mut line = "é".repeat(MATCH_WINDOW_BYTES / 2 - 1);
        line.push_str("xneedle");
        // The window ends inside "needle", on a character boundary after the é's.
        assert!(!g.is_match(&line));
        assert!(g.is_match(&format!("needle{line}")));
    }

    #[test]
    fn pathological_patterns_stay_linear() {
        // (a*)*b against a long run of a's backtracks exponentially in backtracking engines;
        // here the work is proportional to pattern size times window, so it simply says no.
        let g = Grep::new("(a*)*b").unwrap();
        assert!(!g.is_match(&"a".repeat(100_000)));
        let g = Grep::new("(x+x+)+y").unwrap();
        assert!(!g.is_match(&"x".repeat(100_000)));
    }
}
