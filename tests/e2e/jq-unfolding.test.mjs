// A jq program of nested definitions that compose the identity is refused before it runs
// (docs/projection.md; decision 0094 as amended).
//
// `def f0: .; def f1: f0 | f0; def f2: f1 | f1; ... fN` runs 2^N compositions of `.` without
// touching a value, so the fuel, charged per evaluation but noticed by the next operation on a
// value, did not stop it: at N = 24 (465 bytes) it held the isolate's one thread for about 8 s
// of workerd CPU and another principal's call waited 11.4 s; at N = 30 (605 bytes) it ran for
// minutes. A program is now refused when it unfolds to more than 100,000 evaluations per input.
//
// How: `circleci_get` of `/me` with the program at N = LEVELS, as one principal; 200 ms later
// another principal's plain `circleci_get` of `/me`, which must answer within 2 s.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/jq-unfolding.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack, toolCall, postAs, TOKEN, cpuMs } from "../../bench/load/common.mjs";

const OTHER = "e2e-other-principal-0123456789abcdef";
const LEVELS = 24;

/** `def f0: .; def f1: f0 | f0; ... f<levels>`: 2^levels compositions of the identity. */
function program(levels) {
  let p = "def f0: .; ";
  for (let i = 1; i <= levels; i++) p += `def f${i}: f${i - 1} | f${i - 1}; `;
  return `${p}f${levels}`;
}

test(`a ${program(LEVELS).length}-byte jq program of nested identity compositions is bounded`, async (t) => {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify({ load: TOKEN, other: OTHER }) });
  try {
    assert.equal((await postAs(stack.mcpUrl, toolCall("circleci_get", { path: "/me" }), OTHER)).status, 200);
    const cpu0 = cpuMs(stack.pid);
    const hostile = postAs(stack.mcpUrl, toolCall("circleci_get", { path: "/me", jq: program(LEVELS) }), TOKEN);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const other = await postAs(stack.mcpUrl, toolCall("circleci_get", { path: "/me" }), OTHER);
    const h = await hostile;
    const cpu = cpuMs(stack.pid) - cpu0;
    t.diagnostic(`the program answered in ${h.ms.toFixed(0)} ms (${/_jqError: ([^\n]{0,160})/.exec(h.text)?.[1] ?? "the plain data"}); ` +
      `workerd CPU ${cpu.toFixed(0)} ms; the other principal answered ${other.status} in ${other.ms.toFixed(0)} ms`);
    assert.equal(h.status, 200);
    assert.match(h.text, /unfolds to more than 100000 steps/);
    assert.ok(h.ms < 5000, `the projection took ${h.ms.toFixed(0)} ms (decision 0010: 5 s)`);
    assert.equal(other.status, 200);
    assert.ok(other.ms < 2000, `the other principal waited ${other.ms.toFixed(0)} ms behind one jq program`);
  } finally {
    await stack.close();
  }
});
