// A caller's concurrent jq projections share its fuel, so another principal's call is answered
// between them (docs/projection.md, The budget; decision 0111).
//
// A projection holds the isolate's one thread until it ends: one request's fuel (10,000,000
// units) is about 1.4 s of workerd CPU for `reduce repeat(1) as $x (0; . + $x)`. When fuel was a
// request's, one principal's three concurrent such calls ran back to back and another
// principal's plain call waited 7.1 s (5.2 s in a second run; four calls: 8.8 s). Each principal
// now draws on a bucket of one request's fuel refilled with time, so the first runs in full and
// the others are cut short.
//
// How: one principal sends CALLS concurrent `circleci_get` calls of `/me` with that program;
// 50 ms later another principal sends a plain `circleci_get` of `/me`, which must answer within
// about one run's time (1.8 times the fastest hostile call's).
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/jq-fuel-shared.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack, toolCall, postAs, TOKEN } from "../../bench/load/common.mjs";

const OTHER = "e2e-other-principal-0123456789abcdef";
const CALLS = 3;
const JQ = "reduce repeat(1) as $x (0; . + $x)";

test(`${CALLS} concurrent full-fuel jq calls do not hold another principal's call for seconds`, async (t) => {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify({ load: TOKEN, other: OTHER }) });
  try {
    const warm = await postAs(stack.mcpUrl, toolCall("circleci_get", { path: "/me" }), OTHER);
    assert.equal(warm.status, 200);
    const hostile = Array.from({ length: CALLS }, () => postAs(stack.mcpUrl, toolCall("circleci_get", { path: "/me", jq: JQ }), TOKEN));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const other = await postAs(stack.mcpUrl, toolCall("circleci_get", { path: "/me" }), OTHER);
    const answered = await Promise.all(hostile);
    t.diagnostic(`the other principal answered ${other.status} in ${other.ms.toFixed(0)} ms; the ${CALLS} jq calls in ` +
      `${answered.map((a) => a.ms.toFixed(0)).join(", ")} ms`);
    for (const a of answered) assert.match(a.text, /evaluation budget exhausted/);
    assert.equal(other.status, 200);
    assert.match(other.text, /octocat/);
    // One full run's wall time depends on the machine's load; what is bounded is how many the
    // other principal waits behind: about one (it waited three back to back before).
    const oneRun = Math.min(...answered.map((a) => a.ms));
    assert.ok(other.ms < 1.8 * oneRun + 300,
      `the other principal waited ${other.ms.toFixed(0)} ms behind ${CALLS} jq programs (one run: ${oneRun.toFixed(0)} ms)`);
  } finally {
    await stack.close();
  }
});
