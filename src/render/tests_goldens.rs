//! The renderers and truncation against text recorded from the reference servers themselves
//! (`tests/golden/atlassian/*.json`, docs/parity.md): every golden case that renders a JSON body
//! as it came (success status, JSON content type, no `jq`) must give the recorded text byte for
//! byte, except the reference's line naming its local raw-response file, which ours leaves out.

use crate::render::{render, truncate, OutputFormat, DEFAULT_MAX_UNITS};
use crate::value::{parse, Value};
use std::path::Path;

const GOLDEN_DIR: &str = "tests/golden/atlassian";
const SAVED_AT: &str = "\n- The full raw API response is saved at: `";

/// The recorded text without the reference's saved-at line.
fn without_saved_at(text: &str) -> String {
    match text.find(SAVED_AT) {
        Some(start) => {
            let end = text[start + 1..]
                .find('\n')
                .map_or(text.len(), |i| start + 1 + i);
            format!("{}{}", &text[..start], &text[end..])
        }
        None => text.to_owned(),
    }
}

fn str_at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(v, |v, key| v.get(key))
        .and_then(Value::as_str)
}

#[test]
fn passthrough_renderings_match_the_reference_servers() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for vendor in ["jira", "confluence", "bitbucket"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(GOLDEN_DIR)
            .join(format!("{vendor}.json"));
        let text = std::fs::read_to_string(&path).expect("golden file is readable");
        let Ok(Value::Array(cases)) = parse(&text) else {
            panic!("{} is not a JSON array", path.display());
        };
        for case in &cases {
            let name = str_at(case, &["name"]).unwrap_or("?");
            let Some(upstream) = case.get("upstream") else {
                continue;
            };
            let status = match upstream.get("status") {
                Some(Value::Number(n)) => n.as_f64(),
                _ => continue,
            };
            let content_type = str_at(upstream, &["headers", "content-type"]).unwrap_or("");
            let has_jq = case.get("args").and_then(|a| a.get("jq")).is_some();
            if !(200.0..300.0).contains(&status) || !content_type.contains("json") || has_jq {
                continue;
            }
            let Some(Ok(body)) = str_at(upstream, &["body"]).map(parse) else {
                continue;
            };
            let format = OutputFormat::from_arg(str_at(case, &["args", "outputFormat"]))
                .expect("golden outputFormat is toon or json");
            let Some(expected) = str_at(case, &["result", "text"]) else {
                panic!("{vendor} {name}: no result text");
            };
            let rendered = render(&body, format);
            let got = truncate(&rendered, DEFAULT_MAX_UNITS, None).text;
            let expected = without_saved_at(expected);
            compared += 1;
            if got != expected {
                let at = got
                    .bytes()
                    .zip(expected.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(expected.len()));
                failures.push(format!(
                    "{vendor} {name}: differs at byte {at}\n  expected: {:?}\n  got:      {:?}",
                    expected.get(at.saturating_sub(40)..(at + 40).min(expected.len())),
                    got.get(at.saturating_sub(40)..(at + 40).min(got.len()))
                ));
            }
        }
    }
    println!("{compared} golden cases compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 45 cases qualify today; far fewer means the golden layout changed under this test.
    assert!(compared >= 30, "only {compared} golden cases compared");
}
