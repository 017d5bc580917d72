// Regression: the GitHub answer kept for a conditional request is not held while the request
// that revalidates it is in flight, and is reserved before it is read (decision 0113).
//
// The defence: every GitHub GET is conditional (src/tools/github/fetch.rs). Before the request
// only the kept entry's validator is read from HTTP_CACHE (its metadata; the body's stream is
// cancelled unread); once GitHub answers 304 the entry is opened again, its size (kept in its
// metadata) reserved on the call's memory, and only then is its body read (`HttpCache::kept`).
// An entry gone or holding another validator by then is fetched again unconditionally.
//
// How: a runs page of about 15 MiB with an ETag; once the worker keeps it (a later request
// carries If-None-Match), the upstream answers conditional requests with 304 after 3 s. CALLS
// concurrent github_list_workflow_runs calls of that page; wasm linear memory is read while they
// wait for GitHub and after. Default settings.
//
// Measured 2026-12-06 (2 shared vCPUs, load 1-3), release builds, 8 calls of a 15.0 MiB page:
//   before (2637d5f): wasm 40.8 MiB before, 131.1 MiB while GitHub revalidates, 154.0 MiB after;
//   at 5737322: 40.8, 161.3, 161.3 MiB (5 of 8 busy);
//   after: 40.8 MiB before, 40.8 MiB while GitHub revalidates, 64.3 MiB after (5 of 8 busy).
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-kept-github-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { bigRunsPage } from "./fake/github.mjs";
import { startLoadStack, toolCall, MCP_HEADERS } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const WASM_LIMIT = 80 * MiB;
const CALLS = 8;
const PAGE_BYTES = 15 * MiB;
const REVALIDATE_DELAY_MS = 3000;
const ETAG = '"runs-v1"';

/** One request on a connection of its own: { status, text }. */
function once(url, path, method, headers, body) {
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method, headers, agent: false }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
    req.end(body);
  });
}

const wasmBytes = async (url) => JSON.parse((await once(url, "/__bench/memory", "GET", {})).text).wasmBytes;

test(`${CALLS} concurrent revalidations of a kept 15 MiB GitHub page stay within the isolate's memory`, async (t) => {
  const stack = await startLoadStack();
  try {
    const url = new URL(stack.url);
    const page = bigRunsPage(stack.upstream.url, PAGE_BYTES);
    let slow = false;
    let conditional = 0;
    stack.upstream.route("GET", /^\/repos\/octo-org\/big\/actions\/runs$/, async (req, res) => {
      if (req.headers["if-none-match"] === ETAG) {
        conditional++;
        if (slow) await new Promise((resolve) => setTimeout(resolve, REVALIDATE_DELAY_MS));
        res.writeHead(304, { ETag: ETAG });
        return res.end();
      }
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": page.length, ETag: ETAG });
      res.end(page);
    });
    const call = toolCall("github_list_workflow_runs", { owner: "octo-org", repo: "big", perPage: 100 });
    assert.equal((await once(url, "/mcp", "POST", MCP_HEADERS, call)).status, 200);
    // The answer is kept after the reply; a conditional request shows it is.
    for (let i = 0; i < 50 && conditional === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await once(url, "/mcp", "POST", MCP_HEADERS, call);
    }
    assert.ok(conditional > 0, "the page was kept and revalidated");
    const before = await wasmBytes(url);
    slow = true;
    const calls = Array.from({ length: CALLS }, () => once(url, "/mcp", "POST", MCP_HEADERS, call));
    await new Promise((resolve) => setTimeout(resolve, REVALIDATE_DELAY_MS / 2));
    const held = await wasmBytes(url);
    const answered = await Promise.all(calls);
    const after = await wasmBytes(url);
    const busy = answered.filter((a) => a.text.includes("server_busy")).length;
    t.diagnostic(`wasm memory ${(before / MiB).toFixed(1)} MiB before, ${(held / MiB).toFixed(1)} MiB while GitHub ` +
      `revalidates, ${(after / MiB).toFixed(1)} MiB after; ${busy} of ${CALLS} busy`);
    assert.ok(Math.max(held, after) < WASM_LIMIT,
      `wasm linear memory reached ${(Math.max(held, after) / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB) ` +
      `from ${CALLS} concurrent revalidations of a kept ${(page.length / MiB).toFixed(1)} MiB page`);
  } finally {
    await stack.close();
  }
});
