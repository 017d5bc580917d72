// Argument maps a hostile caller makes huge, in workerd: a body of more JSON values than a request
// may hold (100,000) is refused before it is parsed; a `queryParams` past its documented maximum
// (1,000 entries) is refused as invalid arguments before any request is sent, and one at the
// maximum is sent whole, in JavaScript key order.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";

const MAX_QUERY_PARAMS = 1000;

let stack;
before(async () => { stack = await startStack(); });
beforeEach(() => stack.upstream.reset());
after(() => stack?.close());

/** `n` integer-like names, highest first: the order that made map insertion quadratic. */
function params(n) {
  const out = {};
  for (let i = n - 1; i >= 0; i--) out[String(i)] = "v";
  return out;
}

test("a 300,000-entry queryParams is refused before the body is parsed, and the worker serves on", async () => {
  await assert.rejects(
    stack.call("jira_get", { path: "/rest/api/3/search/jql", queryParams: params(300_000) }),
    /more than 100000 JSON values.*queryParams, for one, takes at most 1000 entries/s,
  );
  assert.equal(stack.upstream.requests.length, 0, "no upstream request");
  const r = await stack.call("jira_get", { path: "/rest/api/3/myself" });
  assert.equal(r.isError, false, r.text);
});

test("a 20,000-entry queryParams, within the body's bound, is refused by the tool with its count", async () => {
  const text = await stack.callError("jira_get", { path: "/rest/api/3/search/jql", queryParams: params(20_000) });
  assert.match(text, /queryParams has 20000 entries; at most 1000 are allowed/);
  assert.equal(stack.upstream.requests.length, 0, "no upstream request");
});

test("one entry past the maximum is refused; the maximum is sent in JavaScript key order", async () => {
  const over = await stack.callError("jira_get", { path: "/rest/api/3/myself", queryParams: params(MAX_QUERY_PARAMS + 1) });
  assert.match(over, /at most 1000 are allowed/);
  assert.equal(stack.upstream.requests.length, 0);
  const r = await stack.call("jira_get", { path: "/rest/api/3/myself", queryParams: params(MAX_QUERY_PARAMS) });
  assert.equal(r.isError, false, r.text.slice(0, 300));
  const [req] = stack.upstream.requests;
  const names = [...req.query.keys()];
  assert.equal(names.length, MAX_QUERY_PARAMS);
  assert.deepEqual(names.slice(0, 3), ["0", "1", "2"]);
  assert.equal(names.at(-1), String(MAX_QUERY_PARAMS - 1));
});

/** `n` doublings of the input: jq `[., .]` or JMESPath `[@, @]` steps joined by pipes. */
const doublings = (step, n) => Array(n).fill(step).join(" | ");

test("forty doublings of a shared value stop at the size bound with a budget _jqError", async () => {
  for (const [jq, stopped] of [
    [doublings("[., .]", 40), /^jq program stopped: value larger than 33554432 bytes as JSON/],
    [`${doublings("[., .]", 40)} | tojson`, /^jq program stopped: value larger than 33554432 bytes as JSON/],
    [doublings("[@, @]", 40), /^JMESPath expression stopped: /],
    [`${doublings("[@, @]", 40)} | to_string(@)`, /^JMESPath expression stopped: /],
  ]) {
    const out = await stack.callJson("jira_get", { path: "/rest/api/3/myself", jq, outputFormat: "json" });
    assert.equal(typeof out._jqError, "string", jq);
    assert.match(out._jqError, stopped, jq);
    assert.ok(out._originalData, "the unfiltered response comes back beside the error");
  }
});
