//! jq programs through jaq (jaq-core, jaq-std, jaq-json), inside a work budget.
//!
//! jaq has no fuel hook of its own, so the budget (`projection::meter`) is built from these parts
//! (docs/projection.md):
//! - every term evaluation passes through [`HasLut::lut`], which charges one unit of fuel;
//! - every unbounded generator (`range/3`, `repeat`, `recurse`, `while`, `until`) is a native
//!   here that charges per step and stops with an error once the fuel is gone, and programs
//!   that define recursive functions are rejected, so no loop runs outside those natives;
//! - values are a metered type: iteration, indexing, arithmetic and construction fail once the
//!   fuel is gone, and refuse oversized or too deeply nested results before building them, the
//!   size counting shared parts once per occurrence;
//! - every builtin pays for the work it does inside its call (string builtins through the value
//!   type, the others replaced here: `budget`, `json_funs`, `regex`, `sort`) or is not offered;
//! - the heap the run holds beyond its converted input is counted by the allocator and bounded
//!   by [`Limits::max_memory_bytes`] (decision 0094);
//! - the caller pulls at most [`Limits::max_outputs`] results totalling at most
//!   [`Limits::max_output_bytes`] of JSON.

mod budget;
mod convert;
mod json_funs;
mod metered;
mod regex;
mod size;
mod sort;

use std::fmt;

use jaq_core::data::HasLut;
use jaq_core::load::{parse::Def, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, DataT, Lut, Vars};

use crate::value::Value;

use super::meter::{self, Limits};
use budget::{recursive_defs, unfolds_too_far, MAX_UNFOLDED_TERMS};
use metered::M;

/// Programs longer than this are refused before parsing.
pub(crate) const MAX_PROGRAM_BYTES: usize = 4096;
/// Bracket nesting deeper than this is refused before parsing (it bounds the parser's stack).
pub(crate) const MAX_PROGRAM_NESTING: usize = 64;
/// Inputs nested deeper than this are refused: jaq's serializer and path walkers recurse once
/// per level (src/projection/tests_stack.rs checks this depth on a wasm-sized stack).
pub(crate) const MAX_INPUT_DEPTH: usize = 256;

/// A compiled jq program.
pub struct JqProgram {
    filter: jaq_core::Filter<Budgeted>,
}

impl fmt::Debug for JqProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JqProgram")
    }
}

/// Why a jq program failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JqError {
    /// The program does not parse or compile.
    Syntax(String),
    /// The program is too long or nested too deeply.
    TooLarge,
    /// The program defines a function that calls itself, which the budget cannot bound.
    Recursive(String),
    /// The program uses a builtin that is not offered: the text names it and says why.
    Refused(String),
    /// The program raised an error while running.
    Runtime(String),
    /// The program used up its budget: the text says which limit.
    Budget(String),
}

impl fmt::Display for JqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JqError::Syntax(m) => write!(f, "jq syntax error: {m}"),
            JqError::TooLarge => write!(
                f,
                "expression too large (at most {MAX_PROGRAM_BYTES} bytes, and for jq {MAX_PROGRAM_NESTING} levels of nesting)"
            ),
            JqError::Recursive(name) => write!(
                f,
                "jq program defines the recursive function `{name}`, which is not allowed; use repeat, recurse, while, until or range"
            ),
            JqError::Refused(m) => f.write_str(m),
            JqError::Runtime(m) => write!(f, "jq error: {m}"),
            JqError::Budget(m) => write!(f, "jq program stopped: {m}"),
        }
    }
}

/// jaq's data kind for this module: metered jaq-json values, and a context that meters
/// evaluation.
pub(crate) struct Budgeted;

impl DataT for Budgeted {
    type V<'a> = M;
    type Data<'a> = Env<'a>;
}

/// Per-run context handed to every term evaluation and native.
#[derive(Clone)]
pub(crate) struct Env<'a> {
    lut: &'a Lut<Budgeted>,
}

impl<'a> HasLut<'a, Budgeted> for Env<'a> {
    fn lut(&self) -> &'a Lut<Budgeted> {
        // Called once per term evaluation: the meter for work done outside natives.
        meter::charge(1);
        self.lut
    }
}

/// Natives that are not offered: those that touch the host (clock, environment, local time
/// zone), and `halt` with the definitions that call it, which would end the server's run rather
/// than the program's.
const REFUSED_NATIVES: [(&str, &str); 6] = [
    ("env", "it reads the host's environment"),
    ("now", "it reads the host's clock"),
    ("localtime", "it reads the host's time zone"),
    ("strflocaltime", "it reads the host's time zone"),
    ("halt", "it would stop the server rather than the program"),
    (
        "halt_error",
        "it would stop the server rather than the program",
    ),
];

fn is_refused(name: &str) -> bool {
    REFUSED_NATIVES.iter().any(|(n, _)| *n == name)
}

fn definitions() -> impl Iterator<Item = Def<&'static str>> {
    jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .filter(|d| !budget::is_replaced(d.name, d.args.len()) && !is_refused(d.name))
}

/// The natives a program may call: jaq's, less those refused or replaced, and the budgeted
/// ones of this module.
fn natives() -> impl Iterator<Item = jaq_core::native::Fun<Budgeted>> {
    jaq_core::funs::<Budgeted>()
        .chain(jaq_std::funs())
        .filter(|(name, args, _)| !is_refused(name) && !budget::is_replaced(name, args.len()))
        .chain(json_funs::natives())
        .chain(budget::natives())
        .chain(regex::natives())
        .chain(sort::natives())
}

/// Every builtin a program may call, by name and arity, sorted: the standard definitions and
/// the natives (those the definitions are built on included, as programs may call them too).
/// Decision 0094 says how each is bounded.
pub fn builtins() -> Vec<(&'static str, usize)> {
    let mut all: Vec<(&'static str, usize)> = definitions()
        .map(|d| (d.name, d.args.len()))
        .chain(natives().map(|(name, args, _)| (name, args.len())))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

impl JqProgram {
    /// Parses and compiles `src`, refusing programs the budget could not bound.
    pub fn compile(src: &str) -> Result<JqProgram, JqError> {
        if src.len() > MAX_PROGRAM_BYTES || nesting(src) > MAX_PROGRAM_NESTING {
            return Err(JqError::TooLarge);
        }
        let user_defs = user_definitions(src).ok_or_else(|| JqError::Syntax(src.to_owned()))?;
        if let Some(name) = recursive_defs(&user_defs).into_iter().next() {
            return Err(JqError::Recursive(name.to_owned()));
        }
        if unfolds_too_far(&user_defs) {
            return Err(JqError::Refused(format!(
                "jq program unfolds to more than {MAX_UNFOLDED_TERMS} steps for each input: its \
                 definitions call one another too many times over; write them out or use \
                 map, reduce or range"
            )));
        }
        let arena = Arena::default();
        let loader = Loader::new(definitions());
        let modules = loader
            .load(
                &arena,
                File {
                    code: src,
                    path: (),
                },
            )
            .map_err(|errs| JqError::Syntax(format!("{} error(s) in program", errs.len())))?;
        let filter = Compiler::default()
            .with_funs(natives())
            .compile(modules)
            .map_err(|errs| undefined(errs.into_iter().flat_map(|(_, e)| e)))?;
        Ok(JqProgram { filter })
    }

    /// Runs the program on `input`: one output is returned as is, several as an array, none as
    /// `null`.
    pub fn run(&self, input: &Value, limits: &Limits) -> Result<Value, JqError> {
        let _run = meter::start(limits);
        let _memo = size::Scope::new();
        let input = meter::input(|| convert::to_metered(input, MAX_INPUT_DEPTH + 1));
        let input = input.ok_or_else(|| {
            JqError::Budget(if meter::exhausted() {
                format!("input: {}", meter::reason())
            } else {
                format!("input nested deeper than {MAX_INPUT_DEPTH} levels")
            })
        })?;
        let env = Env {
            lut: &self.filter.lut,
        };
        let ctx = Ctx::<Budgeted>::new(env, Vars::new([]));
        let mut outputs = Vec::new();
        let mut bytes = 0u64;
        for item in self.filter.id.run((ctx, input)) {
            if meter::exhausted() {
                break;
            }
            let val = match item {
                Ok(v) => v,
                Err(exn) => {
                    return Err(match exn.get_err() {
                        Ok(_) if meter::exhausted() => JqError::Budget(meter::reason()),
                        Ok(e) => JqError::Runtime(error_text(e)),
                        Err(_) => JqError::Runtime("halt is not supported".into()),
                    })
                }
            };
            if outputs.len() == limits.max_outputs {
                return Err(JqError::Budget(format!(
                    "more than {} outputs",
                    limits.max_outputs
                )));
            }
            // Measured before converting: the conversion copies every shared part.
            bytes = bytes.saturating_add(val.size());
            if bytes > limits.max_output_bytes as u64 {
                return Err(JqError::Budget(format!(
                    "output larger than {} bytes",
                    limits.max_output_bytes
                )));
            }
            // Converting copies every shared part: paid for like any other copy.
            if !meter::charge_items(val.size()) {
                return Err(JqError::Budget(meter::reason()));
            }
            let value = convert::from_jaq(&val.v, crate::value::MAX_DEPTH).ok_or_else(|| {
                JqError::Budget(format!(
                    "output nested deeper than {} levels",
                    crate::value::MAX_DEPTH
                ))
            })?;
            outputs.push(value);
            meter::charge(1);
        }
        // A budget error caught inside the program (`try`, `?`) still ends the run.
        if meter::exhausted() {
            return Err(JqError::Budget(meter::reason()));
        }
        Ok(match outputs.len() {
            0 => Value::Null,
            1 => outputs.swap_remove(0),
            _ => Value::Array(outputs),
        })
    }
}

/// The error for names a program uses that are not defined: a builtin that is not offered is
/// named with the reason, anything else listed.
fn undefined<'s>(names: impl Iterator<Item = (&'s str, jaq_core::compile::Undefined)>) -> JqError {
    let names: Vec<&str> = names.map(|(name, _)| name).collect();
    for name in &names {
        if let Some((_, why)) = REFUSED_NATIVES.iter().find(|(n, _)| n == name) {
            return JqError::Refused(format!("the jq builtin `{name}` is not offered: {why}"));
        }
    }
    JqError::Syntax(format!(
        "undefined name(s) in program: {}",
        names.join(", ")
    ))
}

/// The most bytes of an error message kept. jaq quotes the offending value whole (`cannot
/// index [0,1,...] with ...`), and a value the program built within its budget can print to
/// megabytes, which would then be copied into `_jqError` and rendered twice (found by the
/// projection fuzz target). jq itself abbreviates such values too.
const MAX_ERROR_BYTES: usize = 1024;

/// An error's message: its text when the error value is a string, else its JSON; cut to
/// [`MAX_ERROR_BYTES`] (at a character boundary, then `…`) without formatting the rest.
fn error_text(e: jaq_core::Error<M>) -> String {
    use fmt::Write;
    let v = e.into_val();
    let mut text = Capped(String::new());
    let complete = match jaq_std::ValT::as_utf8_bytes(&v) {
        // A byte cut inside a character becomes U+FFFD past the cap, which the cap removes.
        Some(b) => text
            .write_str(&String::from_utf8_lossy(
                &b[..b.len().min(MAX_ERROR_BYTES + 4)],
            ))
            .is_ok(),
        None => write!(text, "{v}").is_ok(),
    };
    if !complete {
        text.0.push('…');
    }
    text.0
}

/// A string that refuses writes past [`MAX_ERROR_BYTES`], which stops `Display` early.
struct Capped(String);

impl fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = MAX_ERROR_BYTES.saturating_sub(self.0.len());
        if s.len() <= room {
            self.0.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.0.push_str(&s[..end]);
        Err(fmt::Error)
    }
}

/// The deepest bracket nesting in `src`, ignoring quoting (an over-estimate is harmless).
fn nesting(src: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0;
    for b in src.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The definitions a program makes, at any depth, or `None` when it does not parse.
fn user_definitions(src: &str) -> Option<jaq_core::load::parse::Term<&str>> {
    jaq_core::load::parse(src, |p| p.term())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse;

    fn run(program: &str, input: &str) -> Result<String, JqError> {
        let p = JqProgram::compile(program)?;
        p.run(&parse(input).unwrap(), &Limits::default())
            .map(|v| v.to_compact_json())
    }

    #[test]
    fn runs_jq_programs() {
        let doc = r#"{"items":[{"id":1,"name":"a","x":true},{"id":2,"name":"b"}]}"#;
        assert_eq!(run(".items[0].id", doc).unwrap(), "1");
        assert_eq!(
            run("[.items[] | {id, name}]", doc).unwrap(),
            r#"[{"id":1,"name":"a"},{"id":2,"name":"b"}]"#
        );
        assert_eq!(run(".items[] | .id", doc).unwrap(), "[1,2]");
        assert_eq!(run("empty", doc).unwrap(), "null");
        assert_eq!(run("[.items[] | select(.x)] | length", doc).unwrap(), "1");
        assert_eq!(run("[limit(3; repeat(1))]", doc).unwrap(), "[1,1,1]");
        assert_eq!(run("[range(0; 10; 3)]", doc).unwrap(), "[0,3,6,9]");
        assert_eq!(
            run("[1 | recurse(if . < 4 then . + 1 else empty end)]", doc).unwrap(),
            "[1,2,3,4]"
        );
        assert_eq!(run("[0 | while(. < 3; . + 1)]", doc).unwrap(), "[0,1,2]");
        assert_eq!(run("0 | until(. > 4; . + 2)", doc).unwrap(), "6");
        assert_eq!(run("[.. | numbers]", doc).unwrap(), "[1,2]");
        assert_eq!(
            run("def inc: . + 1; [.items[].id | inc]", doc).unwrap(),
            "[2,3]"
        );
        assert_eq!(
            run("[.items[].name] | join(\",\")", doc).unwrap(),
            "\"a,b\""
        );
    }

    #[test]
    fn json_natives_follow_jaq_json() {
        for (program, want) in [
            (
                "[null, -2.5, \"héllo\", [1,2], {\"a\":1}] | map(length)",
                "[0,2.5,5,2,1]",
            ),
            ("\"foobar\" | contains(\"bar\")", "true"),
            ("[[1,2],[3]] | contains([[1]])", "true"),
            (
                "{\"a\":{\"b\":1,\"c\":2}} | contains({\"a\":{\"b\":1}})",
                "true",
            ),
            ("{\"a\":1} | [has(\"a\"), has(\"b\")]", "[true,false]"),
            ("[1,2] | [has(0), has(2), has(-1)]", "[true,false,false]"),
            ("\"a,b, cd, efg\" | indices(\", \")", "[3,7]"),
            ("[0,1,2,1,3,1,2] | indices(1)", "[1,3,5]"),
            ("[0,1,2,1,3,1,2] | indices([1,2])", "[1,5]"),
            (
                "[1,2,3] | [bsearch(2), bsearch(0), bsearch(4)]",
                "[1,-1,-4]",
            ),
            (
                "{\"a\":[1,\"x\"]} | tojson",
                "\"{\\\"a\\\":[1,\\\"x\\\"]}\"",
            ),
            ("\"[1,{\\\"b\\\":2}]\" | fromjson", "[1,{\"b\":2}]"),
            ("[3,1,2] | sort", "[1,2,3]"),
            ("{\"b\":1,\"a\":2} | keys", "[\"a\",\"b\"]"),
            ("[1,2,3,4] | .[1:3] |= map(. * 10)", "[1,20,30,4]"),
            ("{\"a\":1} | .b = 2 | del(.a)", "{\"b\":2}"),
            ("[1,2,3] | .[1] |= empty", "[1,3]"),
            (
                "[1,[2]] | walk(if type == \"number\" then . + 1 else . end)",
                "[2,[3]]",
            ),
        ] {
            assert_eq!(run(program, "null").unwrap(), want, "{program}");
        }
        assert!(matches!(
            run(".[1:2] |= \"x\"", "\"abc\""),
            Err(JqError::Runtime(_))
        ));
    }

    #[test]
    fn numbers_and_key_order_survive() {
        assert_eq!(
            run(
                ".",
                r#"{"b":1.50,"10":2,"a":123456789012345678901234567890}"#
            )
            .unwrap(),
            r#"{"10":2,"b":1.50,"a":123456789012345678901234567890}"#
        );
        assert_eq!(
            run("{b: 1, \"2\": 2, a: 3}", "null").unwrap(),
            r#"{"2":2,"b":1,"a":3}"#
        );
    }

    #[test]
    fn errors_are_reported() {
        assert!(matches!(run(".a.b", "[1]"), Err(JqError::Runtime(_))));
        assert!(
            matches!(run("error(\"boom\")", "null"), Err(JqError::Runtime(m)) if m.contains("boom"))
        );
        assert!(matches!(run(".[", "null"), Err(JqError::Syntax(_))));
        // A runtime error quoting a large value keeps its start and stays short.
        for program in [
            "[range(200000)] | .x",
            "[range(3000) | tostring] | add | error",
        ] {
            let Err(JqError::Runtime(m)) = run(program, "null") else {
                panic!("{program} should fail at run time");
            };
            assert!(
                m.len() <= MAX_ERROR_BYTES + '…'.len_utf8(),
                "{program}: {} bytes",
                m.len()
            );
            assert!(m.ends_with('…') && m.len() > 100, "{program}: {m}");
        }
        let Err(JqError::Runtime(m)) = run(&format!("\"{}\" | error", "é".repeat(600)), "null")
        else {
            panic!("error with a long message should fail");
        };
        assert_eq!(m, format!("{}…", "é".repeat(MAX_ERROR_BYTES / 2)));
        assert!(matches!(run("nosuchfn", "null"), Err(JqError::Syntax(_))));
        assert!(
            matches!(run("nosuch(1)", "null"), Err(JqError::Syntax(m)) if m.contains("nosuch"))
        );
        for (program, name) in [
            ("now", "now"),
            ("env", "env"),
            ("halt_error", "halt_error"),
            ("1 | halt(2)", "halt"),
        ] {
            let Err(JqError::Refused(m)) = run(program, "null") else {
                panic!("{program} should be refused");
            };
            assert!(m.contains(&format!("`{name}` is not offered")), "{m}");
        }
        assert!(matches!(
            run(&"[".repeat(100), "null"),
            Err(JqError::TooLarge)
        ));
    }

    #[test]
    fn recursive_definitions_are_refused() {
        for p in [
            "def f: f; f",
            "def f: [f]; f",
            "def f(x): f(x); f(.)",
            "def f: def g: f; g; f",
            "def f: 1, f; [limit(3; f)]",
        ] {
            assert!(
                matches!(JqProgram::compile(p), Err(JqError::Recursive(_))),
                "{p}"
            );
        }
        // Shadowing by arity is not recursion.
        assert!(JqProgram::compile("def f: 1; def f(x): f; f(.)").is_ok());
    }

    /// `def f1: f0 | f0; ...` evaluates `.` 2^N times without touching a value, so fuel charged
    /// per evaluation is noticed only at the end: such programs are refused by their unfolded
    /// size, through arguments and nested scopes too, and ordinary definitions are not.
    #[test]
    fn programs_that_unfold_exponentially_are_refused() {
        let doubling = |n: usize, step: &str| {
            let mut p = String::from("def f0: .; ");
            for i in 1..=n {
                p.push_str(
                    &step
                        .replace("{i}", &i.to_string())
                        .replace("{j}", &(i - 1).to_string()),
                );
            }
            p.push_str(&format!("f{n}"));
            p
        };
        for program in [
            doubling(24, "def f{i}: f{j} | f{j}; "),
            doubling(20, "def f{i}: [f{j}, f{j}]; "),
            doubling(18, "def f{i}: def g: f{j}; g | g; "),
            // Through filter arguments: each `t` calls its argument twice.
            format!("def t(g): g | g; {}.{}", "t(".repeat(20), ")".repeat(20)),
        ] {
            let refused = JqProgram::compile(&program);
            assert!(
                matches!(&refused, Err(JqError::Refused(m)) if m.contains("unfolds to more than")),
                "{program}: {:?}",
                refused.map(|_| ())
            );
        }
        for program in [
            doubling(12, "def f{i}: f{j} | f{j}; "),
            "def pick(f): map(f); def name: .name; [.items[] | {n: name}] | pick(.n)".to_owned(),
            format!("def t(g): g | g; {}.{}", "t(".repeat(10), ")".repeat(10)),
        ] {
            assert!(JqProgram::compile(&program).is_ok(), "{program}");
        }
    }

    #[test]
    fn standard_definitions_have_no_recursion_left() {
        // Every loop in the prelude must go through a budgeted native.
        // `flatten($d)` recurses only into nested arrays of the input, so its depth is bounded
        // by the input's nesting (at most MAX_DEPTH).
        let body = definitions().collect::<Vec<_>>();
        let term =
            jaq_core::load::parse::Term::Def(body, Box::new(jaq_core::load::parse::Term::Id));
        assert_eq!(recursive_defs(&term), vec!["flatten"]);
    }

    #[test]
    fn runaway_programs_stop_within_their_budget() {
        // Work is counted, not timed: each program must be stopped by the meter, having spent
        // no more than its fuel, and those stopped by a size, depth or output bound long
        // before the fuel is gone.
        let limits = Limits {
            fuel: 2_000_000,
            ..Limits::default()
        };
        let input = parse(&format!("[[2],{}]", vec!["1"; 300].join(","))).unwrap();
        for (p, stopped_early) in [
            ("range(1e9)", false),
            ("repeat(1)", false),
            ("[range(1e9)]", false),
            ("[repeat(1)]", false),
            ("[limit(1e8; repeat(\"x\"))] | join(\"\")", false),
            ("last(range(1e9))", false),
            ("until(false; .)", false),
            ("[0 | while(true; .)]", false),
            ("[1 | recurse(. + 1)] | length", false),
            ("[repeat(empty)]", false),
            ("[repeat(1)?] | length", false),
            ("reduce range(1e9) as $x (0; . + 1)", false),
            ("[1 | recurse(. + 1; . > 0)]", false),
            ("[range(0; infinite)]", false),
            // Loop-free, but quartic in the input: the metered values stop it.
            (
                "[.[] as $a | .[] as $b | .[] as $c | .[] as $d | 1] | length",
                false,
            ),
            // Memory multipliers are refused before allocating.
            ("\"x\" * 1e10", true),
            // Deep values a program builds.
            // A string or an array that really doubles in memory is stopped at the size bound
            // after copying up to that bound, not before.
            ("reduce range(60) as $i (\"x\"; . + .)", false),
            ("reduce range(60) as $i ([1]; . + .) | length", false),
            ("reduce range(100000) as $i (1; [.]) | tojson", true),
            ("reduce range(100000) as $i (1; {a: .})", true),
            // Shared values: each doubling is one step, the size bound stops them.
            ("reduce range(40) as $i (.; [., .])", true),
            ("reduce range(40) as $i (.; [., .]) | tojson", true),
            (
                "[limit(40; repeat(1))] | reduce .[] as $i (.; {a: ., b: .}) | tostring",
                true,
            ),
            (
                "reduce range(40) as $i (.; . as $x | [$x] + [$x]) | length",
                true,
            ),
        ] {
            let result = JqProgram::compile(p).and_then(|prog| prog.run(&input, &limits));
            assert!(matches!(result, Err(JqError::Budget(_))), "{p}: {result:?}");
            let spent = meter::last_spent();
            assert!(spent <= limits.fuel, "{p}: {spent}");
            if stopped_early {
                assert!(spent < limits.fuel / 10, "{p} spent {spent} units");
            }
        }
    }

    #[test]
    fn sharing_does_not_hide_growth() {
        // Twenty doublings of a 3-byte array are 3 MiB once printed: over a 64 KiB bound
        // although no more than a few hundred bytes are ever allocated.
        let limits = Limits {
            fuel: 10_000,
            max_value_bytes: 64 << 10,
            ..Limits::default()
        };
        let input = parse("[1]").unwrap();
        for p in [
            "reduce range(20) as $i (.; [., .])",
            "reduce range(20) as $i (.; [., .]) | tojson | length",
            "reduce range(20) as $i (.; {a: ., b: .}) | tostring | length",
            "def d: [., .]; d | d | d | d | d | d | d | d | d | d | d | d | d | d | d | d | d | d | d | d | length",
            "reduce range(20) as $i (.; {a: .} | .b = .a) | length",
        ] {
            let result = JqProgram::compile(p).and_then(|prog| prog.run(&input, &limits));
            let Err(JqError::Budget(reason)) = &result else {
                panic!("{p}: {result:?}");
            };
            assert_eq!(reason, "value larger than 65536 bytes as JSON", "{p}");
            assert!(meter::last_spent() < 2_000, "{p}: {}", meter::last_spent());
        }
        // Under the bound, the same programs run.
        let result = JqProgram::compile("reduce range(12) as $i (.; [., .]) | tojson | length")
            .and_then(|prog| prog.run(&input, &limits));
        assert_eq!(result.map(|v| v.to_compact_json()), Ok("24573".to_owned()));
    }

    #[test]
    fn error_texts_that_print_a_value_are_paid_for() {
        // Fifteen doublings share one small array: a few dozen steps for a value that prints
        // to about 160 KB, which the error then quotes whole, whether jaq-json's indexing or
        // jaq's math natives raised it.
        for failing in [".x", "acosh"] {
            let program = format!(
                "def d: [., .]; 0 | d|d|d|d|d|d|d|d|d|d|d|d|d|d|d | try {failing} catch length"
            );
            let printed = run(&program, "null").unwrap().parse::<u64>().unwrap();
            assert!(printed > 100_000, "{failing}: {printed}");
            let spent = meter::last_spent();
            assert!(spent > printed / 16, "{failing}: {spent}");
        }
    }

    #[test]
    fn outputs_are_measured_before_they_are_converted() {
        let limits = Limits {
            max_output_bytes: 1000,
            ..Limits::default()
        };
        let input = parse("\"0123456789\"").unwrap();
        let run = |p: &str| JqProgram::compile(p).and_then(|prog| prog.run(&input, &limits));
        assert!(run("[range(80) | .]").is_ok());
        assert_eq!(
            run("[range(100)] | map(\"0123456789\")"),
            Err(JqError::Budget("output larger than 1000 bytes".into()))
        );
        assert_eq!(
            run("range(400) | ."),
            Err(JqError::Budget("output larger than 1000 bytes".into()))
        );
    }

    /// Runs `program` on `null` under `limits`, returning the result, the fuel spent and the
    /// most the heap grew by.
    fn measured(program: &str, limits: &Limits) -> (Result<Value, JqError>, u64, usize) {
        let result = JqProgram::compile(program).and_then(|p| p.run(&Value::Null, limits));
        (result, meter::last_spent(), meter::last_peak_memory())
    }

    #[test]
    fn builtins_that_build_large_values_stop_at_the_memory_bound() {
        // Each builds values whose printed size is within the size bound, but whose memory is
        // many times it: the heap count stops them near the bound, and before their fuel.
        let limits = Limits {
            max_memory_bytes: 24 << 20,
            ..Limits::default()
        };
        for program in [
            "\"a\" * 11000000 | explode | length",
            "\"ab\" * 8000000 | [splits(\"\")] | length",
            "[range(3000000)] | length",
            "[limit(3000000; repeat(1))] | length",
            "\"ab\" * 8000000 | [match(\"\"; \"g\")] | length",
            "\"ab\" * 8000000 | indices(\"\") + indices(\"a\") | length",
            "[range(2000000)] | sort | length",
            "\"a,\" * 3000000 | . / \",\" | length",
            "\"[\" + \"0,\" * 5000000 + \"0]\" | fromjson | length",
        ] {
            let (result, spent, peak) = measured(program, &limits);
            let Err(JqError::Budget(reason)) = &result else {
                panic!("{program}: {result:?}");
            };
            assert!(reason.contains("memory"), "{program}: {reason}");
            assert!(spent < limits.fuel, "{program}: {spent}");
            // The heap is looked at every few thousand items, so it passes the bound by little.
            assert!(
                peak < limits.max_memory_bytes + (4 << 20),
                "{program}: {peak} bytes"
            );
        }
    }

    #[test]
    fn builtins_pay_for_the_work_they_do() {
        // Each does work proportional to its inputs inside one builtin call: the fuel it is
        // charged must stop it within the budget, however large the inputs.
        let limits = Limits {
            fuel: 2_000_000,
            ..Limits::default()
        };
        for program in [
            "jn(1000000000; 1.5)",
            "yn(-1000000000; 1.5)",
            "[range(100000)] | map(jn(1000; 1.5)) | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | ascii_downcase] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | ltrimstr(\"b\")] | length",
            "(\"a\" * 100000) as $s | [range(1000) | $s | explode | implode] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | @base64] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | length] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | startswith($s)] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | contains($s)] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | indices(\"aa\")] | length",
            "(\"a\" * 1000000) as $s | [range(100) | $s | test(\"b\")] | length",
            "(\"[1]\" * 1) as $j | [range(1000000) | $j | fromjson] | length",
            "[range(3000)] as $a | [range(3000)] | contains($a)",
            "[range(3000)] as $a | [range(3000) | [.]] | inside([$a])",
            "[range(6000) | [.]] as $a | $a | indices($a[3000:])",
        ] {
            let (result, spent, _) = measured(program, &limits);
            assert!(
                matches!(&result, Err(JqError::Budget(r)) if r.contains("budget exhausted")),
                "{program}: {result:?}"
            );
            assert!(spent <= limits.fuel, "{program}: {spent}");
        }
    }

    #[test]
    fn substring_searches_are_linear() {
        // Searches that took time proportional to both lengths answer for the fuel of reading
        // them once.
        let limits = Limits::default();
        let big = "(\"a\" * 400000) as $s | ($s + \"b\") as $t";
        for (program, want) in [
            (format!("{big} | $s | contains($t)"), "false"),
            (format!("{big} | $t | contains($s + \"b\")"), "true"),
            (format!("{big} | $s | [indices($t)] | length"), "1"),
            (format!("{big} | $t | indices(\"ab\")"), "[399999]"),
            (format!("{big} | $s | inside($t)"), "true"),
            (
                "\"x\\u00e9ab\\u00e9ab\" | indices(\"ab\")".to_owned(),
                "[2,5]",
            ),
            ("\"aaaa\" | indices(\"aa\")".to_owned(), "[0,1,2]"),
        ] {
            let (result, spent, _) = measured(&program, &limits);
            assert_eq!(
                result.map(|v| v.to_compact_json()),
                Ok(want.to_owned()),
                "{program}"
            );
            assert!(spent < 500_000, "{program}: {spent}");
        }
    }

    #[test]
    fn run_time_regexes_are_bounded_and_paid_for() {
        for (program, want) in [
            ("\"aXbX\" | [match(\"X\"; \"g\") | .offset]", "[1,3]"),
            (
                "\"\\u00e9t\\u00e9\" | capture(\"(?<v>t)(?<w>\\u00e9)\")",
                r#"{"v":"t","w":"é"}"#,
            ),
            ("\"a1b22\" | [scan(\"[0-9]+\")]", r#"["1","22"]"#),
            ("\"a, b,c\" | [splits(\", *\")]", r#"["a","b","c"]"#),
            ("\"abc\" | gsub(\"b\"; \"X\")", r#""aXc""#),
            ("\"abab\" | sub(\"(?<x>b)\"; \"<\\(.x)>\")", r#""a<b>ab""#),
            ("\"ab\" | test(\"B\"; \"i\")", "true"),
            ("\"a\\u00e9b\" | match(\"b\") | [.offset, .length]", "[2,1]"),
        ] {
            assert_eq!(run(program, "null"), Ok(want.to_owned()), "{program}");
        }
        // A pattern that compiles to more than the largest bound is refused before matching.
        let Err(JqError::Runtime(m)) = run("\"ab\" | test(\"(?:a|b){0,10000}c\")", "null") else {
            panic!("a huge pattern should be refused");
        };
        assert!(m.contains("regex pattern too large"), "{m}");
        assert!(matches!(
            run("(\"a\" * 5000) as $p | \"a\" | test($p)", "null"),
            Err(JqError::Runtime(m)) if m.contains("longer than 4096 bytes")
        ));
        // A pattern within the bounds is paid for by the haystack times its compiled size.
        let limits = Limits::default();
        let (_, small, _) = measured("\"a\" * 10000 | test(\"b\")", &limits);
        let (_, large, _) = measured("\"a\" * 10000 | test(\"(?:a|b){0,300}c\")", &limits);
        assert!(small > 10_000 / 16, "{small}");
        assert!(large > 8 * small, "{large} against {small}");
    }

    /// What a run cost, counted apart from the meter: bytes allocated and CPU time; and the
    /// size of what it returned.
    struct Cost {
        spent: u64,
        allocated: u64,
        cpu_ns: u64,
        output: u64,
    }

    fn cost_of(program: &JqProgram, input: &Value, limits: &Limits) -> Cost {
        use crate::ports::fake::thread_cpu_ns;
        let (allocated, cpu) = (crate::memory::heap::allocated(), thread_cpu_ns());
        let result = program.run(input, limits);
        let cost = Cost {
            spent: meter::last_spent(),
            allocated: crate::memory::heap::allocated() - allocated,
            cpu_ns: thread_cpu_ns() - cpu,
            output: 0,
        };
        let output = result.map_or(0, |v| meter::value_size(&v, u64::MAX).0);
        Cost { output, ..cost }
    }

    /// Values a builtin may be given that are large for the fuel: long strings, long arrays,
    /// wide and deep values, and numbers that count loops.
    fn adversarial() -> Vec<Value> {
        let long = "ab".repeat(100_000);
        let items: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
        let entries: Vec<String> = (0..5_000).map(|i| format!("\"k{i}\":[{i}]")).collect();
        [
            format!("\"{long}\""),
            format!("\"{}c\"", &long[..long.len() / 2]),
            format!("[{}]", items.join(",")),
            format!("{{{}}}", entries.join(",")),
            format!("{}1{}", "[".repeat(200), "]".repeat(200)),
            "1000000000".to_owned(),
            "-1000000000".to_owned(),
            "null".to_owned(),
        ]
        .iter()
        .map(|text| crate::value::parse(text).unwrap())
        .collect()
    }

    #[test]
    fn every_builtin_stops_within_its_fuel_on_adversarial_inputs() {
        // The deep value is walked recursively, and unoptimized frames are large: the depth
        // bound itself is checked on a wasm-sized stack in src/projection/tests_stack.rs.
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(every_builtin_on_adversarial_inputs)
            .unwrap()
            .join()
            .unwrap();
    }

    /// Each builtin, given large inputs and arguments, must end (with a value or an error)
    /// having done work in proportion to the fuel it was charged: counted by the allocator and
    /// by the thread's CPU time, against a plain loop's CPU time per unit measured in the run.
    fn every_builtin_on_adversarial_inputs() {
        let limits = Limits {
            fuel: 100_000,
            ..Limits::default()
        };
        let values = adversarial();
        let reference = JqProgram::compile("[range(1e9)] | length").unwrap();
        let base = cost_of(&reference, &Value::Null, &limits);
        assert!(base.spent == limits.fuel);
        let ns_per_unit = base.cpu_ns as f64 / base.spent as f64;
        let mut worst = (0.0, String::new());
        for (name, arity) in builtins() {
            let args = vec!["$a"; arity].join("; ");
            let call = if arity == 0 {
                name.to_owned()
            } else {
                format!("{name}({args})")
            };
            let program = match JqProgram::compile(&format!(". as [$in, $a] | $in | {call}")) {
                Ok(p) => p,
                // Names the definitions use internally with other arities, or `$__loc__`-like
                // forms, that a program cannot call this way.
                Err(e) => panic!("{call}: {e}"),
            };
            for (i, input) in values.iter().enumerate() {
                for arg in [&values[i], &values[(i + 1) % values.len()]] {
                    let pair = Value::Array(vec![input.clone(), arg.clone()]);
                    let size = meter::value_size(&pair, u64::MAX).0;
                    let cost = cost_of(&program, &pair, &limits);
                    assert!(cost.spent <= limits.fuel, "{call}: {}", cost.spent);
                    // The input and the output are converted (copying what values share, which
                    // the output bounds limit) outside the fuel: the fuzz target's constants.
                    let bytes_bound = 2_048 * cost.spent + 256 * (size + cost.output) + (256 << 10);
                    assert!(
                        cost.allocated <= bytes_bound,
                        "{call} on value {i}: {} bytes allocated for {} fuel",
                        cost.allocated,
                        cost.spent
                    );
                    let ratio = cost.cpu_ns as f64
                        / (ns_per_unit * (cost.spent + size / 16 + 1_000) as f64);
                    if ratio > worst.0 {
                        worst = (ratio, format!("{call} on value {i}"));
                    }
                }
            }
        }
        // A loose multiple: the debug build's hot spots are not the plain loop's.
        assert!(
            worst.0 < 50.0,
            "{} took {:.1} times its fuel's CPU time",
            worst.1,
            worst.0
        );
    }

    #[test]
    fn projections_of_a_large_response_fit_the_memory_bound() {
        // The bound must leave room for the programs it was set for: map and select over a
        // 16 MiB list response (examples/bench_projection.rs builds the same kind of page).
        let item = |i: usize| {
            format!(
                r#"{{"id":{i},"name":"item-{i}","status":"{}","owner":{{"login":"user{i}","id":{i}}},"description":"Lorem ipsum dolor sit amet, consectetur adipiscing elit {i}"}}"#,
                ["open", "closed"][i % 2]
            )
        };
        let mut text = String::from("{\"items\":[");
        let mut i = 0;
        while text.len() < 16 << 20 {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&item(i));
            i += 1;
        }
        text.push_str("]}");
        let input = parse(&text).unwrap();
        for program in [
            ".items | map({id, name}) | length",
            "[.items[] | select(.status == \"open\") | .owner.login] | length",
            ".items | map(.id) | sort | length",
        ] {
            let result =
                JqProgram::compile(program).and_then(|p| p.run(&input, &Limits::default()));
            let peak = meter::last_peak_memory();
            eprintln!(
                "{program}: {peak} bytes at most, input {}",
                meter::last_input_memory()
            );
            assert!(result.is_ok(), "{program}: {result:?} ({peak} bytes)");
        }
    }
}
