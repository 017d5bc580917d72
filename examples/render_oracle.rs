//! Renders JSON documents for the differential tests (tests/oracle/render.test.mjs).
//!
//! Reads one JSON document per line on stdin and writes, per line, a JSON array
//! `[toon, json]` of the two renderings as JSON strings, or `{"error": "..."}` when the line is
//! not JSON. With `--truncate N`, each line is instead a JSON string whose text is truncated to N
//! UTF-16 units, and the output is the truncated text as a JSON string.

use devtools_mcp_edge::render::{render, truncate, OutputFormat};
use devtools_mcp_edge::value::{parse, write_json_string};
use std::io::{self, BufRead, BufWriter, Write};

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let truncate_to = match args.as_slice() {
        [] => None,
        [flag, n] if flag == "--truncate" => Some(n.parse::<usize>().map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("--truncate {n}: {e}"))
        })?),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "usage: render_oracle [--truncate N] < documents.ndjson",
            ))
        }
    };
    let stdin = io::stdin().lock();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut line_out = String::new();
    for line in stdin.lines() {
        let line = line?;
        line_out.clear();
        match (parse(&line), truncate_to) {
            (Err(e), _) => {
                line_out.push_str("{\"error\":");
                write_json_string(&e.to_string(), &mut line_out);
                line_out.push('}');
            }
            (Ok(value), None) => {
                line_out.push('[');
                write_json_string(&render(&value, OutputFormat::Toon), &mut line_out);
                line_out.push(',');
                write_json_string(&render(&value, OutputFormat::Json), &mut line_out);
                line_out.push(']');
            }
            (Ok(value), Some(max)) => {
                let text = value.as_str().unwrap_or_default();
                write_json_string(&truncate(text, max, None).text, &mut line_out);
            }
        }
        line_out.push('\n');
        out.write_all(line_out.as_bytes())?;
    }
    out.flush()
}
