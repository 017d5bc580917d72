// Small upstream bodies together stay within the isolate's memory budget (docs/reliability.md,
// Memory under concurrency).
//
// One principal with a valid token sends 64 concurrent jira_get calls whose upstream answers
// (after 2 s, so they overlap) with a JSON body just under 1 MiB, a small body. Small bodies do
// not queue behind large ones, but they wait like them once the whole budget is spent: when
// they were admitted at once whatever the budget held, these 64 grew wasm linear memory to about
// 125 MiB against a budget of 72 MiB, at the 128 MB the isolate has in all.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-small-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack, toolCall, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
/** bench/memory-concurrency.mjs fails when wasm + JS heap reaches 110 MiB. */
const WASM_LIMIT = 110 * MiB;
const CALLS = 64;
/** A Jira-like answer of about 1,040,000 bytes of short values: a small body (under 1 MiB) that
 * costs some 3.5 bytes of memory per byte parsed, more than it reserves before it is read. */
const BODY = { items: Array.from({ length: 104_000 }, (_, i) => (i % 2 ? "abcdefgh" : 12345678)) };

async function call(mcpUrl, args = {}) {
  const r = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
    body: toolCall("jira_get", { path: "/rest/api/3/myself", ...args }),
    signal: AbortSignal.timeout(120_000),
  });
  return { status: r.status, reply: await r.json() };
}

test(`${CALLS} concurrent calls with bodies just under 1 MiB stay within the memory budget`, async (t) => {
  const stack = await startLoadStack({});
  try {
    assert.equal((await call(stack.mcpUrl, { jq: ".accountId" })).status, 200);
    const before = await stack.wasmBytes();
    const bytes = JSON.stringify(BODY).length;
    assert.ok(bytes < MiB, `the body is ${bytes} bytes`);
    stack.upstream.fault({ path: /\/myself$/, delayMs: 2000, status: 200, body: BODY, times: CALLS });
    const answered = await Promise.all(Array.from({ length: CALLS }, () => call(stack.mcpUrl)));
    const busy = answered.filter((a) => a.reply.result?._meta?.code === "server_busy").length;
    for (const a of answered) assert.equal(a.status, 200);
    const after = await stack.wasmBytes();
    t.diagnostic(`${CALLS} bodies of ${bytes} bytes: wasm memory ${(before / MiB).toFixed(1)} -> ${(after / MiB).toFixed(1)} MiB, ${busy} refused as busy`);
    assert.ok(after < WASM_LIMIT,
      `wasm linear memory reached ${(after / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB, budget 72 MiB); ${busy} calls refused as busy`);
  } finally {
    await stack.close();
  }
});
