// An upstream body dense in tiny JSON values does not go far past its memory reservation.
//
// A body reserves 2 bytes of memory per byte (memory::BYTES_PER_BODY_BYTE), measured on runs
// pages; but a parsed value's size is per value, not per byte: `[0,0,0,...]` is 2 bytes of text
// and some 40 bytes of memory per value. A broken or hostile upstream (or data the caller can
// write, read back through a passthrough tool) answering with such a body under
// UPSTREAM_MAX_BYTES could take the isolate's memory from every other principal's call: workerd
// does not enforce the isolate's 128 MB locally, so the test reads wasm linear memory, which
// never shrinks. The parser counts what it builds against the body's reservation and what the
// budget has free (decision 0109), so the call fails with `too_many_values` instead.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-dense-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack, toolCall, MCP_HEADERS, TOKEN, RUNS } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
/** bench/memory-concurrency.mjs fails when wasm + JS heap reaches 110 MiB. */
const WASM_LIMIT = 110 * MiB;
/** 8,126,464 zeros: 15.5 MiB, under the default UPSTREAM_MAX_BYTES (16 MiB). */
const VALUES = Math.floor((15.5 * MiB) / 2);
const ZEROS = "0,".repeat(VALUES - 1) + "0";

// Jira's passthrough, and a GitHub page (whose parser releases the text as it goes).
const CASES = [
  { tool: "jira_get", args: { path: "/rest/api/3/myself" }, path: /\/myself$/, body: `[${ZEROS}]` },
  { tool: "github_list_workflow_runs", args: RUNS, path: /\/actions\/runs$/, body: `{"total_count":1,"workflow_runs":[${ZEROS}]}` },
];

for (const { tool, args, path, body: BODY } of CASES) test(`${tool}: one upstream body of 15.5 MiB of tiny values stays within the isolate's memory`, async (t) => {
  const stack = await startLoadStack({});
  try {
    const call = async () => {
      const r = await fetch(stack.mcpUrl, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: toolCall(tool, args),
        signal: AbortSignal.timeout(120_000),
      });
      assert.equal(r.status, 200);
      return r.json();
    };
    await call();
    const before = await stack.wasmBytes();
    stack.upstream.fault({ path, status: 200, body: BODY, times: 1 });
    const reply = await call();
    const after = await stack.wasmBytes();
    const text = reply.result?.content?.[0]?.text ?? "";
    t.diagnostic(`body ${BODY.length} bytes: wasm memory ${(before / MiB).toFixed(1)} -> ${(after / MiB).toFixed(1)} MiB; reply ${text.slice(0, 60)}`);
    assert.equal(reply.result?.isError, true, text.slice(0, 200));
    assert.equal(reply.result?._meta?.code, "too_many_values");
    assert.ok(after < WASM_LIMIT,
      `wasm linear memory reached ${(after / MiB).toFixed(1)} MiB from one body of ${(BODY.length / MiB).toFixed(1)} MiB ` +
      `(reserved: ${((2 * BODY.length) / MiB).toFixed(1)} MiB)`);
  } finally {
    await stack.close();
  }
});
