//! Host tests of artifacts and `artifact_read`: chunked round trips equal to the saved bytes,
//! ranged reads that never fetch a whole object, the one not-found text for another principal's,
//! unknown, malformed and expired ids, retention (clamps, read-time enforcement from the stored
//! creation time), store failures (a null artifact and one log line), id format, and the
//! truncation path (one artifact per call, named in the guidance block).

mod ci_common;
mod protocol_common;

use base64::Engine as _;
use ci_common::{json_response, settings};
use devtools_mcp_edge::artifacts::{ArtifactId, ArtifactSlot, Artifacts, NOT_FOUND};
use devtools_mcp_edge::auth::Principal;
use devtools_mcp_edge::config::Config;
use devtools_mcp_edge::ports::fake::{FakeEnv, MemoryArtifacts, ScriptedHttp};
use devtools_mcp_edge::ports::{ArtifactChunk, ArtifactMeta, ArtifactStore, Ports, StoreError};
use devtools_mcp_edge::registry;
use devtools_mcp_edge::render::ArtifactRef;
use devtools_mcp_edge::server::Server;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use protocol_common::*;
use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};

const READ: &str = "artifact_read";
const RUNS: &str = "github_list_workflow_runs";
const ALICE: &str = "alice-token-1-0123456789";

/// An artifact store that records every ranged read (offset, length asked, bytes returned) and
/// every head, over an in-memory store.
#[derive(Default)]
struct Counting {
    inner: MemoryArtifacts,
    ranges: RefCell<Vec<(u64, u64, usize)>>,
    heads: Cell<usize>,
}

impl ArtifactStore for Counting {
    fn put<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        meta: ArtifactMeta,
    ) -> LocalBoxFuture<'a, Result<(), StoreError>> {
        self.inner.put(key, bytes, meta)
    }

    fn get_range<'a>(
        &'a self,
        key: &'a str,
        offset: u64,
        length: u64,
    ) -> LocalBoxFuture<'a, Result<Option<ArtifactChunk>, StoreError>> {
        Box::pin(async move {
            let chunk = self.inner.get_range(key, offset, length).await?;
            let got = chunk.as_ref().map_or(0, |c| c.bytes.len());
            self.ranges.borrow_mut().push((offset, length, got));
            Ok(chunk)
        })
    }

    fn head<'a>(
        &'a self,
        key: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<ArtifactMeta>, StoreError>> {
        self.heads.set(self.heads.get() + 1);
        self.inner.head(key)
    }
}

/// What `tools/call` answered: the first text block, `isError`, and the whole result.
struct Reply {
    text: String,
    is_error: bool,
    result: Json,
}

fn call_with(server: &Server, ports: Ports<'_>, token: &str, name: &str, args: Json) -> Reply {
    let body = request(
        1,
        "tools/call",
        json!({"name": name, "arguments": args, "_meta": meta_2026()}),
    );
    let auth = format!("Bearer {token}");
    let mut headers = headers_2026("tools/call", Some(name));
    headers.push(("Authorization", auth.as_str()));
    let response = block_on(server.handle(post(&body.to_string(), &headers), ports));
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let result = body_json(&response)["result"].clone();
    assert!(result.is_object(), "not a result: {result}");
    Reply {
        text: result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        is_error: result["isError"].as_bool().unwrap_or(false),
        result,
    }
}

/// A server with the production registry, GitHub configured, and `extra` settings.
fn server(extra: &[(&str, &str)]) -> Server {
    Server::with_registry(&settings_fn(settings(extra)), registry::production())
}

/// One `artifact_read` chunk, parsed.
fn read(server: &Server, ports: Ports<'_>, token: &str, args: Json) -> Json {
    let reply = call_with(server, ports, token, READ, args);
    assert!(!reply.is_error, "artifact_read failed: {}", reply.text);
    assert!(reply.result.get("structuredContent").is_none());
    serde_json::from_str(&reply.text).unwrap_or_else(|e| panic!("{e}: {}", reply.text))
}

/// Reads artifact `id` whole, `max_bytes` at a time, checking each chunk's bookkeeping.
fn read_all(server: &Server, ports: Ports<'_>, token: &str, id: &str, max_bytes: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let page = read(
            server,
            ports,
            token,
            json!({"artifactId": id, "offset": offset, "maxBytes": max_bytes}),
        );
        let keys: Vec<&str> = page
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "artifactId",
                "offset",
                "nextOffset",
                "totalBytes",
                "eof",
                "encoding",
                "data"
            ]
        );
        assert_eq!(page["artifactId"], id);
        assert_eq!(page["offset"], offset);
        assert_eq!(page["encoding"], "base64");
        let data = base64::engine::general_purpose::STANDARD
            .decode(page["data"].as_str().unwrap())
            .unwrap();
        assert!(data.len() as u64 <= max_bytes);
        out.extend_from_slice(&data);
        let next = page["nextOffset"].as_u64().unwrap();
        assert_eq!(next, offset + data.len() as u64);
        assert_eq!(page["eof"], next == page["totalBytes"].as_u64().unwrap());
        if page["eof"] == true {
            assert_eq!(out.len() as u64, page["totalBytes"].as_u64().unwrap());
            return out;
        }
        assert!(!data.is_empty(), "a chunk before the end is never empty");
        offset = next;
    }
}

/// Bytes that are not UTF-8 and not JSON: artifacts are bytes.
fn noise(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7919 % 251) as u8).collect()
}

fn save(ports: Ports<'_>, config: &Config, owner: &str, bytes: Vec<u8>) -> ArtifactId {
    block_on(Artifacts::new(ports, config).save(
        &Principal::named(owner),
        bytes,
        "application/json",
    ))
    .expect("the in-memory store accepts the artifact")
}

fn is_uuid_v4(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            14 => *c == b'4',
            19 => matches!(c, b'8' | b'9' | b'a' | b'b'),
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
}

#[test]
fn chunks_read_back_equal_the_saved_bytes_without_fetching_whole_objects() {
    let env = FakeEnv::new();
    let store = Counting::default();
    let ports = Ports {
        artifacts: &store,
        ..env.ports()
    };
    let config = Config::default();
    let bytes = noise(200_003);
    let id = save(ports, &config, "ci", bytes.clone());
    let server = server(&[]);
    for max_bytes in [65_536, 70_000, 1, 200_003, 1_048_576] {
        store.ranges.borrow_mut().clear();
        let small = bytes.len().min(40);
        let want = if max_bytes == 1 {
            &bytes[..small]
        } else {
            &bytes[..]
        };
        let got = if max_bytes == 1 {
            // Byte by byte through the whole artifact would be 200k calls: read the start only.
            (0..small as u64)
                .map(|offset| {
                    let page = read(
                        &server,
                        ports,
                        TOKEN,
                        json!({"artifactId": id.as_str(), "offset": offset, "maxBytes": 1}),
                    );
                    base64::engine::general_purpose::STANDARD
                        .decode(page["data"].as_str().unwrap())
                        .unwrap()[0]
                })
                .collect()
        } else {
            read_all(&server, ports, TOKEN, id.as_str(), max_bytes)
        };
        assert_eq!(got, want, "maxBytes {max_bytes}");
        // Every call is one ranged get of exactly the chunk asked for, never a whole object
        // (unless the chunk covers it), and nothing is fetched twice.
        let ranges = store.ranges.borrow();
        let fetched: usize = ranges.iter().map(|r| r.2).sum();
        assert_eq!(fetched, want.len(), "maxBytes {max_bytes}: {ranges:?}");
        for &(_, length, got) in ranges.iter() {
            assert_eq!(length, max_bytes);
            assert!(got as u64 <= length);
        }
    }
    assert_eq!(
        store.heads.get(),
        0,
        "reads need no separate metadata round trip"
    );
}

#[test]
fn the_api_reports_offsets_sizes_and_the_end() {
    let env = FakeEnv::new();
    let config = Config::default();
    let id = save(env.ports(), &config, "ci", b"0123456789".to_vec());
    let artifacts = Artifacts::new(env.ports(), &config);
    let ci = Principal::named("ci");
    let chunk = block_on(artifacts.read(&ci, id.as_str(), 4, 4)).unwrap();
    assert_eq!(
        (
            chunk.offset,
            chunk.next_offset,
            chunk.total_bytes,
            chunk.eof
        ),
        (4, 8, 10, false)
    );
    assert_eq!(chunk.bytes, b"4567");
    assert_eq!(chunk.content_type, "application/json");
    let last = block_on(artifacts.read(&ci, id.as_str(), 8, 4)).unwrap();
    assert_eq!((last.bytes.as_slice(), last.eof), (&b"89"[..], true));
    let end = block_on(artifacts.read(&ci, id.as_str(), 10, 4)).unwrap();
    assert_eq!((end.bytes.len(), end.next_offset, end.eof), (0, 10, true));
    let past = block_on(artifacts.read(&ci, id.as_str(), 11, 4)).unwrap_err();
    assert_eq!(
        past.to_string(),
        "offset 11 is past the end of the artifact (10 bytes): read from an offset between 0 \
         and 10"
    );
    // An empty artifact is one empty, final chunk.
    let empty = save(env.ports(), &config, "ci", Vec::new());
    let chunk = block_on(artifacts.read(&ci, empty.as_str(), 0, 65_536)).unwrap();
    assert_eq!((chunk.total_bytes, chunk.eof), (0, true));
}

#[test]
fn offsets_and_chunk_sizes_through_the_tool() {
    let env = FakeEnv::new();
    let config = Config::default();
    let big = noise(1_048_576 + 1_000);
    let id = save(env.ports(), &config, "ci", big.clone());
    let server = server(&[]);
    let ports = env.ports();
    let chunk = |args: Json| read(&server, ports, TOKEN, args);
    // maxBytes defaults to 65536 and is clamped into 1..1048576, never refused.
    let cases = [
        (json!({"artifactId": id.as_str()}), 0, 65_536),
        (json!({"artifactId": id.as_str(), "maxBytes": 0}), 0, 1),
        (json!({"artifactId": id.as_str(), "maxBytes": -5}), 0, 1),
        (
            json!({"artifactId": id.as_str(), "maxBytes": 5_000_000}),
            0,
            1_048_576,
        ),
        (
            json!({"artifactId": id.as_str(), "maxBytes": 1e30}),
            0,
            1_048_576,
        ),
        (
            json!({"artifactId": id.as_str(), "offset": 3.0, "maxBytes": 2.0}),
            3,
            2,
        ),
        (
            json!({"artifactId": id.as_str(), "offset": 1_048_576}),
            1_048_576,
            1_000,
        ),
    ];
    for (args, offset, len) in cases {
        let page = chunk(args.clone());
        let data = base64::engine::general_purpose::STANDARD
            .decode(page["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(data, big[offset..offset + len], "{args}");
        assert_eq!(page["totalBytes"], big.len());
    }
    let end = chunk(json!({"artifactId": id.as_str(), "offset": big.len()}));
    assert_eq!(
        (end["data"].as_str(), end["eof"].as_bool()),
        (Some(""), Some(true))
    );
    let past = call_with(
        &server,
        ports,
        TOKEN,
        READ,
        json!({"artifactId": id.as_str(), "offset": big.len() + 1}),
    );
    assert!(past.is_error);
    assert!(past.text.contains("past the end"), "{}", past.text);
    for bad in [
        json!({"artifactId": id.as_str(), "offset": -1}),
        json!({"artifactId": id.as_str(), "offset": 1.5}),
        json!({"artifactId": 7}),
        json!({}),
        json!({"artifactId": id.as_str(), "extra": true}),
    ] {
        let reply = call_with(&server, ports, TOKEN, READ, bad.clone());
        assert!(reply.is_error, "{bad}: {}", reply.text);
        assert!(
            reply.text.contains("Invalid arguments"),
            "{bad}: {}",
            reply.text
        );
    }
}

#[test]
fn unreadable_artifacts_all_answer_the_same_text() {
    let env = FakeEnv::new();
    let config = Config::default();
    let id = save(env.ports(), &config, "ci", b"{\"secret\":1}".to_vec());
    let server = server(&[]);
    let ports = env.ports();
    // The owner reads it.
    assert_eq!(
        read_all(&server, ports, TOKEN, id.as_str(), 65_536),
        b"{\"secret\":1}"
    );
    let unknown = ArtifactId::from_random_bytes([7; 16]);
    let cases = [
        (ALICE, id.as_str().to_owned(), "another principal"),
        (TOKEN, unknown.as_str().to_owned(), "an unknown id"),
        (TOKEN, id.as_str().to_uppercase(), "the id in upper case"),
        (TOKEN, format!("{{{id}}}"), "the id in braces"),
        (
            TOKEN,
            id.as_str().replace('-', ""),
            "the id without hyphens",
        ),
        (TOKEN, "../../artifacts".to_owned(), "a path"),
        (TOKEN, String::new(), "an empty id"),
    ];
    for (token, artifact_id, what) in cases {
        let reply = call_with(
            &server,
            ports,
            token,
            READ,
            json!({"artifactId": artifact_id}),
        );
        assert!(reply.is_error, "{what}");
        assert_eq!(reply.text, NOT_FOUND, "{what}");
        assert!(reply.result.get("structuredContent").is_none(), "{what}");
    }
    // Expired: the same text, once the retention has passed since creation.
    env.clock.advance(3_600_000);
    let reply = call_with(
        &server,
        ports,
        TOKEN,
        READ,
        json!({"artifactId": id.as_str()}),
    );
    assert_eq!((reply.is_error, reply.text.as_str()), (true, NOT_FOUND));
}

#[test]
fn retention_is_clamped_and_enforced_from_the_creation_time() {
    let clamps = [
        (None, 3_600),
        (Some("1"), 300),
        (Some("-20"), 300),
        (Some("86400"), 86_400),
        (Some("99999999"), 604_800),
    ];
    for (given, want) in clamps {
        let pairs: Vec<(String, String)> = given
            .map(|v| {
                vec![(
                    "STREAMING_ARTIFACT_RETENTION_SECONDS".to_owned(),
                    v.to_owned(),
                )]
            })
            .unwrap_or_default();
        let config = Config::from_settings(&settings_fn(pairs)).unwrap();
        assert_eq!(config.artifact_retention_seconds, want, "{given:?}");
    }
    let env = FakeEnv::new();
    let ports = env.ports();
    let config = Config::default();
    let id = save(ports, &config, "ci", b"[1,2,3]".to_vec());
    let hour = server(&[]);
    let short = server(&[("STREAMING_ARTIFACT_RETENTION_SECONDS", "300")]);
    let readable = |server: &Server| {
        !call_with(
            server,
            ports,
            TOKEN,
            READ,
            json!({"artifactId": id.as_str()}),
        )
        .is_error
    };
    env.clock.advance(299_999);
    assert!(readable(&short) && readable(&hour));
    // The retention in force now counts from the stored creation time, whatever the artifact
    // was saved under.
    env.clock.advance(1);
    assert!(!readable(&short));
    assert!(readable(&hour));
    env.clock.advance(3_600_000 - 300_000 - 1);
    assert!(readable(&hour));
    env.clock.advance(1);
    assert!(!readable(&hour));
}

#[test]
fn the_stored_metadata_names_owner_and_times_but_not_the_principal() {
    let env = FakeEnv::new();
    let config = Config::default();
    let id = save(env.ports(), &config, "ci", b"{}".to_vec());
    let keys = env.artifacts.keys();
    assert_eq!(keys.len(), 1);
    assert!(keys[0].starts_with("artifacts/v1/"), "{}", keys[0]);
    assert!(keys[0].ends_with(&format!("/{id}")), "{}", keys[0]);
    let meta = block_on(env.artifacts.head(&keys[0])).unwrap().unwrap();
    assert_eq!(meta.content_type, "application/json");
    let names: Vec<&str> = meta.custom.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["owner", "createdAt", "expiresAt"]);
    let created: u64 = meta.custom[1].1.parse().unwrap();
    let expires: u64 = meta.custom[2].1.parse().unwrap();
    assert_eq!(created, 1_767_225_600_000);
    assert_eq!(expires - created, 3_600_000);
    for (_, v) in &meta.custom {
        assert_ne!(v, "ci");
    }
    assert!(!keys[0].contains("/ci/"));
}

#[test]
fn metadata_is_checked_on_every_read_not_only_the_key() {
    let env = FakeEnv::new();
    let config = Config::default();
    let id = save(env.ports(), &config, "ci", b"{}".to_vec());
    let key = env.artifacts.keys().remove(0);
    let meta = block_on(env.artifacts.head(&key)).unwrap().unwrap();
    let ci = Principal::named("ci");
    let artifacts = Artifacts::new(env.ports(), &config);
    let rewrite = |custom: Vec<(String, String)>| {
        let meta = ArtifactMeta {
            custom,
            ..meta.clone()
        };
        block_on(env.artifacts.put(&key, b"{}".to_vec(), meta)).unwrap();
    };
    let with = |name: &str, value: Option<&str>| -> Vec<(String, String)> {
        meta.custom
            .iter()
            .filter_map(|(k, v)| match (k == name, value) {
                (false, _) => Some((k.clone(), v.clone())),
                (true, Some(new)) => Some((k.clone(), new.to_owned())),
                (true, None) => None,
            })
            .collect()
    };
    let owner = &meta.custom[0].1;
    // Same key prefix, another owner's digest (a 64-bit prefix collision): refused.
    let forged = format!("{}{}", &owner[..16], "0".repeat(48));
    let cases = [
        with("owner", Some(&forged)),
        with("owner", None),
        with("createdAt", None),
        with("createdAt", Some("soon")),
        with("createdAt", Some("1767225600000.5")),
    ];
    for custom in cases {
        rewrite(custom.clone());
        let err = block_on(artifacts.read(&ci, id.as_str(), 0, 10)).unwrap_err();
        assert_eq!(err.to_string(), NOT_FOUND, "{custom:?}");
    }
    rewrite(meta.custom.clone());
    assert!(block_on(artifacts.read(&ci, id.as_str(), 0, 10)).is_ok());
}

#[test]
fn ids_are_distinct_uuid_v4() {
    let env = FakeEnv::new();
    let config = Config::default();
    let mut ids: Vec<String> = (0..200)
        .map(|_| {
            save(env.ports(), &config, "ci", Vec::new())
                .as_str()
                .to_owned()
        })
        .collect();
    for id in &ids {
        assert!(is_uuid_v4(id), "{id}");
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 200);
}

#[test]
fn one_artifact_per_call_and_a_failed_save_is_logged_once() {
    let env = FakeEnv::new();
    let config = Config::default();
    let ci = Principal::named("ci");
    let mut slot = ArtifactSlot::new(Artifacts::new(env.ports(), &config), &ci);
    assert_eq!(slot.saved(), None);
    let first = block_on(slot.save(|| b"[1]".to_vec())).unwrap();
    let second = block_on(slot.save(|| panic!("serialized twice"))).unwrap();
    assert_eq!(first, second);
    assert_eq!(env.artifacts.keys().len(), 1);

    env.artifacts.failing.set(true);
    let mut slot = ArtifactSlot::new(Artifacts::new(env.ports(), &config), &ci);
    assert_eq!(block_on(slot.save(|| b"[1]".to_vec())), None);
    assert_eq!(slot.saved(), Some(None));
    assert_eq!(block_on(slot.save(|| panic!("saved twice"))), None);
    let lines = env.log.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line: Json = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(line["event"], "artifact_save_failed");
    assert_eq!(line["level"], "warn");
    assert_eq!(line["bytes"], 3);
}

#[test]
fn store_failures_on_read_are_reported_and_logged() {
    let env = FakeEnv::new();
    let config = Config::default();
    let id = save(env.ports(), &config, "ci", b"{}".to_vec());
    env.artifacts.failing.set(true);
    let reply = call_with(
        &server(&[]),
        env.ports(),
        TOKEN,
        READ,
        json!({"artifactId": id.as_str()}),
    );
    assert!(reply.is_error);
    assert_eq!(
        reply.text,
        "The artifact store is unavailable; try again shortly."
    );
    let events: Vec<Json> = env
        .log
        .lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events.iter().any(|e| e["event"] == "artifact_read_failed"),
        "{events:?}"
    );
}

/// A runs page of `n` runs, as compact JSON (the artifact must reproduce it byte for byte).
fn runs_body(n: usize) -> String {
    let runs: Vec<Json> = (0..n)
        .map(|i| json!({"id": 30433642 + i, "name": "CI build with a long name", "status": "completed"}))
        .collect();
    json!({"total_count": n, "workflow_runs": runs}).to_string()
}

fn runs_env(body: String) -> FakeEnv {
    FakeEnv::with_http(ScriptedHttp::new(move |_| {
        Ok(json_response(200, &body, &[]))
    }))
}

#[test]
fn truncated_text_names_one_artifact_holding_the_full_value() {
    let body = runs_body(400);
    let env = runs_env(body.clone());
    let server = server(&[("MCP_TEXT_MAX_CHARS", "1000")]);
    let ports = env.ports();
    for format in ["toon", "json"] {
        let before = env.artifacts.keys();
        let reply = call_with(
            &server,
            ports,
            TOKEN,
            RUNS,
            json!({"owner": "o", "repo": "r", "outputFormat": format}),
        );
        assert!(!reply.is_error, "{}", reply.text);
        let after = env.artifacts.keys();
        assert_eq!(after.len(), before.len() + 1, "one artifact per call");
        let key = after.iter().find(|k| !before.contains(k)).unwrap();
        let id = key.rsplit('/').next().unwrap();
        assert!(is_uuid_v4(id));
        let line = ArtifactRef { id: id.to_owned() }.guidance_line();
        assert!(
            reply.text.contains(&format!(
                "**To access the complete data:**\n{line}\n- Consider"
            )),
            "{}",
            reply.text
        );
        // The artifact is the value the text was rendered from: the {data, nextPage} envelope.
        let whole = read_all(&server, ports, TOKEN, id, 4_096);
        assert_eq!(
            String::from_utf8(whole).unwrap(),
            format!("{{\"data\":{body},\"nextPage\":null}}")
        );
        // Only its owner can read it.
        let other = call_with(&server, ports, ALICE, READ, json!({"artifactId": id}));
        assert_eq!((other.is_error, other.text.as_str()), (true, NOT_FOUND));
    }
}

#[test]
fn untruncated_results_save_nothing_and_a_failed_save_still_answers() {
    let env = runs_env(runs_body(2));
    let server = server(&[("MCP_TEXT_MAX_CHARS", "1000")]);
    let reply = call_with(
        &server,
        env.ports(),
        TOKEN,
        RUNS,
        json!({"owner": "o", "repo": "r"}),
    );
    assert!(!reply.is_error && !reply.text.contains("Truncated"));
    assert!(env.artifacts.keys().is_empty());

    let env = runs_env(runs_body(400));
    env.artifacts.failing.set(true);
    let reply = call_with(
        &server,
        env.ports(),
        TOKEN,
        RUNS,
        json!({"owner": "o", "repo": "r"}),
    );
    assert!(!reply.is_error);
    assert!(reply.text.contains("## Response Truncated"));
    assert!(
        reply
            .text
            .contains("**To access the complete data:**\n- Consider refining"),
        "no artifact line when saving failed: {}",
        reply.text
    );
    let failures: Vec<String> = env
        .log
        .lines()
        .into_iter()
        .filter(|l| l.contains("artifact_save_failed"))
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
}

#[test]
fn artifact_read_is_listed_without_an_output_schema_whatever_the_flag() {
    for flag in ["false", "true"] {
        let server = server(&[("MCP_STRUCTURED_OUTPUT", flag)]);
        let env = FakeEnv::new();
        let body = request(1, "tools/list", json!({"_meta": meta_2026()}));
        let response = block_on(server.handle(
            post(&body.to_string(), &headers_2026("tools/list", None)),
            env.ports(),
        ));
        let tools = body_json(&response)["result"]["tools"].clone();
        let tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == READ)
            .unwrap_or_else(|| panic!("artifact_read is listed with the flag {flag}: {tools}"))
            .clone();
        assert!(tool.get("outputSchema").is_none(), "{tool}");
        assert_eq!(tool["inputSchema"]["required"], json!(["artifactId"]));
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
    }
}
