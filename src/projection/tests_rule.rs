//! The public projection API: the selection rule between JMESPath and jq, the reference's
//! `_jqError`/`_originalData` value, and the jq budget, on real-shaped responses.

use crate::projection::Limits;
use crate::projection::{project, ErrorKind, Language, Projection, TOOL_DESCRIPTION};
use crate::value::{parse, Value};

fn doc() -> Value {
    parse(
        r#"{"total_count":3,"workflow_runs":[
            {"id":11,"name":"CI","status":"completed","conclusion":"success","run_number":1},
            {"id":12,"name":"Lint","status":"completed","conclusion":"failure","run_number":2},
            {"id":13,"name":"CI","status":"in_progress","conclusion":null,"run_number":3}]}"#,
    )
    .unwrap()
}

fn json(v: &Value) -> String {
    v.to_compact_json()
}

#[test]
fn valid_jmespath_is_jmespath_and_everything_else_is_jq() {
    let cases = [
        (
            "workflow_runs[*].id",
            Some(Language::JmesPath),
            "[11,12,13]",
        ),
        ("length(workflow_runs)", Some(Language::JmesPath), "3"),
        // A bare name is JMESPath (a field), even where jq would read a builtin.
        ("length", Some(Language::JmesPath), "null"),
        ("keys", Some(Language::JmesPath), "null"),
        (".workflow_runs | length", Some(Language::Jq), "3"),
        (".workflow_runs[0].id", Some(Language::Jq), "11"),
        (
            "[.workflow_runs[] | select(.conclusion == \"failure\") | .name]",
            Some(Language::Jq),
            r#"["Lint"]"#,
        ),
        (
            ".workflow_runs | map(.run_number) | add",
            Some(Language::Jq),
            "6",
        ),
        ("keys_unsorted", Some(Language::JmesPath), "null"),
        (
            ". | keys",
            Some(Language::Jq),
            r#"["total_count","workflow_runs"]"#,
        ),
        (".workflow_runs[].id", Some(Language::Jq), "[11,12,13]"),
    ];
    for (expr, lang, want) in cases {
        let p = Projection::compile(expr);
        assert_eq!(p.language(), lang, "{expr}");
        assert_eq!(json(&p.apply(&doc()).unwrap()), want, "{expr}");
    }
}

#[test]
fn multiselect_hashes_keep_expression_order_with_javascript_index_keys() {
    let out = project(
        doc(),
        Some("workflow_runs[0].{z: name, a: id, \"10\": status, \"2\": run_number}"),
    );
    assert_eq!(json(&out), r#"{"2":1,"10":"completed","z":"CI","a":11}"#);
}

#[test]
fn blank_expressions_return_the_data() {
    for e in [None, Some(""), Some("   "), Some("\t")] {
        assert_eq!(project(doc(), e), doc());
    }
}

#[test]
fn failures_return_the_reference_error_value() {
    // Invalid in both languages: the reference's exact message.
    let out = project(doc(), Some("workflow_runs[?"));
    assert_eq!(
        json(out.get("_jqError").unwrap()),
        r#""Invalid JMESPath expression: workflow_runs[?""#
    );
    assert_eq!(out.get("_originalData"), Some(&doc()));
    // JMESPath runtime errors (the reference throws at search time) read the same.
    let out = project(doc(), Some("abs(workflow_runs)"));
    assert_eq!(
        json(out.get("_jqError").unwrap()),
        r#""Invalid JMESPath expression: abs(workflow_runs)""#
    );
    // Unknown functions compile in the reference and fail only when reached.
    assert_eq!(json(&project(doc(), Some("total_count || nosuch(@)"))), "3");
    // jq runtime errors say what happened.
    let out = project(doc(), Some(".workflow_runs.name"));
    let msg = out.get("_jqError").and_then(Value::as_str).unwrap();
    assert!(
        msg.starts_with("jq error: ") && msg.ends_with("(jq program: .workflow_runs.name)"),
        "{msg}"
    );
    assert_eq!(out.get("_originalData"), Some(&doc()));
}

#[test]
fn null_and_undefined_results_are_null() {
    assert_eq!(json(&project(doc(), Some("nothing_here"))), "null");
    // max_by over string keys yields `undefined` in the reference; TOON shows it as null.
    assert_eq!(
        json(&project(doc(), Some("max_by(workflow_runs, &name)"))),
        "null"
    );
    assert_eq!(
        json(&project(
            doc(),
            Some("{m: max_by(workflow_runs, &name), n: total_count}")
        )),
        r#"{"m":null,"n":3}"#
    );
    assert_eq!(json(&project(doc(), Some("avg(`[]`)"))), "null");
}

#[test]
fn runaway_jq_programs_become_budget_errors() {
    for program in [
        "[range(1e9)]",
        "repeat(1)",
        "def f: f; f",
        "[limit(1e8; repeat(\"x\"))] | join(\"\")",
    ] {
        let p = Projection::compile(program);
        // A smaller budget keeps the debug build fast; examples/bench_projection.rs times the
        // default budget in a release build.
        let limits = Limits {
            fuel: 500_000,
            ..Limits::default()
        };
        let err = p.apply_with(&doc(), &limits).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Budget | ErrorKind::Refused),
            "{program}: {err}"
        );
        let msg = p.error_message(&err);
        assert!(
            msg.contains(program) && msg.starts_with("jq program"),
            "{msg}"
        );
    }
    let out = project(doc(), Some("def f: f; f"));
    let msg = out.get("_jqError").and_then(Value::as_str).unwrap();
    assert!(msg.contains("recursive function `f`"), "{msg}");
}

#[test]
fn several_jq_outputs_become_an_array_and_none_null() {
    assert_eq!(
        json(&project(doc(), Some(".workflow_runs[] | .name"))),
        r#"["CI","Lint","CI"]"#
    );
    assert_eq!(
        json(&project(doc(), Some(".workflow_runs[] | select(.id > 99)"))),
        "null"
    );
}

#[test]
fn the_tool_description_is_the_documented_one() {
    let doc = include_str!("../../docs/projection.md");
    let start =
        doc.find("<!-- tool-description -->\n").unwrap() + "<!-- tool-description -->\n".len();
    let end = doc.find("\n<!-- /tool-description -->").unwrap();
    assert_eq!(&doc[start..end], TOOL_DESCRIPTION);
}

#[test]
fn an_expression_over_the_size_bound_is_refused_in_either_language_without_being_quoted() {
    // `total_count` padded with spaces to the bound is still JMESPath; one byte more is refused.
    let at_bound = format!("total_count{}", " ".repeat(4096 - "total_count".len()));
    assert_eq!(json(&project(doc(), Some(&at_bound))), "3");
    for over in [
        format!("{at_bound} "),
        format!(".total_count #{}", "x".repeat(1 << 20)),
    ] {
        let projection = Projection::compile(&over);
        assert_eq!(
            projection.apply(&doc()).map_err(|e| e.kind()),
            Err(ErrorKind::Refused)
        );
        let value = project(doc(), Some(&over));
        let message = value.get("_jqError").and_then(Value::as_str).unwrap();
        assert!(
            message.starts_with("expression too large (at most 4096 bytes"),
            "{message}"
        );
        assert!(!message.contains("total_count"), "{message}");
        assert_eq!(value.get("_originalData"), Some(&doc()));
    }
}
