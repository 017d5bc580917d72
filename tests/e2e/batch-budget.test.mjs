// A JSON-RPC batch (protocol revision 2025-03-26) is one request: its calls share one request's
// memory, jq fuel and time. In workerd, through the build wrapped so that the test can read the
// wasm linear memory (bench/load/common.mjs): a batch of 1 MiB artifact_read calls answers the
// calls that fit in its share of the memory budget and refuses the rest with
// `batch_budget_exceeded`, the wasm memory stays under the budget, and another principal's
// requests sent at once answer normally and promptly; a batch past the bound on its length is
// refused as a whole; a batch of jq calls shares one request's fuel.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack } from "../../bench/load/common.mjs";
import {
  BUDGET, JQ_ITEMS, JQ_PROGRAM, MAX_BATCH, MiB, TOKENS, call, largeArtifact, post, readsBatch, routeBatchPages, textOf,
} from "./batch-common.mjs";

let stack;
before(async () => {
  stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify(TOKENS) });
  routeBatchPages(stack.upstream);
});
after(() => stack?.close());

test("a batch of 1 MiB artifact reads stays within its share of the memory budget, and another principal is served at once", async () => {
  const artifactId = await largeArtifact(stack);
  const batch = readsBatch(artifactId, MAX_BATCH);
  const sent = post(stack, batch);
  // Bob's requests go out while alice's batch is being answered.
  const bob = await Promise.all([
    post(stack, { jsonrpc: "2.0", id: 1, method: "tools/list" }, "bob"),
    post(stack, call(2, "circleci_get", { path: "/me" }), "bob"),
  ]);
  const { status, json: replies, bytes } = await sent;
  for (const r of bob) {
    assert.equal(r.status, 200);
    assert.ok(r.json.result && !r.json.result.isError, JSON.stringify(r.json).slice(0, 300));
    assert.ok(r.ms < 5000, `bob waited ${r.ms.toFixed(0)} ms`);
  }
  assert.ok(bob[0].json.result.tools.length > 10);
  assert.equal(status, 200);
  assert.deepEqual(replies.map((r) => r.id), batch.map((c) => c.id), "every call is answered, in order");
  const served = replies.filter((r) => r.result);
  const refused = replies.filter((r) => r.error);
  assert.ok(served.length >= 1, "the first reads are served");
  assert.ok(refused.length >= MAX_BATCH / 2, `${refused.length} calls refused: the batch holds no more than its share`);
  for (const r of served) assert.equal(JSON.parse(textOf(r)).data.length, Math.ceil(MiB / 3) * 4);
  // The served come first; every call after the first refusal is refused for the same bound.
  assert.deepEqual(replies.slice(served.length).map((r) => r.error?.data?.code), refused.map(() => "batch_budget_exceeded"));
  for (const r of refused) {
    assert.equal(r.error.code, -32000);
    assert.equal(r.error.data.bound, "memory");
    assert.match(r.error.message, /^Batch budget exceeded: .* Send it again in a request of its own\.$/);
  }
  assert.ok(bytes < BUDGET / 4, `the response holds ${(bytes / MiB).toFixed(1)} MiB`);
  const wasm = await stack.wasmBytes();
  assert.ok(wasm < BUDGET, `wasm memory grew to ${(wasm / MiB).toFixed(1)} MiB, past the ${BUDGET / MiB} MiB budget`);
});

test("a batch longer than 50 messages is refused as a whole", async () => {
  const batch = Array.from({ length: 150 }, (_, i) => call(i + 1, "artifact_read", { artifactId: "00000000-0000-4000-8000-000000000000" }));
  const { status, json } = await post(stack, batch);
  assert.equal(status, 400);
  assert.equal(json.error.code, -32600);
  assert.match(json.error.message, /at most 50 messages and this one holds 150/);
});

test("the jq calls of a batch share one request's fuel", async () => {
  // Another principal's call: the batch's caller starts with a full bucket of fuel.
  const alone = await post(stack, call(1, "circleci_get", { path: "/budget/0", jq: JQ_PROGRAM }), "bob");
  assert.match(textOf(alone.json), new RegExp(`^data: ${JQ_ITEMS}\\n`), "alone, a call has fuel enough");
  const batch = [1, 2, 3].map((id) => call(id, "circleci_get", { path: `/budget/${id}`, jq: JQ_PROGRAM }));
  const { status, json: replies } = await post(stack, batch);
  assert.equal(status, 200);
  assert.match(textOf(replies[0]), new RegExp(`^data: ${JQ_ITEMS}\\n`));
  assert.match(textOf(replies[1]), /evaluation budget exhausted/);
  assert.equal(replies[2].error?.data?.code, "batch_budget_exceeded", JSON.stringify(replies[2]).slice(0, 300));
  assert.equal(replies[2].error.data.bound, "fuel");
});
