//! Render throughput in workerd: a bare wasm module (no wasm-bindgen) that bench/render.mjs
//! loads into a benchmark worker, and that bench/stages.mjs loads into Node to time each stage of
//! a large tool result's output path by itself, as V8 runs the worker's code.
//!
//! The host copies a JSON document into the buffer from [`bench_input`], calls [`bench_load`] to
//! parse it, then [`bench_render`] to render it `runs` times; the time of each call is measured
//! from outside, since a worker's clock stands still while it computes. For the stages, it calls
//! [`stages_load`] instead (`whole` = 1: the body becomes `{data, nextPage}` as a GitHub list's
//! envelope; 0: the body itself, as an Atlassian read), then [`stages_run`].

use devtools_mcp_edge::jsonrpc::{Id, Response};
use devtools_mcp_edge::mcp::{CallToolResult, ProtocolVersion};
use devtools_mcp_edge::projection::jq::JqProgram;
use devtools_mcp_edge::projection::{Limits, Projection};
use devtools_mcp_edge::render::{self, render, OutputFormat, DEFAULT_MAX_UNITS};
use devtools_mcp_edge::server::call_reply;
use devtools_mcp_edge::structured::{self, Envelope};
use devtools_mcp_edge::value::{parse_bytes, parse_owned, Map, Value};
use std::hint::black_box;
use std::sync::Mutex;

struct State {
    input: Vec<u8>,
    value: Option<Value>,
}

static STATE: Mutex<State> = Mutex::new(State {
    input: Vec::new(),
    value: None,
});

/// Makes a zeroed input buffer of `len` bytes and returns its address in linear memory.
#[no_mangle]
pub extern "C" fn bench_input(len: usize) -> *mut u8 {
    let Ok(mut state) = STATE.lock() else {
        return std::ptr::null_mut();
    };
    state.value = None;
    state.input = vec![0; len];
    state.input.as_mut_ptr()
}

/// Parses the input buffer; returns 1 when it is JSON, 0 otherwise.
#[no_mangle]
pub extern "C" fn bench_load() -> u32 {
    let Ok(mut state) = STATE.lock() else {
        return 0;
    };
    state.value = parse_bytes(&state.input).ok();
    u32::from(state.value.is_some())
}

/// Renders the parsed value `runs` times (format 0 = TOON, 1 = JSON) and returns the length of
/// the last rendering in bytes.
#[no_mangle]
pub extern "C" fn bench_render(format: u32, runs: u32) -> usize {
    let Ok(state) = STATE.lock() else {
        return 0;
    };
    let Some(value) = &state.value else {
        return 0;
    };
    let format = if format == 0 {
        OutputFormat::Toon
    } else {
        OutputFormat::Json
    };
    let mut len = 0;
    for _ in 0..runs {
        len = std::hint::black_box(render(value, format)).len();
    }
    len
}

/// What [`stages_load`] prepares from the input.
struct Stages {
    value: Value,
    /// The body alone, which a tool's `jq` argument applies to.
    body: Value,
    envelope: Envelope,
    /// The text a truncated result carries (cut at the default bound, guidance added).
    cut_text: String,
    /// The whole TOON rendering.
    whole_text: String,
}

static STAGES: Mutex<Option<Stages>> = Mutex::new(None);

/// Parses the input (as a GitHub list's envelope when `whole` is 1) and renders its texts; 1
/// when it is JSON.
#[no_mangle]
pub extern "C" fn stages_load(whole: u32) -> u32 {
    let (Ok(state), Ok(mut stages)) = (STATE.lock(), STAGES.lock()) else {
        return 0;
    };
    let Ok(body) = parse_bytes(&state.input) else {
        return 0;
    };
    let (value, envelope) = if whole == 1 {
        let mut map = Map::new();
        map.insert("data".into(), body.clone());
        map.insert("nextPage".into(), Value::Null);
        (Value::Object(map), Envelope::Whole)
    } else {
        (body.clone(), Envelope::DataOnly)
    };
    let (text, cut) = render::render_bounded(&value, OutputFormat::Toon, DEFAULT_MAX_UNITS);
    *stages = Some(Stages {
        cut_text: cut.map_or_else(|| text.clone(), |c| c.apply(&text, None)),
        whole_text: render(&value, OutputFormat::Toon),
        value,
        body,
        envelope,
    });
    1
}

/// The `jq` argument of bench/lib/tool-calls.mjs's headline case, which is JMESPath.
const JQ_ROWS: &str = "workflow_runs[*].{id: id, status: status, conclusion: conclusion}";

/// Runs stage `stage` `runs` times: 0 parse and drop, 1 clone and drop, 2 render_bounded TOON,
/// 3 render_bounded JSON, 4 whole TOON, 5 compact length, 6 artifact JSON, 7 null_non_finite
/// (on a clone), 8 reply of the cut text, 9 reply of the whole text, 10 reply with
/// structuredContent, 11 UTF-8 check of the input, 12 the jq program `length` on the body (its
/// input converted to jaq's values), 13 the headline case's JMESPath `jq` on the body, 14 parse
/// of a copy of the input (and drop), 15 the same with the text released as it is parsed (what
/// the worker does with a JSON body). Returns a length so nothing is optimized out.
#[no_mangle]
pub extern "C" fn stages_run(stage: u32, runs: u32) -> usize {
    let (Ok(state), Ok(stages)) = (STATE.lock(), STAGES.lock()) else {
        return 0;
    };
    let Some(Stages {
        value,
        body,
        envelope,
        cut_text,
        whole_text,
    }) = stages.as_ref()
    else {
        return 0;
    };
    // Compiled for their own stages only: a compile costs about as much as a small stage, and
    // every stage's time is that of this whole call.
    let jq_length = (stage == 12)
        .then(|| JqProgram::compile("length").ok())
        .flatten();
    let rows = (stage == 13).then(|| Projection::compile(JQ_ROWS));
    let limits = Limits::default();
    // As the server answers a tools/call: the result's text, then the response around it.
    let reply = |result: CallToolResult| {
        call_reply(result, ProtocolVersion::V2025_06_18).map_or(0, |r| {
            let mut out = Vec::new();
            let response = Response::success(Id::Number(1.into()), r);
            response.write_json(&mut out).map_or(0, |()| out.len())
        })
    };
    let mut out = 0;
    for _ in 0..runs {
        out = match stage {
            0 => usize::from(parse_bytes(black_box(&state.input)).is_ok()),
            1 => usize::from(black_box(value.clone()) != Value::Null),
            2 => render::render_bounded(value, OutputFormat::Toon, DEFAULT_MAX_UNITS)
                .0
                .len(),
            3 => render::render_bounded(value, OutputFormat::Json, DEFAULT_MAX_UNITS)
                .0
                .len(),
            4 => render(value, OutputFormat::Toon).len(),
            5 => structured::compact_len(black_box(value)),
            6 => envelope.to_json(value).len(),
            7 => {
                let mut copy = value.clone();
                structured::null_non_finite(&mut copy);
                usize::from(black_box(copy) != Value::Null)
            }
            8 => reply(CallToolResult::text(cut_text.clone())),
            9 => reply(CallToolResult::text(whole_text.clone())),
            10 => reply(CallToolResult::text("x").with_structured(value.clone())),
            11 => usize::from(std::str::from_utf8(black_box(&state.input)).is_ok()),
            12 => jq_length
                .as_ref()
                .and_then(|p| p.run(body, &limits).ok())
                .map_or(0, |v| usize::from(v != Value::Null)),
            13 => rows
                .as_ref()
                .and_then(|p| p.apply_with(body, &limits).ok())
                .map_or(0, |v| usize::from(v != Value::Null)),
            14 => String::from_utf8(state.input.clone())
                .map_or(0, |text| usize::from(parse_bytes(text.as_bytes()).is_ok())),
            15 => String::from_utf8(state.input.clone())
                .map_or(0, |text| usize::from(parse_owned(text).is_ok())),
            _ => 0,
        };
    }
    out
}
