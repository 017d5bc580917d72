// Request bodies sent without a Content-Length (chunked transfer encoding) reserve before they
// are read (docs/reliability.md, Request bodies).
//
// Without a declared length, a body could be megabytes by the time it is in hand, so the request
// reserves the endpoint's whole limit (4 MiB at 5 bytes per byte) before reading, and gives back
// what did not arrive. Before, one token's 30 chunked tools/calls of 3.9 MiB, each held open for
// 3 s before its last chunk, sat in wasm linear memory together unreserved: 2.1 -> 261 MiB, the
// 503s coming only after the peak.
//
// How: 30 chunked tools/calls of 3.9 MiB (an unused `padding` argument of jira_get) from 15
// principals, held open for 3 s before their final chunk; wasm linear memory read while they
// are held; another principal's call meanwhile must answer 200.
//
// A body without a declared length reserves as it arrives, and one principal's request bodies
// hold at most 8 MiB together (the next get 429): before, a chunked body reserved the whole
// 4 MiB limit (20 MiB of memory) before a byte arrived, three held by one principal reserved
// most of the budget, and another principal's 3.9 MB call was refused 503 while they were held.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-chunked-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { startLoadStack, toolCall, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const OTHER = "e2e-other-principal-0123456789abcdef";
const HOSTILE = Array.from({ length: 15 }, (_, i) => `e2e-hostile-principal-${i}-0123456789abcdef`);
const TOKENS = JSON.stringify(Object.fromEntries([["load", TOKEN], ["other", OTHER], ...HOSTILE.map((t, i) => [`hostile${i}`, t])]));
const WASM_LIMIT = 110 * MiB;
const CALLS = 30;
const FILLER = "x".repeat(Math.floor(3.9 * MiB));
const HOLD_MS = 3000;

/** Opens a chunked POST /mcp, writes all but the end of its body; returns { finish(), done }. */
function openChunked(mcpUrl, token) {
  const url = new URL(mcpUrl);
  const body = toolCall("jira_get", { path: "/rest/api/3/myself", outputFormat: "json", padding: FILLER });
  const head = body.slice(0, -8);
  const tail = body.slice(-8);
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, "transfer-encoding": "chunked" },
    agent: false,
  });
  const done = new Promise((resolve, reject) => {
    req.on("response", (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
    // Refused before its body is read, the request's connection may be reset under the writes.
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
  });
  // Several chunks, as a client streaming its body would send them.
  for (let i = 0; i < head.length; i += 256 * 1024) req.write(head.slice(i, i + 256 * 1024));
  return { finish: () => req.end(tail), done };
}

async function other(mcpUrl, args = {}) {
  const t0 = performance.now();
  const r = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${OTHER}` },
    body: toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId", ...args }),
  });
  await r.text();
  return { status: r.status, ms: performance.now() - t0 };
}

test(`${CALLS} concurrent chunked request bodies of 3.9 MiB stay within the isolate's memory`, async (t) => {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: TOKENS });
  try {
    assert.equal((await other(stack.mcpUrl)).status, 200);
    const before = await stack.wasmBytes();
    const open = Array.from({ length: CALLS }, (_, i) => openChunked(stack.mcpUrl, HOSTILE[i % HOSTILE.length]));
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    const held = await stack.wasmBytes();
    const otherCall = await other(stack.mcpUrl);
    for (const o of open) o.finish();
    const answered = await Promise.all(open.map((o) => o.done));
    const after = await stack.wasmBytes();
    const statuses = {};
    for (const a of answered) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    t.diagnostic(`wasm memory ${(before / MiB).toFixed(1)} MiB before, ${(held / MiB).toFixed(1)} MiB with the ` +
      `bodies held, ${(after / MiB).toFixed(1)} MiB after; statuses ${JSON.stringify(statuses)}; ` +
      `the other principal answered ${otherCall.status} in ${otherCall.ms.toFixed(0)} ms`);
    assert.ok(after < WASM_LIMIT,
      `wasm linear memory reached ${(after / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB) from ` +
      `${CALLS} chunked request bodies of ${(FILLER.length / MiB).toFixed(1)} MiB`);
    assert.equal(otherCall.status, 200);
    assert.ok(otherCall.ms < 2000, `the other principal waited ${otherCall.ms.toFixed(0)} ms`);
  } finally {
    await stack.close();
  }
});

test("one principal's held chunked bodies leave room for another principal's large call", async (t) => {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: TOKENS });
  try {
    const open = Array.from({ length: 10 }, () => openChunked(stack.mcpUrl, TOKEN));
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    const large = await other(stack.mcpUrl, { padding: FILLER });
    for (const o of open) o.finish();
    const answered = await Promise.all(open.map((o) => o.done));
    const statuses = {};
    for (const a of answered) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const refused = answered.filter((a) => a.status === 429);
    t.diagnostic(`one principal's 10 held chunked bodies: ${JSON.stringify(statuses)}; another principal's ` +
      `3.9 MiB call answered ${large.status} in ${large.ms.toFixed(0)} ms`);
    assert.equal(large.status, 200);
    // Which bodies the 8 MiB hold depends on how their pieces interleave: at most two whole.
    assert.ok(answered.filter((a) => a.status === 200).length <= 2, JSON.stringify(statuses));
    assert.equal(answered.filter((a) => a.status === 200).length + refused.length, 10, JSON.stringify(statuses));
    for (const a of refused) assert.match(a.text, /at most 8 MiB of request bodies at once per caller/);
  } finally {
    await stack.close();
  }
});
