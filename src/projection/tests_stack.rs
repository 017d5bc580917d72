//! Worst-case nesting must fit the stack a Worker gives wasm (1 MiB by default for Rust's
//! wasm32 target): the deepest expressions, programs and documents we accept are run here on a
//! thread with that much stack, in the debug build (whose frames are larger than release's).

use crate::projection::jmespath::Expression;
use crate::projection::jq::{MAX_INPUT_DEPTH, MAX_PROGRAM_NESTING};
use crate::projection::Limits;
use crate::projection::Projection;
use crate::value::{parse, MAX_DEPTH};

const WASM_STACK: usize = 1 << 20;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(WASM_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .expect("ran out of stack or panicked");
}

#[test]
fn deepest_jmespath_expressions_fit() {
    on_small_stack(|| {
        let data = parse(r#"{"a":{"a":[1,2,3]}}"#).unwrap();
        // Find the deepest nesting the parser accepts, then evaluate it.
        let mut depth = 1;
        while Expression::compile(&format!(
            "{}a{}",
            "(".repeat(depth + 1),
            ")".repeat(depth + 1)
        ))
        .is_ok()
        {
            depth += 1;
        }
        let parens = format!("{}a{}", "(".repeat(depth), ")".repeat(depth));
        Expression::compile(&parens).unwrap().search(&data).unwrap();
        let mut n = 1;
        while Expression::compile(&vec!["a"; n + 1].join(".")).is_ok() {
            n += 1;
        }
        Expression::compile(&vec!["a"; n].join("."))
            .unwrap()
            .search(&data)
            .unwrap();
        let mut n = 1;
        while Expression::compile(&format!("{}@{}", "[".repeat(n + 1), "]".repeat(n + 1))).is_ok() {
            n += 1;
        }
        let lists = format!("{}@{}", "[".repeat(n), "]".repeat(n));
        Expression::compile(&lists).unwrap().search(&data).unwrap();
        let nots = format!("{}a", "!".repeat(200));
        let _ = Expression::compile(&nots).map(|e| e.search(&data));
    });
}

#[test]
fn deepest_documents_fit() {
    on_small_stack(|| {
        let nest = |n: usize| parse(&format!("{}1{}", "[".repeat(n), "]".repeat(n))).unwrap();
        let limits = Limits {
            fuel: 2_000_000,
            ..Limits::default()
        };
        let deepest = nest(MAX_DEPTH);
        for expr in ["to_string(@)", "@ == @", "[@][0]", "[]", "@"] {
            Projection::compile(expr).apply(&deepest).unwrap();
        }
        let jq_ok = nest(MAX_INPUT_DEPTH);
        for expr in [
            ". | tojson | length",
            "[..] | length",
            "[paths] | length",
            "walk(.)",
            ". == .",
            "tostream",
        ] {
            Projection::compile(expr)
                .apply_with(&jq_ok, &limits)
                .unwrap();
        }
        let err = Projection::compile(". | length").apply_with(&nest(MAX_INPUT_DEPTH + 1), &limits);
        assert!(err.unwrap_err().to_string().contains("nested deeper"));
    });
}

#[test]
fn deepest_jq_programs_fit() {
    on_small_stack(|| {
        let data = parse("[1,2,3]").unwrap();
        let program = format!(
            "{}.{}",
            "[".repeat(MAX_PROGRAM_NESTING),
            "]".repeat(MAX_PROGRAM_NESTING)
        );
        let p = Projection::compile(&program);
        p.apply(&data).unwrap();
        let limits = Limits {
            fuel: 2_000_000,
            ..Limits::default()
        };
        for runaway in [
            "[1 | recurse(. + 1)] | length",
            "last(range(1e9))",
            "[repeat(1)]",
        ] {
            assert!(Projection::compile(runaway)
                .apply_with(&data, &limits)
                .is_err());
        }
    });
}
