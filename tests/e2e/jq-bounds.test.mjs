// jq programs whose builtins did unbounded work or built values far larger in memory than in
// print, against the built worker in workerd. Each runs in a fresh isolate as one principal while
// another principal's trivial call is sent at once: the program gets a clear `_jqError` (or its
// answer) promptly, the isolate's wasm memory grows by no more than a projection may hold, and the
// other call answers normally without waiting long.

import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { startLoadStack, toolCall, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const OTHER = "e2e-other-principal-0123456789abcdef";
/** The most a projection's program may hold (src/projection/meter.rs, MAX_MEMORY_BYTES), and
 * half again for blocks the allocator cannot reuse (a doubling array leaves its old block free). */
const MAX_GROWTH = 48 * MiB;
/** A program's fuel is about a second of CPU in workerd; the machine is shared. */
const PROMPT_MS = 8000;
/** Requests still running past this are cut off: the unbounded builtins ran for minutes. */
const CUT_OFF_MS = 60_000;

const MYSELF = { path: "/rest/api/3/myself", outputFormat: "json" };

/** POSTs a tools/call of jira_get /myself with `jq` as `token`; resolves to { value, ms }. */
async function project(mcpUrl, jq, token) {
  const t0 = performance.now();
  const r = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
    body: toolCall("jira_get", { ...MYSELF, jq }),
    signal: AbortSignal.timeout(CUT_OFF_MS),
  });
  const reply = await r.json();
  const ms = performance.now() - t0;
  assert.equal(r.status, 200);
  assert.ok(reply.result && reply.result.isError !== true, JSON.stringify(reply).slice(0, 300));
  return { value: JSON.parse(reply.result.content.map((b) => b.text ?? "").join("")), ms };
}

const CASES = [
  { jq: '"a" * 11000000 | explode | length', error: /memory/ },
  { jq: '"ab" * 8000000 | [splits("")] | length', error: /memory/ },
  { jq: "[range(3000000)]", error: /memory/ },
  { jq: "jn(1000000000; 1.5)", error: /budget exhausted/ },
  { jq: '"a" * 400000 | indices("a" * 200000) | length', error: /budget exhausted/ },
  { jq: '"a" * 400000 | contains("a" * 200000 + "b")', value: false },
  { jq: '"ab" * 50000 | test("(?:a|b){0,10000}c")', error: /regex pattern too large/ },
];

for (const c of CASES) {
  test(`${c.jq}: answered promptly within the memory bound, beside another principal's call`, async (t) => {
    const stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify({ load: TOKEN, other: OTHER }) });
    try {
      const warm = await project(stack.mcpUrl, ".accountId", TOKEN);
      assert.equal(typeof warm.value, "string");
      const before = await stack.wasmBytes();
      const hostile = project(stack.mcpUrl, c.jq, TOKEN);
      const other = project(stack.mcpUrl, ".accountId", OTHER);
      const [h, o] = await Promise.all([hostile, other]);
      if (c.error) {
        assert.match(h.value._jqError ?? "", c.error, JSON.stringify(h.value).slice(0, 300));
        assert.equal(h.value._originalData?.accountId, warm.value, "the page comes back beside the error");
      } else {
        assert.deepEqual(h.value, c.value);
      }
      assert.ok(h.ms < PROMPT_MS, `the program took ${h.ms.toFixed(0)} ms`);
      assert.equal(o.value, warm.value, "the other principal's call answers normally");
      assert.ok(o.ms < PROMPT_MS, `the other principal's call took ${o.ms.toFixed(0)} ms`);
      const grown = (await stack.wasmBytes()) - before;
      t.diagnostic(`program ${h.ms.toFixed(0)} ms, other principal ${o.ms.toFixed(0)} ms, wasm memory +${(grown / MiB).toFixed(1)} MiB`);
      assert.ok(grown <= MAX_GROWTH, `wasm memory grew by ${(grown / MiB).toFixed(1)} MiB`);
    } finally {
      await stack.close();
    }
  });
}
