// Regression: a cached circleci_get body reserves its cost before KV hands a byte of it over, so
// concurrent cache hits stay within the isolate's memory budget (decision 0113).
//
// The defence: an HTTP_CACHE entry's metadata holds its body's size; the cache opens the entry
// as a stream (`getWithMetadata` with type "stream", one KV read), reserves the size's cost on
// the call's memory as a fetched body does from its Content-Length, and only then reads the
// body (src/cache.rs). A call refused for room never reads it; a body of another length than
// its metadata says is a miss.
//
// How: one principal fills the cache with a 15 MiB CircleCI body (objects holding 990-byte
// strings: no dense tiny values), waits until a call is a hit, then sends CALLS identical
// `circleci_get` calls at once; wasm linear memory is read after they answered (it never shrinks).
//
// Measured 2026-12-06 (2 shared vCPUs, load 1-3), release builds, default settings, 8 hits:
//   before (2637d5f, 5737322): wasm 33.1 -> 123.4 MiB, 4 served, 4 busy (12 hits: 183.4 MiB);
//   after: 33.1 -> 49.1-49.2 MiB in three runs, 3 served, 5 busy, no upstream request (12 hits:
//   49.2 MiB, 3 served, 9 busy).
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-cached-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startLoadStack, toolCall, MCP_HEADERS } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const WASM_LIMIT = 80 * MiB;
const CALLS = 8;
const BODY_BYTES = 15 * MiB;

/** POSTs on a connection of its own: { status, text }. */
function post(url, body) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: "POST", headers: MCP_HEADERS, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
    req.end(body);
  });
}

/** A CircleCI-shaped body of about `bytes`: objects holding long strings. */
function bigBody(bytes) {
  const items = [];
  for (let size = 20; size < bytes - 2000; size += 1003) items.push({ name: "n".repeat(990) });
  return Buffer.from(JSON.stringify({ items }));
}

test(`${CALLS} concurrent cache hits of a 15 MiB circleci_get body stay within the isolate's memory`, async (t) => {
  const stack = await startLoadStack();
  try {
    const page = bigBody(BODY_BYTES);
    stack.upstream.route("GET", /^\/api\/v2\/big$/, (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": page.length });
      res.end(page);
    });
    const call = toolCall("circleci_get", { path: "/big" });
    const fetched = () => stack.upstream.count("GET", /\/api\/v2\/big$/);
    const first = await post(stack.mcpUrl, call);
    assert.equal(first.status, 200);
    assert.equal(fetched(), 1);
    // The entry is written to KV after the reply; a hit does not reach the upstream.
    let hit = false;
    for (let i = 0; i < 50 && !hit; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const count = fetched();
      await post(stack.mcpUrl, call);
      hit = fetched() === count;
    }
    assert.ok(hit, "the body was cached");
    const fetchedBefore = fetched();
    const before = await stack.wasmBytes();
    const answered = await Promise.all(Array.from({ length: CALLS }, () => post(stack.mcpUrl, call)));
    const after = await stack.wasmBytes();
    const busy = answered.filter((a) => a.text.includes("server_busy")).length;
    const served = answered.filter((a) => a.status === 200 && !a.text.includes('"isError":true')).length;
    t.diagnostic(`wasm memory ${(before / MiB).toFixed(1)} -> ${(after / MiB).toFixed(1)} MiB; ${served} served ` +
      `(not an error), ${busy} busy; upstream requests during them: ${fetched() - fetchedBefore}`);
    assert.ok(after < WASM_LIMIT,
      `wasm linear memory reached ${(after / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB) from ` +
      `${CALLS} concurrent cache hits of ${(page.length / MiB).toFixed(1)} MiB`);
  } finally {
    await stack.close();
  }
});
