// The request's own body is in the isolate's memory budget (docs/reliability.md, Request bodies).
//
// One principal with a valid token sends twenty concurrent tools/calls whose body is just under
// MAX_BODY_BYTES (4 MiB): the bytes ride in an argument the tool does not read (`padding`) or in a
// `jq` program far over its 4096-byte limit, refused only after the upstream answered. While the
// upstream takes a few seconds, every such call holds its body, its parsed arguments and their
// copies. Unreserved, twenty of them grew wasm linear memory to 171 MiB (padding) and 270 MiB (jq)
// in workerd, which does not enforce the isolate's 128 MB locally; linear memory never shrinks.
// Each body now reserves what it costs before it is read: the calls past the budget wait, then
// get a 503 with Retry-After, and another principal is answered at once. The calls come from
// ten principals, two each: one principal has at most two large bodies in flight (the next get
// 429, memory-chunked-bodies.test.mjs), so only many principals together reach the budget.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-request-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { startLoadStack, toolCall, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const OTHER = "e2e-other-principal-0123456789abcdef";
/** The hostile principals' tokens: two calls each. */
const HOSTILE = Array.from({ length: 10 }, (_, i) => `e2e-hostile-principal-${i}-0123456789abcdef`);
const TOKENS = JSON.stringify(Object.fromEntries([["load", TOKEN], ["other", OTHER], ...HOSTILE.map((t, i) => [`hostile${i}`, t])]));
/** bench/memory-concurrency.mjs fails when wasm + JS heap reaches 110 MiB: past it the 128 MB
 * isolate has no room left for its JavaScript. The default budget is 72 MiB. */
const WASM_LIMIT = 110 * MiB;
/** Concurrent hostile calls, each with a body just under the 4 MiB request bound. */
const CALLS = 20;
const FILLER = "x".repeat(Math.floor(3.9 * MiB));
/** How long the upstream takes: long enough for the calls to overlap. */
const UPSTREAM_DELAY_MS = 3000;

/** The path the hostile calls ask for, which the upstream answers slowly. */
const SLOW = "/rest/api/3/serverInfo";

async function call(mcpUrl, token, args) {
  const t0 = performance.now();
  const r = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
    body: toolCall("jira_get", { path: "/rest/api/3/myself", outputFormat: "json", ...args }),
    signal: AbortSignal.timeout(60_000),
  });
  const reply = await r.json();
  return { status: r.status, retryAfter: r.headers.get("retry-after"), reply, ms: performance.now() - t0 };
}

const CASES = [
  { name: "an unused argument of 3.9 MiB", args: { padding: FILLER } },
  { name: "a jq program of 3.9 MiB (its limit is 4096 bytes)", args: { jq: `.accountId #${FILLER}` } },
];

for (const c of CASES) {
  test(`${CALLS} concurrent calls with ${c.name} stay within the isolate's memory`, async (t) => {
    const stack = await startLoadStack({ MCP_AUTH_TOKENS: TOKENS });
    try {
      const warm = await call(stack.mcpUrl, TOKEN, { jq: ".accountId" });
      assert.equal(warm.status, 200);
      const before = await stack.wasmBytes();
      stack.upstream.fault({ path: SLOW, delayMs: UPSTREAM_DELAY_MS, status: 200, body: { accountId: "x" } });
      const hostile = Array.from({ length: CALLS }, (_, i) => call(stack.mcpUrl, HOSTILE[i % HOSTILE.length], { path: SLOW, ...c.args }));
      // While the hostile calls hold their bodies (or have been refused), another principal calls.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const other = await call(stack.mcpUrl, OTHER, { jq: ".accountId" });
      const answered = await Promise.all(hostile);
      const after = await stack.wasmBytes();
      const refused = answered.filter((h) => h.status === 503);
      t.diagnostic(`wasm memory ${(before / MiB).toFixed(1)} -> ${(after / MiB).toFixed(1)} MiB; ` +
        `${refused.length} of ${CALLS} refused with 503; the other principal answered in ${other.ms.toFixed(0)} ms`);
      assert.ok(after < WASM_LIMIT,
        `wasm linear memory reached ${(after / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB) from ` +
        `${CALLS} request bodies of ${(FILLER.length / MiB).toFixed(1)} MiB`);
      for (const h of answered) {
        assert.ok(h.status === 200 || h.status === 503, `status ${h.status}`);
        if (h.status === 503) {
          assert.equal(h.retryAfter, "2");
          assert.match(h.reply.error.message, /Server busy: no memory for a request body/);
        }
      }
      assert.ok(refused.length > 0 && refused.length < CALLS, `${refused.length} of ${CALLS} refused`);
      assert.equal(other.status, 200);
      assert.equal(JSON.parse(other.reply.result.content[0].text), "5b10a2844c20165700ede21g");
      assert.ok(other.ms < 2000, `the other principal waited ${other.ms.toFixed(0)} ms`);
    } finally {
      await stack.close();
    }
  });
}
