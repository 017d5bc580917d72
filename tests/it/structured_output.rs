//! Host tests of the structured-output contracts with `MCP_STRUCTURED_OUTPUT` on: which tools
//! advertise a schema, the envelopes of the six schema tools (the examples of
//! docs/structured-output.md verbatim), their agreement with the text, conformance to the
//! advertised schemas, errors, and how a server defect (a schema tool without a value) surfaces.

use crate::common::protocol::TOKEN;
use crate::common::structured::*;
use devtools_mcp_edge::mcp::{CallToolResult, ToolDescriptor};
use devtools_mcp_edge::structured::Contract;
use devtools_mcp_edge::tools::{Access, Registry, ToolContext, ToolError, ToolSpec, TypedTool};
use serde_json::{json, Value as Json};

#[test]
fn exactly_the_six_read_tools_advertise_an_output_schema() {
    let listed: Json = serde_json::from_str(&list(&flagged_server(true, &[]))).unwrap();
    let tools = listed["result"]["tools"].as_array().unwrap();
    let with: Vec<&str> = tools
        .iter()
        .filter(|t| t.get("outputSchema").is_some())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut expected = schema_tools();
    expected.sort_unstable();
    let mut got = with.clone();
    got.sort_unstable();
    assert_eq!(got, expected);
    for tool in tools {
        if let Some(schema) = tool.get("outputSchema") {
            assert_eq!(schema["type"], "object");
            assert!(schema.get("$schema").is_none());
            assert!(schema["properties"]["data"].get("type").is_none());
            // The server's own validator enforces every keyword the schemas use.
            assert_eq!(
                devtools_mcp_edge::tools::schema::unsupported_keywords(schema),
                Vec::<String>::new()
            );
        }
    }
    let off: Json = serde_json::from_str(&list(&flagged_server(false, &[]))).unwrap();
    assert!(!off.to_string().contains("outputSchema"));
    // 2025-03-26 results carry no structuredContent, so its tools/list promises no schema.
    let body = crate::common::protocol::request(1, "tools/list", json!({}));
    let old = crate::common::protocol::send(
        &flagged_server(true, &[]),
        crate::common::protocol::post(&body.to_string(), &[("MCP-Protocol-Version", "2025-03-26")]),
    );
    assert_eq!(old.status, 200);
    let old = String::from_utf8_lossy(&old.body);
    assert!(old.contains("github_list_workflow_runs") && !old.contains("outputSchema"));
}

#[test]
fn paged_examples_from_the_issue() {
    let server = flagged_server(true, &[]);
    let args = json!({"owner": "o", "repo": "r", "outputFormat": "json"});
    let empty = env(|_| json_answer(r#"{"total_count":0,"workflow_runs":[]}"#));
    let reply = call(&server, &empty, "github_list_workflow_runs", args.clone());
    assert_eq!(
        conforming(&server, "github_list_workflow_runs", &reply),
        &json!({"data": {"total_count": 0, "workflow_runs": []}, "nextPage": null})
    );
    let one = env(|_| json_answer(&runs_body(&[run(30433642, 0)])));
    let mut projected = args.clone();
    projected["jq"] = json!("workflow_runs[*].id");
    let reply = call(&server, &one, "github_list_workflow_runs", projected);
    assert_eq!(
        conforming(&server, "github_list_workflow_runs", &reply),
        &json!({"data": [30433642], "nextPage": null})
    );
    let more = env(|_| {
        answer(
            200,
            "application/json",
            &runs_body(&[run(1, 0)]),
            &[(
                "Link",
                r#"<https://gh.test/repositories/1/actions/runs?per_page=1&page=2>; rel="next", <https://gh.test/repositories/1/actions/runs?per_page=1&page=9>; rel="last""#,
            )],
        )
    });
    let reply = call(&server, &more, "github_list_workflow_runs", args);
    let value = conforming(&server, "github_list_workflow_runs", &reply);
    assert_eq!(value["nextPage"], 2);
    // The text shows the same value; with JSON text and no cut, it parses to structuredContent.
    let text: Json = serde_json::from_str(reply.text()).unwrap();
    assert_eq!(&text, value);
}

#[test]
fn jobs_are_paged_too() {
    let server = flagged_server(true, &[]);
    let jobs = env(|_| {
        json_answer(r#"{"total_count":1,"jobs":[{"id":7,"name":"test","conclusion":"failure"}]}"#)
    });
    let reply = call(
        &server,
        &jobs,
        "github_list_workflow_jobs",
        json!({"owner": "o", "repo": "r", "runId": 5}),
    );
    let value = conforming(&server, "github_list_workflow_jobs", &reply);
    assert_eq!(value["data"]["jobs"][0]["id"], 7);
    assert_eq!(value["nextPage"], Json::Null);
    // TOON text by default: the text is unchanged by the flag and is not JSON.
    assert!(serde_json::from_str::<Json>(reply.text()).is_err());
    assert!(reply.text().contains("nextPage: null"), "{}", reply.text());
}

#[test]
fn circleci_reports_the_cache() {
    let server = flagged_server(true, &[]);
    let env = env(|_| json_answer(r#"{"name":"me","id":"u1","next_page_token":null}"#));
    let args = json!({"path": "/me", "outputFormat": "json"});
    let first = call(&server, &env, "circleci_get", args.clone());
    let value = conforming(&server, "circleci_get", &first).clone();
    assert_eq!(value["data"]["name"], "me");
    assert_eq!(value["cache"]["hit"], false);
    assert_eq!(value["cache"]["ageMs"], 0);
    assert_eq!(value["cache"]["fetchedAt"], "2026-01-01T00:00:00.000Z");
    assert_eq!(
        serde_json::from_str::<Json>(first.text()).unwrap(),
        value,
        "JSON text parses to structuredContent"
    );
    env.clock.advance(1_500);
    let second = call(&server, &env, "circleci_get", args);
    let value = conforming(&server, "circleci_get", &second);
    assert_eq!(
        value["cache"],
        json!({"hit": true, "ageMs": 1500, "fetchedAt": "2026-01-01T00:00:00.000Z"})
    );
    assert_eq!(serde_json::from_str::<Json>(second.text()).unwrap(), *value);
}

#[test]
fn atlassian_reads_wrap_the_bare_body() {
    let server = flagged_server(true, &[]);
    let env = env(|url| {
        if url.contains("/src/") {
            answer(200, "text/plain", "one line", &[])
        } else if url.contains("/diff/") {
            answer(200, "text/plain", "diff --git a/x b/x\n+added\n", &[])
        } else if url.contains("/watchers") {
            answer(204, "", "", &[])
        } else {
            json_answer(r#"{"key":"PROJ-1","fields":{"summary":"Fix it","points":2.50}}"#)
        }
    });
    // JSON body: the text is the bare body, equal to structuredContent.data.
    for (tool, path) in [
        ("jira_get", "/rest/api/3/issue/PROJ-1"),
        ("conf_get", "/wiki/api/v2/pages/1"),
        ("bb_get", "/repositories/w/r/pullrequests/1"),
    ] {
        let reply = call(
            &server,
            &env,
            tool,
            json!({"path": path, "outputFormat": "json"}),
        );
        let value = conforming(&server, tool, &reply);
        let text: Json = serde_json::from_str(reply.text()).unwrap();
        assert_eq!(as_js(&value["data"]), as_js(&text), "{tool}");
        assert_eq!(value.as_object().unwrap().len(), 1, "{tool}: only data");
        // Lossless: the literal as the upstream wrote it; the text prints it the JS way.
        assert_eq!(value["data"]["fields"]["points"].to_string(), "2.50");
        assert!(
            reply.text().contains("\"points\": 2.5\n"),
            "{}",
            reply.text()
        );
    }
    // A text endpoint: data is the body as a JSON string, the very string the text block shows
    // (quoted there, in TOON as in JSON, because it spans lines).
    for format in ["toon", "json"] {
        let diff = call(
            &server,
            &env,
            "bb_get",
            json!({"path": "/repositories/w/r/diff/a..b", "outputFormat": format}),
        );
        let value = conforming(&server, "bb_get", &diff);
        assert_eq!(value["data"], "diff --git a/x b/x\n+added\n");
        assert_eq!(
            serde_json::from_str::<Json>(diff.text()).unwrap(),
            value["data"]
        );
    }
    // A one-line text needs no quotes in TOON: the text block is the string itself.
    let raw = call(
        &server,
        &env,
        "bb_get",
        json!({"path": "/repositories/w/r/src/main/f"}),
    );
    assert_eq!(raw.text(), "one line");
    assert_eq!(conforming(&server, "bb_get", &raw)["data"], raw.text());
    // An empty 204.
    let empty = call(
        &server,
        &env,
        "jira_get",
        json!({"path": "/rest/api/3/issue/P-1/watchers"}),
    );
    assert_eq!(
        conforming(&server, "jira_get", &empty),
        &json!({"data": {}})
    );
}

#[test]
fn numbers_beyond_double_range_are_null_as_in_the_text() {
    let server = flagged_server(true, &[]);
    let env = env(|_| {
        json_answer(r#"{"big":1e400,"small":-1e999,"wide":123456789012345678901234567890}"#)
    });
    let reply = call(
        &server,
        &env,
        "jira_get",
        json!({"path": "/x", "outputFormat": "json"}),
    );
    let value = conforming(&server, "jira_get", &reply);
    let text: Json = serde_json::from_str(reply.text()).unwrap();
    assert_eq!(text["big"], Json::Null, "JSON.stringify(Infinity) is null");
    assert_eq!(as_js(&value["data"]), as_js(&text));
    // A finite number keeps every digit in structuredContent (the text rounds it to a double).
    assert_eq!(
        value["data"]["wide"].to_string(),
        "123456789012345678901234567890"
    );
    assert_eq!(text["wide"].to_string(), "1.2345678901234568e+29");
}

#[test]
fn write_verbs_and_other_tools_stay_text_only() {
    let server = flagged_server(true, &[]);
    let env = env(|_| json_answer(r#"{"id":"10001","key":"PROJ-2"}"#));
    for tool in ["jira_post", "conf_put", "bb_delete", "jira_patch"] {
        let path = match tool {
            "conf_put" => "/wiki/api/v2/pages/1",
            "bb_delete" => "/2.0/repositories/w/r/pullrequests/1/approve",
            _ => "/rest/api/3/issue",
        };
        let mut args = json!({"path": path});
        if tool != "bb_delete" {
            args["body"] = json!({"fields": {}});
        }
        let reply = call(&server, &env, tool, args);
        assert!(!reply.is_error(), "{}", reply.raw);
        assert!(reply.structured().is_none(), "{tool}: {}", reply.raw);
    }
}

#[test]
fn errors_carry_no_structured_content_and_the_same_meta() {
    let on = flagged_server(true, &[]);
    let off = flagged_server(false, &[]);
    let not_found = || env(|_| answer(404, "application/json", r#"{"message":"Not Found"}"#, &[]));
    for (tool, args) in [
        (
            "github_list_workflow_runs",
            json!({"owner": "o", "repo": "r"}),
        ),
        ("circleci_get", json!({"path": "/project/gh/o/r"})),
        ("jira_get", json!({"path": "/rest/api/3/issue/X-1"})),
        // Invalid arguments under 2025-06-18 are a JSON-RPC error, so use a tool-level one.
        ("bb_get", json!({"path": "/repositories/w/r", "jq": "[["})),
    ] {
        let a = call(&on, &not_found(), tool, args.clone());
        let b = call(&off, &not_found(), tool, args);
        if tool != "bb_get" {
            assert!(a.is_error(), "{tool}: {}", a.raw);
        }
        if a.is_error() {
            assert!(a.structured().is_none(), "{tool}: {}", a.raw);
            assert_eq!(a.raw, b.raw, "{tool}: an error is the same in both modes");
        }
        assert_eq!(a.result().get("_meta"), b.result().get("_meta"), "{tool}");
    }
}

/// A schema tool answering "some text" and, when given, this structured value (as JSON text):
/// without one, the defect the guard reports; with a wrong one, the defect only the harness's
/// schema check sees (the server does not validate values at run time).
struct Canned(ToolSpec, Option<&'static str>);

impl TypedTool for Canned {
    type Args = serde_json::Map<String, Json>;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(
        &self,
        _args: Self::Args,
        _call: ToolContext<'_>,
    ) -> Result<CallToolResult, ToolError> {
        let result = CallToolResult::text("some text");
        Ok(match self.1 {
            Some(json) => result.with_structured(
                devtools_mcp_edge::value::parse(json).expect("the literal parses"),
            ),
            None => result,
        })
    }
}

/// A registry of one [`Canned`] tool per `(name, contract, value)`.
fn canned(tools: &[(&str, Contract, Option<&'static str>)]) -> Registry {
    let mut registry = Registry::new();
    for (name, contract, value) in tools {
        registry
            .register(Box::new(Canned(
                ToolSpec {
                    descriptor: ToolDescriptor {
                        name: (*name).into(),
                        title: None,
                        description: "A defective schema tool.".into(),
                        input_schema: json!({"type": "object"}),
                        output_schema: Some(contract.output_schema()),
                        annotations: None,
                    },
                    access: Access::Rules,
                },
                *value,
            )))
            .unwrap();
    }
    registry
}

#[test]
fn a_schema_tool_without_a_value_surfaces_as_unavailable() {
    let registry = canned(&[
        ("forgets_paged", Contract::Paged, None),
        ("forgets_circleci", Contract::CircleCiRead, None),
        ("forgets_atlassian", Contract::AtlassianRead, None),
    ]);
    let on = flagged(true, &[]).registry(registry).build().server;
    let env = env(|_| json_answer("{}"));
    for name in ["forgets_paged", "forgets_circleci", "forgets_atlassian"] {
        let reply = call(&on, &env, name, json!({}));
        assert!(!reply.is_error());
        assert_eq!(reply.text(), "some text", "the text is untouched");
        assert_eq!(
            conforming(&on, name, &reply),
            &json!({"data": null, "incomplete": {"reason": "unavailable", "bytes": 0, "limitBytes": 0, "artifactId": null}})
        );
    }
}

#[test]
#[should_panic(expected = "structuredContent does not conform to its outputSchema")]
fn every_call_checks_structured_content_against_the_advertised_schema() {
    // `nextPage` a string: the paged schema wants an integer or null.
    let registry = canned(&[(
        "mismatched",
        Contract::Paged,
        Some(r#"{"data":[],"nextPage":"two"}"#),
    )]);
    let on = flagged(true, &[]).registry(registry).build();
    // No explicit check here: the harness's call path validates every result it sees.
    on.call_as(TOKEN, "mismatched", json!({}));
}
