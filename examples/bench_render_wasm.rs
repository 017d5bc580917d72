//! Render throughput in workerd: a bare wasm module (no wasm-bindgen) that bench/render.mjs
//! loads into a benchmark worker.
//!
//! The host copies a JSON document into the buffer from [`bench_input`], calls [`bench_load`] to
//! parse it, then [`bench_render`] to render it `runs` times; the time of each call is measured
//! from outside, since a worker's clock stands still while it computes.

use devtools_mcp_edge::render::{render, OutputFormat};
use devtools_mcp_edge::value::{parse_bytes, Value};
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
