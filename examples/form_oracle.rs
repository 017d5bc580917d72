//! Differential-test driver for the `URLSearchParams` encoding (src/js/form.rs).
//!
//! Reads one case per line on stdin, a JSON array of `[name, value]` string pairs, and writes one
//! line per case: the pairs as `src/js/form.rs` encodes them. `tests/oracle/form.test.mjs` runs
//! Node's `URLSearchParams` on the same lines and compares.

use std::io::{self, BufRead, BufWriter, Write};

use devtools_mcp_edge::js::form;
use devtools_mcp_edge::value::{self, Value};

fn main() -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    for line in io::stdin().lock().lines() {
        let line = line?;
        let pairs: Option<Vec<(String, String)>> = match value::parse(&line) {
            Ok(Value::Array(items)) => items
                .iter()
                .map(|pair| match pair {
                    Value::Array(kv) => match kv.as_slice() {
                        [Value::String(k), Value::String(v)] => Some((k.clone(), v.clone())),
                        _ => None,
                    },
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        match pairs {
            Some(pairs) => writeln!(out, "{}", form::encode(&pairs))?,
            None => writeln!(out, "!bad case: {line}")?,
        }
    }
    out.flush()
}
