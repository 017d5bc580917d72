//! Host tests of artifacts and `artifact_read`: chunked round trips equal to the saved bytes,
//! ranged reads that never fetch a whole object, the one not-found text for another principal's,
//! unknown, malformed and expired ids, retention (clamps, read-time enforcement from the stored
//! creation time), store failures (a null artifact and one log line) and the id format. The
//! truncation path is in tests/it/artifacts_truncation.rs.

use crate::common::artifacts::*;
use crate::common::protocol::*;
use base64::Engine as _;
use devtools_mcp_edge::artifacts::{
    ArtifactId, ArtifactSlot, Artifacts, NOT_FOUND, WRITE_WINDOW_MS,
};
use devtools_mcp_edge::auth::Principal;
use devtools_mcp_edge::config::Config;
use devtools_mcp_edge::ports::fake::FakeEnv;
use devtools_mcp_edge::ports::{ArtifactMeta, ArtifactStore, Ports};
use devtools_mcp_edge::server::Server;
use futures::executor::block_on;
use serde_json::{json, Value as Json};

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
    let server = artifact_server(&[]);
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
    let artifacts = Artifacts::new(env.call_ports(), config.tools.artifact_retention_seconds);
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
    let server = artifact_server(&[]);
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
    let server = artifact_server(&[]);
    let ports = env.ports();
    // The owner reads it.
    assert_eq!(
        read_all(&server, ports, TOKEN, id.as_str(), 65_536),
        b"{\"secret\":1}"
    );
    let unknown = ArtifactId::from_random_bytes([7; 16]);
    // Past the window in which a missing artifact may still be being written (within it, a
    // missing id waits for its write, whoever asks: the artifacts module's tests).
    env.clock.advance(WRITE_WINDOW_MS);
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
        assert_eq!(config.tools.artifact_retention_seconds, want, "{given:?}");
    }
    let env = FakeEnv::new();
    let ports = env.ports();
    let config = Config::default();
    let id = save(ports, &config, "ci", b"[1,2,3]".to_vec());
    let hour = artifact_server(&[]);
    let short = artifact_server(&[("STREAMING_ARTIFACT_RETENTION_SECONDS", "300")]);
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
    let artifacts = Artifacts::new(env.call_ports(), config.tools.artifact_retention_seconds);
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
fn ids_are_distinct_uuids() {
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
        assert!(is_artifact_uuid(id), "{id}");
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
    let mut slot = ArtifactSlot::new(
        Artifacts::new(env.call_ports(), config.tools.artifact_retention_seconds),
        &ci,
    );
    assert_eq!(slot.saved(), None);
    // The whole JSON `[1]` in one piece.
    let one = |out: &mut String| {
        out.push_str("[1]");
        false
    };
    let first = block_on(slot.save_pieces(3, one)).unwrap();
    let second = block_on(slot.save_pieces(3, |_| panic!("serialized twice"))).unwrap();
    assert_eq!(first, second);
    assert_eq!(env.artifacts.keys().len(), 1);

    env.artifacts.failing.set(true);
    let mut slot = ArtifactSlot::new(
        Artifacts::new(env.call_ports(), config.tools.artifact_retention_seconds),
        &ci,
    );
    assert_eq!(block_on(slot.save_pieces(3, one)), None);
    assert_eq!(slot.saved(), Some(None));
    assert_eq!(
        block_on(slot.save_pieces(3, |_| panic!("saved twice"))),
        None
    );
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
        &artifact_server(&[]),
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

#[test]
fn artifact_read_is_listed_without_an_output_schema_whatever_the_flag() {
    for flag in ["false", "true"] {
        let server = artifact_server(&[("MCP_STRUCTURED_OUTPUT", flag)]);
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
