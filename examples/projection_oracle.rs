//! Differential-test driver for the JMESPath interpreter.
//!
//! Reads one case per line on stdin, `{"data": <json>, "expressions": ["...", ...]}`, and writes
//! one line per case: a JSON array with, per expression, `{"r": "<JSON.stringify of the result>"}`,
//! `{"u": 1}` when the result is `undefined`, or `{"e": "compile" | "runtime"}` when the
//! reference would throw. Each entry also has `"p"`, the JSON (JavaScript number form) of what
//! the public `Projection::apply_or_error_value` returns, and `"l"`, the language it chose.
//! `tests/oracle/projection.test.mjs` runs npm `jmespath` on the same lines and compares.

use std::io::{self, BufRead, BufWriter, Write};

use devtools_mcp_edge::projection::jmespath::Expression;
use devtools_mcp_edge::projection::{Language, Projection};
use devtools_mcp_edge::render::json::stringify;
use devtools_mcp_edge::value::{self, write_json_string, Value};

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = BufWriter::new(io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let case = match value::parse(&line) {
            Ok(case) => case,
            Err(e) => {
                eprintln!("bad case line: {e}");
                std::process::exit(2);
            }
        };
        let data = case.get("data").cloned().unwrap_or(Value::Null);
        let expressions: Vec<&str> = match case.get("expressions") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut line_out = String::from("[");
        for (i, src) in expressions.iter().enumerate() {
            if i > 0 {
                line_out.push(',');
            }
            match Expression::compile(src) {
                Err(_) => line_out.push_str(r#"{"e":"compile""#),
                Ok(expr) => match expr.search_to_js_json(&data) {
                    Err(_) => line_out.push_str(r#"{"e":"runtime""#),
                    Ok(None) => line_out.push_str(r#"{"u":1"#),
                    Ok(Some(json)) => {
                        line_out.push_str(r#"{"r":"#);
                        write_json_string(&json, &mut line_out);
                    }
                },
            }
            let projection = Projection::compile(src);
            let lang = match projection.language() {
                Some(Language::JmesPath) => "jmespath",
                Some(Language::Jq) => "jq",
                None => "none",
            };
            line_out.push_str(&format!(r#","l":"{lang}","p":"#));
            let projected = projection.apply_or_error_value(data.clone());
            write_json_string(&stringify(&projected), &mut line_out);
            line_out.push('}');
        }
        line_out.push(']');
        writeln!(out, "{line_out}")?;
    }
    out.flush()
}
