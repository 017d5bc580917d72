// One call's artifact is written a piece at a time, whatever its value holds: a string is
// written in slices of at most 16 KiB (96 KiB escaped) beside the 64 KiB pieces. Before, a string
// was never split: a projection's one string of 16,000,000 U+0001 (26 bytes of jq on a tiny
// page) became a single 96 MB piece of JSON text in the write after the reply, and wasm linear
// memory went from 32.7 MiB at the reply to 272.9 MiB within 300 ms (10,000,000: 133.4 MiB).
//
// How: the load stack (default settings, 72 MiB budget); one jira_get of /rest/api/3/myself with
// jq `"\u0001" * 16000000` and outputFormat json; wasm linear memory is read at the reply and
// every 250 ms for 3 s after it.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/artifact-escaped-string.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack, toolCall, postAs, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const WASM_LIMIT = 110 * MiB;

test("a projection's string of escaped characters keeps wasm memory under 110 MiB", async (t) => {
  const stack = await startLoadStack({});
  try {
    assert.equal((await postAs(stack.mcpUrl, toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId" }), TOKEN)).status, 200);
    const before = await stack.wasmBytes();
    const call = toolCall("jira_get", { path: "/rest/api/3/myself", jq: '"\\u0001" * 16000000', outputFormat: "json" });
    const reply = await postAs(stack.mcpUrl, call, TOKEN);
    const atReply = await stack.wasmBytes();
    let peak = atReply;
    for (let i = 0; i < 12; i++) {
      await new Promise((r) => setTimeout(r, 250));
      peak = Math.max(peak, await stack.wasmBytes());
    }
    t.diagnostic(`reply ${reply.status} in ${Math.round(reply.ms)} ms; wasm ${(before / MiB).toFixed(1)} MiB before, ` +
      `${(atReply / MiB).toFixed(1)} MiB at the reply, ${(peak / MiB).toFixed(1)} MiB within 3 s after`);
    assert.equal(reply.status, 200);
    assert.ok(peak < WASM_LIMIT, `wasm linear memory reached ${(peak / MiB).toFixed(1)} MiB from one call`);
  } finally {
    await stack.close();
  }
});
