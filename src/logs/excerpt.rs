//! The excerpt of one job log, built as the bytes arrive: lines numbered from 1, each assigned to
//! a step, the tail of the chosen steps kept in ring buffers, the `##[error]` lines, and the grep
//! matches with their context. Everything kept is bounded by the options, never by the log.
//!
//! A tail's runs of lines that differ only in numbers, durations and ids (or that only report
//! progress and passed tests) are collapsed when the excerpt is finished ([`collapse`]).
//!
//! Steps: CircleCI serves each step's output separately, so the caller says where a step starts
//! ([`Excerpter::start_step`]). GitHub serves one log; its lines carry timestamps, and a line
//! belongs to the last step that started before the line's second, or in the same second when
//! the line opens a step: a top-level `##[group]` (the header GitHub writes when a step starts)
//! or one of the lines the runner opens its own steps with ([`RUNNER_STEP_OPENINGS`]).

mod collapse;

use super::line::{self, Kind};
use super::pattern::{Grep, OverBudget};
use crate::value::{Map, Number, Value};
use std::collections::VecDeque;

/// Largest `tailLines`.
pub(crate) const MAX_TAIL_LINES: usize = 500;
/// Largest `context`.
pub(crate) const MAX_CONTEXT: usize = 20;
/// Most grep matches shown (the count goes on).
pub(crate) const MAX_MATCHES: usize = 50;
/// Most `##[error]` lines shown (the count goes on).
pub(crate) const MAX_ERRORS: usize = 20;
/// Longest raw line kept for cleaning; the rest of a longer line is dropped (the excerpt shows
/// [`line::MAX_TEXT_CHARS`] characters of it anyway).
pub(crate) const MAX_RAW_LINE_BYTES: usize = 16 * 1024;
/// Most steps tracked; later ones are counted in the last.
pub(crate) const MAX_STEPS: usize = 1000;

/// The first lines of the steps the runner adds itself (post-action steps, `Complete job`),
/// which have no `##[group]` header.
pub(crate) const RUNNER_STEP_OPENINGS: &[&str] =
    &["Post job cleanup.", "Cleaning up orphan processes"];

/// One step of a job, as the vendor's API lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// The step's number (GitHub) or position (CircleCI), from 1.
    pub(crate) number: u64,
    /// Its name.
    pub name: String,
    /// Its outcome as the vendor words it (`failure`, `success`, `skipped`...), if finished.
    pub(crate) conclusion: Option<String>,
    /// When it started, Unix seconds (GitHub), if it did.
    pub(crate) started_at: Option<u64>,
}

impl Step {
    /// Whether the step ended badly: failed, timed out or was cancelled (a runner that ran out
    /// of memory or time cancels the step it was running). The conclusion's first word decides,
    /// so `failed (exit code 2)` counts.
    pub(crate) fn failed(&self) -> bool {
        let word = self
            .conclusion
            .as_deref()
            .and_then(|c| c.split([' ', ':']).next());
        matches!(
            word,
            Some("failure" | "failed" | "timed_out" | "timedout" | "cancelled" | "canceled")
        )
    }
}

/// What to keep.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Lines kept from the end of each chosen step.
    pub(crate) tail_lines: usize,
    /// Every step (`steps: all`) rather than the failed ones.
    pub(crate) all_steps: bool,
    /// The grep pattern, if any.
    pub(crate) grep: Option<Grep>,
    /// Lines shown before and after each match.
    pub(crate) context: usize,
}

/// A numbered line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its number in the log, from 1.
    pub(crate) line: u64,
    /// Its cleaned, shortened text.
    pub text: String,
}

/// Keeps the last `capacity` entries.
#[derive(Clone, Debug)]
struct Ring {
    capacity: usize,
    entries: VecDeque<Entry>,
}

impl Ring {
    fn new(capacity: usize) -> Ring {
        Ring {
            capacity,
            entries: VecDeque::new(),
        }
    }

    fn push(&mut self, entry: Entry) {
        if self.capacity == 0 {
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }
}

#[derive(Debug)]
struct StepState {
    step: Step,
    first_line: Option<u64>,
    last_line: u64,
    tail: Option<Ring>,
}

#[derive(Debug)]
struct GrepState {
    grep: Grep,
    before: Ring,
    after_left: usize,
    lines: Vec<(Entry, bool)>,
    shown: usize,
    matches: u64,
}

/// Builds an [`Excerpt`] from log bytes pushed in any chunking.
#[derive(Debug)]
pub(crate) struct Excerpter {
    options: Options,
    steps: Vec<StepState>,
    current: usize,
    by_time: bool,
    any_failed: bool,
    partial: Vec<u8>,
    line_no: u64,
    bytes: u64,
    depth: u32,
    errors: Vec<Entry>,
    error_count: u64,
    grep: Option<GrepState>,
    text: String,
}

impl Excerpter {
    /// An excerpter for a job with `steps` (in order). `by_time`: assign lines to steps by
    /// their timestamps (GitHub); otherwise the caller calls [`Excerpter::start_step`]. Without
    /// steps, the whole log is one section named `log`.
    pub(crate) fn new(options: Options, steps: Vec<Step>, by_time: bool) -> Excerpter {
        let mut steps: Vec<Step> = steps.into_iter().take(MAX_STEPS).collect();
        if steps.is_empty() {
            steps.push(Step {
                number: 1,
                name: "log".into(),
                conclusion: None,
                started_at: None,
            });
        }
        let any_failed = steps.iter().any(Step::failed);
        let tail_lines = options.tail_lines.min(MAX_TAIL_LINES);
        let steps = steps
            .into_iter()
            .map(|step| {
                let keep = options.all_steps || step.failed();
                StepState {
                    tail: keep.then(|| Ring::new(tail_lines)),
                    step,
                    first_line: None,
                    last_line: 0,
                }
            })
            .collect();
        let grep = options.grep.clone().map(|grep| GrepState {
            grep,
            before: Ring::new(options.context.min(MAX_CONTEXT)),
            after_left: 0,
            lines: Vec::new(),
            shown: 0,
            matches: 0,
        });
        Excerpter {
            options: Options {
                tail_lines,
                context: options.context.min(MAX_CONTEXT),
                ..options
            },
            steps,
            current: 0,
            by_time,
            any_failed,
            partial: Vec::new(),
            line_no: 0,
            bytes: 0,
            depth: 0,
            errors: Vec::new(),
            error_count: 0,
            grep,
            text: String::new(),
        }
    }

    /// Lines pushed from now on belong to step `index` (0-based, in the order given to
    /// [`Excerpter::new`]); a line left unfinished by the previous step ends here.
    pub(crate) fn start_step(&mut self, index: usize) {
        self.flush_partial();
        self.current = index.min(self.steps.len() - 1);
        self.depth = 0;
    }

    /// Feeds the next bytes of the log.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            if self.partial.is_empty() {
                self.line(&bytes[..end]);
            } else {
                self.extend_partial(&bytes[..end]);
                let partial = std::mem::take(&mut self.partial);
                self.line(&partial);
                self.partial = partial;
                self.partial.clear();
            }
            bytes = &bytes[end + 1..];
        }
        self.extend_partial(bytes);
    }

    fn extend_partial(&mut self, bytes: &[u8]) {
        let room = MAX_RAW_LINE_BYTES.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn flush_partial(&mut self) {
        if !self.partial.is_empty() {
            let partial = std::mem::take(&mut self.partial);
            self.line(&partial);
        }
    }

    fn line(&mut self, raw: &[u8]) {
        let raw = &raw[..raw.len().min(MAX_RAW_LINE_BYTES)];
        self.line_no += 1;
        let mut text = std::mem::take(&mut self.text);
        let cleaned = line::clean(raw, &mut text);
        let header = self.depth == 0
            && (cleaned.kind == Kind::GroupStart || RUNNER_STEP_OPENINGS.contains(&text.as_str()));
        match cleaned.kind {
            Kind::GroupStart => self.depth += 1,
            Kind::GroupEnd => self.depth = self.depth.saturating_sub(1),
            Kind::Plain | Kind::Error => {}
        }
        if self.by_time {
            self.follow_clock(cleaned.seconds, header);
        }
        let line_no = self.line_no;
        let shown = || Entry {
            line: line_no,
            text: line::shorten(&text),
        };
        let current = self.current;
        if !self.any_failed && !self.options.all_steps && self.steps[current].tail.is_none() {
            // No step failed: keep the tail of the step running last, the one a crash or a
            // killed runner cut short.
            for step in &mut self.steps {
                step.tail = None;
            }
            self.steps[current].tail = Some(Ring::new(self.options.tail_lines));
        }
        let step = &mut self.steps[current];
        step.first_line.get_or_insert(line_no);
        step.last_line = line_no;
        if let Some(tail) = &mut step.tail {
            tail.push(shown());
        }
        if cleaned.kind == Kind::Error {
            self.error_count += 1;
            if self.errors.len() < MAX_ERRORS {
                self.errors.push(shown());
            }
        }
        if let Some(g) = &mut self.grep {
            match g.grep.is_match(&text) {
                // Out of budget: the call fails (see `finish`), so nothing more is kept.
                None => {}
                Some(true) => {
                    g.matches += 1;
                    if g.shown < MAX_MATCHES {
                        g.shown += 1;
                        g.lines
                            .extend(g.before.entries.drain(..).map(|e| (e, false)));
                        g.lines.push((shown(), true));
                        g.after_left = self.options.context;
                    } else {
                        g.after_left = 0;
                    }
                }
                Some(false) if g.after_left > 0 => {
                    g.after_left -= 1;
                    g.lines.push((shown(), false));
                }
                Some(false) if g.shown < MAX_MATCHES => g.before.push(shown()),
                Some(false) => {}
            }
        }
        self.text = text;
    }

    /// Moves to the step a line stamped `seconds` belongs to.
    fn follow_clock(&mut self, seconds: Option<u64>, header: bool) {
        let Some(seconds) = seconds else { return };
        let mut header = header;
        while let Some(next) = (self.current + 1..self.steps.len())
            .find(|&i| self.steps[i].step.started_at.is_some() && !skipped(&self.steps[i].step))
        {
            let started = self.steps[next].step.started_at.unwrap_or(u64::MAX);
            let advance = started < seconds || (started == seconds && header);
            if !advance {
                break;
            }
            if started == seconds {
                // One header starts one step.
                header = false;
            }
            self.current = next;
        }
    }

    /// Why the grep pattern stopped matching, once its work budget is spent: reading more of
    /// the log is wasted.
    pub(crate) fn over_budget(&self) -> Option<OverBudget> {
        self.grep.as_ref().and_then(|g| g.grep.over_budget())
    }

    /// The excerpt of everything pushed; an error when the grep pattern ran out of budget.
    pub(crate) fn finish(mut self) -> Result<Excerpt, OverBudget> {
        self.flush_partial();
        if let Some(over) = self.over_budget() {
            return Err(over);
        }
        let last_with_lines = self.steps.iter().rposition(|s| s.first_line.is_some());
        let steps = self
            .steps
            .into_iter()
            .enumerate()
            .filter(|(i, s)| {
                if self.options.all_steps {
                    s.first_line.is_some() || s.step.failed()
                } else if self.any_failed {
                    s.step.failed()
                } else {
                    Some(*i) == last_with_lines
                }
            })
            .map(|(_, s)| StepExcerpt {
                tail: s
                    .tail
                    .map(|t| collapse::collapse(t.entries.into()))
                    .unwrap_or_default(),
                first_line: s.first_line,
                last_line: s.first_line.map(|_| s.last_line),
                step: s.step,
            })
            .collect();
        Ok(Excerpt {
            lines: self.line_no,
            bytes: self.bytes,
            steps,
            errors: self.errors,
            error_count: self.error_count,
            grep: self.grep.map(|g| GrepExcerpt {
                pattern: g.grep.as_str().to_owned(),
                matches: g.matches,
                lines: g.lines,
            }),
        })
    }
}

fn skipped(step: &Step) -> bool {
    step.conclusion.as_deref() == Some("skipped")
}

/// One chosen step in an excerpt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StepExcerpt {
    /// The step.
    pub(crate) step: Step,
    /// Its first line in the log, if it wrote any.
    pub(crate) first_line: Option<u64>,
    /// Its last line.
    pub(crate) last_line: Option<u64>,
    /// Its last lines, each run of alike lines among them collapsed into one entry
    /// ([`collapse::collapse`]).
    pub(crate) tail: Vec<Entry>,
}

/// The grep part of an excerpt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GrepExcerpt {
    /// The pattern.
    pub(crate) pattern: String,
    /// How many lines matched (all of them, shown or not).
    pub(crate) matches: u64,
    /// The lines shown, each with whether it matched (the others are context).
    pub(crate) lines: Vec<(Entry, bool)>,
}

/// What a log comes down to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Excerpt {
    /// Lines in the log.
    pub(crate) lines: u64,
    /// Bytes in the log.
    pub bytes: u64,
    /// The chosen steps: the failed ones (or, when none failed, the last that wrote), or all.
    pub(crate) steps: Vec<StepExcerpt>,
    /// The first `##[error]` lines.
    pub(crate) errors: Vec<Entry>,
    /// How many `##[error]` lines there are.
    pub(crate) error_count: u64,
    /// Grep matches, when a pattern was given.
    pub(crate) grep: Option<GrepExcerpt>,
}

fn int(n: u64) -> Value {
    Value::Number(Number::from_i64(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn entries(entries: &[Entry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("line".into(), int(e.line));
                m.insert("text".into(), Value::String(e.text.clone()));
                Value::Object(m)
            })
            .collect(),
    )
}

impl Excerpt {
    /// `{lines, bytes, errorCount, errors, steps: [{number, name, conclusion, firstLine,
    /// lastLine, tail}], grep?: {pattern, matches, lines: [{line, match, text}]}}`.
    pub(crate) fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("lines".into(), int(self.lines));
        m.insert("bytes".into(), int(self.bytes));
        m.insert("errorCount".into(), int(self.error_count));
        m.insert("errors".into(), entries(&self.errors));
        let steps = self
            .steps
            .iter()
            .map(|s| {
                let mut step = Map::new();
                step.insert("number".into(), int(s.step.number));
                step.insert("name".into(), Value::String(s.step.name.clone()));
                step.insert(
                    "conclusion".into(),
                    s.step.conclusion.clone().map_or(Value::Null, Value::String),
                );
                step.insert("firstLine".into(), s.first_line.map_or(Value::Null, int));
                step.insert("lastLine".into(), s.last_line.map_or(Value::Null, int));
                step.insert("tail".into(), entries(&s.tail));
                Value::Object(step)
            })
            .collect();
        m.insert("steps".into(), Value::Array(steps));
        if let Some(g) = &self.grep {
            let mut grep = Map::new();
            grep.insert("pattern".into(), Value::String(g.pattern.clone()));
            grep.insert("matches".into(), int(g.matches));
            let lines = g
                .lines
                .iter()
                .map(|(e, matched)| {
                    let mut l = Map::new();
                    l.insert("line".into(), int(e.line));
                    l.insert("match".into(), Value::Bool(*matched));
                    l.insert("text".into(), Value::String(e.text.clone()));
                    Value::Object(l)
                })
                .collect();
            grep.insert("lines".into(), Value::Array(lines));
            m.insert("grep".into(), Value::Object(grep));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_767_225_600;

    fn stamp(second: u64) -> String {
        crate::time::iso8601_utc_ms(second * 1000).replace(".000Z", ".1234567Z")
    }

    fn step(number: u64, name: &str, conclusion: &str, started: Option<u64>) -> Step {
        Step {
            number,
            name: name.into(),
            conclusion: Some(conclusion.into()),
            started_at: started,
        }
    }

    fn steps() -> Vec<Step> {
        vec![
            step(1, "Set up job", "success", Some(T0)),
            step(2, "Run actions/checkout@v4", "success", Some(T0 + 1)),
            step(3, "Build", "failure", Some(T0 + 1)),
            step(4, "Upload", "skipped", Some(T0 + 9)),
            step(5, "Complete job", "success", Some(T0 + 9)),
        ]
    }

    /// A GitHub job log: CRLF line ends, ANSI colours, non-ASCII, groups; step 3 (named
    /// `Build`, so its header says `Run cargo build`) starts in the same second as step 2 ends.
    fn log() -> String {
        let lines = [
            (0, "Current runner version: '2.321.0'"),
            (0, "##[group]Operating System"),
            (0, "Ubuntu 24.04"),
            (0, "##[endgroup]"),
            (1, "##[group]Run actions/checkout@v4"),
            (1, "with:"),
            (1, "##[endgroup]"),
            (1, "Syncing repository: octo-org/hello-world"),
            (1, "##[group]Run cargo build"),
            (1, "cargo build"),
            (1, "##[endgroup]"),
            (2, "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m hello v0.1.0 (/home/runner/work/Grüße)"),
            (5, "\u{1b}[0m\u{1b}[1m\u{1b}[38;5;9merror[E0308]\u{1b}[0m\u{1b}[0m\u{1b}[1m: mismatched types\u{1b}[0m"),
            (5, " --> src/main.rs:2:18"),
            (6, "error: could not compile `hello` (bin \"hello\") due to 1 previous error"),
            (6, "##[error]Process completed with exit code 101."),
            (9, "Post job cleanup."),
            (9, "Cleaning up orphan processes"),
        ];
        lines
            .iter()
            .map(|(s, text)| format!("{} {text}\r\n", stamp(T0 + s)))
            .collect()
    }

    fn options(tail: usize) -> Options {
        Options {
            tail_lines: tail,
            all_steps: false,
            grep: None,
            context: 0,
        }
    }

    fn run(options: Options, steps: Vec<Step>, chunks: &[&[u8]]) -> Excerpt {
        let mut e = Excerpter::new(options, steps, true);
        for chunk in chunks {
            e.push(chunk);
        }
        e.finish().unwrap()
    }

    fn texts(entries: &[Entry]) -> Vec<(u64, &str)> {
        entries.iter().map(|e| (e.line, e.text.as_str())).collect()
    }

    #[test]
    fn failed_step_tail_and_errors() {
        let log = log();
        let x = run(options(4), steps(), &[log.as_bytes()]);
        assert_eq!((x.lines, x.bytes), (18, log.len() as u64));
        assert_eq!(x.steps.len(), 1);
        let build = &x.steps[0];
        assert_eq!(build.step.name, "Build");
        assert_eq!((build.first_line, build.last_line), (Some(9), Some(16)));
        assert_eq!(
            texts(&build.tail),
            [
                (13, "error[E0308]: mismatched types"),
                (14, " --> src/main.rs:2:18"),
                (
                    15,
                    "error: could not compile `hello` (bin \"hello\") due to 1 previous error"
                ),
                (16, "##[error]Process completed with exit code 101."),
            ]
        );
        assert_eq!(x.error_count, 1);
        assert_eq!(
            texts(&x.errors),
            [(16, "##[error]Process completed with exit code 101.")]
        );
        assert!(x.grep.is_none());
    }

    #[test]
    fn any_chunking_gives_the_same_excerpt() {
        let log = log();
        let whole = run(options(3), steps(), &[log.as_bytes()]);
        let bytes: Vec<&[u8]> = log.as_bytes().chunks(1).collect();
        assert_eq!(run(options(3), steps(), &bytes), whole);
        let sevens: Vec<&[u8]> = log.as_bytes().chunks(7).collect();
        assert_eq!(run(options(3), steps(), &sevens), whole);
    }

    #[test]
    fn all_steps_and_the_last_step_when_none_failed() {
        let log = log();
        let all = run(
            Options {
                all_steps: true,
                ..options(1)
            },
            steps(),
            &[log.as_bytes()],
        );
        type Seen<'a> = (u64, Option<u64>, Option<u64>, Vec<(u64, &'a str)>);
        let seen: Vec<Seen> = all
            .steps
            .iter()
            .map(|s| (s.step.number, s.first_line, s.last_line, texts(&s.tail)))
            .collect();
        assert_eq!(
            seen,
            [
                (1, Some(1), Some(4), vec![(4, "##[endgroup]")]),
                (
                    2,
                    Some(5),
                    Some(8),
                    vec![(8, "Syncing repository: octo-org/hello-world")]
                ),
                (
                    3,
                    Some(9),
                    Some(16),
                    vec![(16, "##[error]Process completed with exit code 101.")]
                ),
                (
                    5,
                    Some(17),
                    Some(18),
                    vec![(18, "Cleaning up orphan processes")]
                ),
            ]
        );
        let mut fine = steps();
        fine[2].conclusion = Some("success".into());
        let last = run(options(2), fine, &[log.as_bytes()]);
        assert_eq!(last.steps.len(), 1);
        assert_eq!(last.steps[0].step.number, 5);
        assert_eq!(
            texts(&last.steps[0].tail),
            [
                (17, "Post job cleanup."),
                (18, "Cleaning up orphan processes")
            ]
        );
    }

    #[test]
    fn grep_with_context_merges_and_caps() {
        let log = log();
        let grep = Grep::new(r"error|Syncing").unwrap();
        let x = run(
            Options {
                grep: Some(grep),
                context: 1,
                ..options(0)
            },
            steps(),
            &[log.as_bytes()],
        );
        let g = x.grep.unwrap();
        assert_eq!(g.matches, 4);
        let lines: Vec<(u64, bool)> = g.lines.iter().map(|(e, m)| (e.line, *m)).collect();
        assert_eq!(
            lines,
            [
                (7, false),
                (8, true),
                (9, false),
                (12, false),
                (13, true),
                (14, false),
                (15, true),
                (16, true),
                (17, false),
            ]
        );
        assert!(x.steps[0].tail.is_empty());
        // Past the cap matches are counted, not shown.
        let many: String = (0..MAX_MATCHES + 30)
            .map(|i| format!("error {i}\nok\n"))
            .collect();
        let x = run(
            Options {
                grep: Some(Grep::new("error").unwrap()),
                context: 1,
                ..options(5)
            },
            Vec::new(),
            &[many.as_bytes()],
        );
        let g = x.grep.unwrap();
        assert_eq!(g.matches, (MAX_MATCHES + 30) as u64);
        assert_eq!(g.lines.iter().filter(|(_, m)| *m).count(), MAX_MATCHES);
        assert_eq!(g.lines.len(), 2 * MAX_MATCHES);
    }

    #[test]
    fn explicit_steps_and_a_log_without_steps() {
        let mut e = Excerpter::new(
            options(2),
            vec![
                step(1, "Spin up environment", "success", None),
                step(2, "Run tests", "failed", None),
            ],
            false,
        );
        e.push(b"Starting container\nunfinished");
        e.start_step(1);
        e.push(b"FAIL test_a\n\nexit status 1");
        let x = e.finish().unwrap();
        assert_eq!(x.lines, 5);
        assert_eq!(x.steps.len(), 1);
        assert_eq!(
            (x.steps[0].first_line, x.steps[0].last_line),
            (Some(3), Some(5))
        );
        assert_eq!(texts(&x.steps[0].tail), [(4, ""), (5, "exit status 1")]);
        let x = run(options(1), Vec::new(), &[b"one\ntwo"]);
        assert_eq!(x.steps[0].step.name, "log");
        assert_eq!(texts(&x.steps[0].tail), [(2, "two")]);
    }

    #[test]
    fn memory_stays_bounded_whatever_the_log() {
        let mut e = Excerpter::new(
            Options {
                grep: Some(Grep::new("7$").unwrap()),
                context: 3,
                ..options(10)
            },
            steps(),
            true,
        );
        let line = format!("{} ##[error]x 7\n", stamp(T0 + 5));
        for _ in 0..100_000 {
            e.push(line.as_bytes());
        }
        // One endless line: only its start is kept.
        for _ in 0..1000 {
            e.push(&[b'y'; 1024]);
        }
        assert!(e.partial.len() <= MAX_RAW_LINE_BYTES);
        let x = e.finish().unwrap();
        assert_eq!(x.lines, 100_001);
        assert_eq!(x.error_count, 100_000);
        assert_eq!(x.errors.len(), MAX_ERRORS);
        assert_eq!(x.steps[0].tail.len(), 10);
        assert!(x.steps[0].tail[9].text.ends_with(&format!(
            "[+{} chars]",
            MAX_RAW_LINE_BYTES - line::MAX_TEXT_CHARS
        )));
        let g = x.grep.unwrap();
        assert_eq!(g.matches, 100_000);
        assert_eq!(g.lines.len(), MAX_MATCHES);
    }

    #[test]
    fn renders_as_a_value() {
        let log = log();
        let x = run(
            Options {
                grep: Some(Grep::new("E0308").unwrap()),
                ..options(1)
            },
            steps(),
            &[log.as_bytes()],
        );
        assert_eq!(
            x.to_value().to_compact_json(),
            r###"{"lines":18,"bytes":1087,"errorCount":1,"errors":[{"line":16,"text":"##[error]Process completed with exit code 101."}],"steps":[{"number":3,"name":"Build","conclusion":"failure","firstLine":9,"lastLine":16,"tail":[{"line":16,"text":"##[error]Process completed with exit code 101."}]}],"grep":{"pattern":"E0308","matches":1,"lines":[{"line":13,"match":true,"text":"error[E0308]: mismatched types"}]}}"###
        );
    }
}
