// Concurrent JSON-RPC batches stay within the isolate's memory. A batch's replies are made
// before they are counted, so a batch starts no further call once its own replies hold a quarter
// of the budget, or once the isolate's budget (but for the small bodies' share) is taken by
// everything in flight; its remaining calls are answered `batch_budget_exceeded`. Before, only
// the batch's own quarter was checked: 64 batches of one token (49 tools/list and one jira_get
// each), their bodies released together, each passed the check while the budget was empty and
// grew wasm memory from 1.5 to 158.4 MiB (two tokens, 128 batches: 312.6 MiB).
//
// How: the load stack (default 72 MiB budget); one token sends 64 POST /mcp with
// MCP-Protocol-Version 2025-03-26, each a batch of 49 tools/list and one jira_get of
// /rest/api/3/myself, all but the last byte of each body written first; 1.5 s later the last
// bytes go out together. Wasm linear memory is read before and after.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-concurrent-batches.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startLoadStack, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const WASM_LIMIT = 110 * MiB;
const BATCHES = 64;

const messages = Array.from({ length: 49 }, (_, id) => ({ jsonrpc: "2.0", id, method: "tools/list", params: {} }));
messages.push({ jsonrpc: "2.0", id: 49, method: "tools/call", params: { name: "jira_get", arguments: { path: "/rest/api/3/myself" } } });
const BODY = JSON.stringify(messages);

/** A batch POST whose last byte is sent by `release()`: { release, done }. */
function heldBatch(mcpUrl) {
  const req = http.request(mcpUrl, {
    method: "POST", agent: false,
    headers: { ...MCP_HEADERS, "mcp-protocol-version": "2025-03-26", "content-length": String(Buffer.byteLength(BODY)) },
  });
  const done = new Promise((resolve) => {
    req.on("response", (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
  });
  req.write(BODY.slice(0, -1));
  return { release: () => req.end(BODY.slice(-1)), done };
}

test("one principal's concurrent batches keep wasm memory under 110 MiB", async (t) => {
  const stack = await startLoadStack({});
  try {
    const before = await stack.wasmBytes();
    const held = Array.from({ length: BATCHES }, () => heldBatch(stack.mcpUrl));
    await new Promise((r) => setTimeout(r, 1500));
    for (const h of held) h.release();
    const answers = await Promise.all(held.map((h) => h.done));
    const after = await stack.wasmBytes();
    const statuses = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    t.diagnostic(`${BATCHES} batches of 49 tools/list + 1 jira_get from one token: wasm ${(before / MiB).toFixed(1)} -> ` +
      `${(after / MiB).toFixed(1)} MiB; statuses ${JSON.stringify(statuses)}`);
    assert.ok(after < WASM_LIMIT, `wasm linear memory reached ${(after / MiB).toFixed(1)} MiB`);
  } finally {
    await stack.close();
  }
});
