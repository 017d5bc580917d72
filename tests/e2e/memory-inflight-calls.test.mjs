// Calls in flight stay within the isolate's memory, and one principal's burst leaves room for
// the others (docs/reliability.md, Request bodies).
//
// Each request in flight holds memory however small its body: the call's state (about 216 KB
// measured for a jira_get waiting on its upstream) and its headers (workerd accepts about 100 KB
// of them). Each reserves that before its body is read (memory::REQUEST_OVERHEAD_BYTES, and its
// headers twice), and one principal has at most 64 requests in flight (server::inflight). Before,
// one token sending 600 trivial calls to an upstream answering after 4 s grew linear memory to
// 129 MiB (400 calls with a 100 KB header each: 125 MiB), every call answered, and nothing
// bounded them.
//
// How: CALLS concurrent `jira_get` calls from one principal, the upstream answering after 4 s;
// wasm linear memory read while they wait, and another principal's call sent meanwhile must
// answer 200 promptly.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-inflight-calls.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { startLoadStack, toolCall, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const WASM_LIMIT = 110 * MiB;
const OTHER = "e2e-other-principal-0123456789abcdef";
const SLOW = "/rest/api/3/serverInfo";
const UPSTREAM_DELAY_MS = 4000;

/** One request on a connection of its own: { status, text, ms }. */
function once(url, path, method, headers, body) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request({ host: url.hostname, port: url.port, path, method, headers, agent: false }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString(), ms: performance.now() - t0 }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "", ms: performance.now() - t0 }));
    req.end(body);
  });
}

const wasmBytes = async (url) => JSON.parse((await once(url, "/__bench/memory", "GET", {})).text).wasmBytes;

const CASES = [
  { name: "600 concurrent trivial calls", calls: 600, header: 0 },
  { name: "400 concurrent trivial calls with a 100 KB header each", calls: 400, header: 100_000 },
];

for (const c of CASES) {
  test(`${c.name} waiting on a slow upstream stay within the isolate's memory`, async (t) => {
    const stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify({ load: TOKEN, other: OTHER }) });
    try {
      const url = new URL(stack.url);
      const body = toolCall("jira_get", { path: SLOW });
      const headers = { ...MCP_HEADERS, ...(c.header ? { "x-padding": "y".repeat(c.header) } : {}) };
      assert.equal((await once(url, "/mcp", "POST", headers, body)).status, 200);
      const before = await wasmBytes(url);
      stack.upstream.fault({ path: SLOW, delayMs: UPSTREAM_DELAY_MS, status: 200, body: { version: "1" } });
      const calls = [];
      for (let i = 0; i < c.calls; i++) {
        calls.push(once(url, "/mcp", "POST", headers, body));
        if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, UPSTREAM_DELAY_MS / 2));
      const held = await wasmBytes(url);
      const other = await once(url, "/mcp", "POST", { ...MCP_HEADERS, authorization: `Bearer ${OTHER}` },
        toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId" }));
      const answered = await Promise.all(calls);
      const statuses = {};
      for (const a of answered) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      t.diagnostic(`wasm memory ${(before / MiB).toFixed(1)} MiB before, ${(held / MiB).toFixed(1)} MiB with ` +
        `${c.calls} calls waiting; statuses ${JSON.stringify(statuses)}; another principal answered ` +
        `${other.status} in ${other.ms.toFixed(0)} ms`);
      assert.ok(held < WASM_LIMIT,
        `wasm linear memory reached ${(held / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB) with ` +
        `${c.calls} small calls in flight`);
      assert.equal(other.status, 200, other.text);
      assert.ok(other.ms < 2000, `the other principal waited ${other.ms.toFixed(0)} ms`);
      const refused = answered.filter((a) => a.status === 429);
      assert.ok(refused.length > 0 && refused.every((a) => /Too many requests in flight/.test(a.text)), JSON.stringify(statuses));
    } finally {
      await stack.close();
    }
  });
}
