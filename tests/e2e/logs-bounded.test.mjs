// Job logs under hostile or large requests, in workerd: a grep pattern whose matching would take
// the isolate's thread for minutes is refused promptly with a stable code (decision 0096); a
// 50 MB log read by one principal leaves the thread to the others every 256 KiB (decision 0093).
// In both, another principal's calls sent meanwhile and right after answer normally and promptly.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { PRINCIPALS, startStack } from "./tools-common.mjs";
import { JOBS, LOGS_REPO } from "./fake/logs.mjs";

const TOOL = "github_get_job_logs";
/** Longest a refusal or another principal's call may take here (the machine is shared and slow). */
const PROMPT_MS = 5_000;
/** Longest another principal's tools/list may take while a large log is read. */
const SHARED_MS = 1_000;
/** Longest a hostile call is given before the test calls it hung. */
const HUNG_MS = 30_000;

/** Readers of the large log: a fresh principal per round, so each round downloads it (the cache is per principal). */
const READERS = ["reader1", "reader2", "reader3"];
let stack;
before(async () => {
  const principals = { ...PRINCIPALS, ...Object.fromEntries(READERS.map((r) => [r, `e2e-${r}-token-0123456789abcdef`])) };
  stack = await startStack({ principals });
});
after(() => stack?.close());

/** `promise`'s value and how long it took, or `{ hung: true }` after `ms`. */
async function within(promise, ms) {
  const start = performance.now();
  let timer;
  const deadline = new Promise((resolve) => { timer = setTimeout(() => resolve({ hung: true }), ms); });
  const value = await Promise.race([promise.then((v) => ({ v })), deadline]);
  clearTimeout(timer);
  return { ...value, ms: performance.now() - start };
}

test("a costly grep is refused at once with its code while another principal is answered", async () => {
  await stack.call("github_list_workflow_runs", { owner: "octo-org", repo: "hello-world", perPage: 1 }, "bob");
  for (const [grep, says, code] of [
    // 219 KiB compiled: refused before anything is read.
    ["(?:.?){0,2000}QQ", /compiles to more than 32768 bytes/, undefined],
    // 22 KiB compiled: accepted, then out of budget within the first kilobytes of the 50 MB log.
    ["(?:.?){0,200}QQ", /costs too much to match.*Use a shorter, simpler pattern/s, "grep_over_budget"],
  ]) {
    const hostile = within(stack.call(TOOL, { ...LOGS_REPO, jobId: 504, grep }, "alice"), HUNG_MS);
    const other = within(stack.call(TOOL, { ...LOGS_REPO, jobId: 501, grep: "E0308", context: 0, outputFormat: "json" }, "bob"), HUNG_MS);
    const [a, b] = await Promise.all([hostile, other]);
    assert.ok(!a.hung, `${grep}: no answer within ${HUNG_MS} ms`);
    assert.equal(a.v.isError, true, a.v.text.slice(0, 300));
    assert.match(a.v.text, says);
    assert.equal(a.v.result._meta?.code, code);
    assert.ok(a.ms < PROMPT_MS, `${grep}: refused after ${a.ms.toFixed(0)} ms`);
    assert.ok(!b.hung && b.v.isError === false, `the other principal's call: ${b.v?.text.slice(0, 300)}`);
    assert.equal(JSON.parse(b.v.text).jobs[0].log.grep.matches, 2);
    assert.ok(b.ms < PROMPT_MS, `${grep}: the other principal waited ${b.ms.toFixed(0)} ms`);
  }
  stack.assertNoSecrets();
});

/** Bob's `tools/list` over plain HTTP: its status (a 503 would show) and how long it took. */
async function listAsBob() {
  const start = performance.now();
  const r = await fetch(stack.worker.mcpUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${PRINCIPALS.bob}`, "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  const text = await r.text();
  return { status: r.status, ms: performance.now() - start, tools: r.status === 200 ? JSON.parse(text).result?.tools?.length : text.slice(0, 200) };
}

test("while a 50 MB log is read, and right after, another principal's calls answer 200 promptly", async () => {
  const expected = (await listAsBob()).tools;
  assert.ok(expected > 0);
  for (const reader of READERS) {
    let done = false;
    const large = stack.call(TOOL, { ...LOGS_REPO, jobId: 504, tailLines: 10, outputFormat: "json" }, reader).finally(() => { done = true; });
    const seen = [];
    while (!done) seen.push({ when: "during", ...(await listAsBob()) });
    for (let i = 0; i < 3; i++) seen.push({ when: "after", ...(await listAsBob()) });
    const r = await large;
    assert.equal(r.isError, false, r.text.slice(0, 300));
    assert.ok(r.text.includes(JOBS[504].decisive));
    assert.ok(seen.filter((s) => s.when === "during").length > 1, "the large log took a while");
    for (const s of seen) {
      assert.deepEqual([s.when, s.status, s.tools], [s.when, 200, expected]);
      assert.ok(s.ms < SHARED_MS, `${reader}: bob's tools/list ${s.when} the log took ${s.ms.toFixed(0)} ms`);
    }
  }
});
