// The CI loop in workerd through the official SDK client, against a fake GitHub whose run changes
// state: read the failed run and its failed jobs, re-run the failed jobs, wait for the new attempt
// (polls revalidated with ETags and answered 304), a Retry-After honoured, GitHub's refusals of
// writes as clear errors sent once, a dispatch that names its run, read-only connections without
// the writes, and the github toolset's tools/list under 3,000 tokens.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import http from "node:http";
import { startStack, PRINCIPALS } from "./tools-common.mjs";
import { startWorker } from "./worker.mjs";
import { ciLoopRun, CI_LOOP_BASE, CI_LOOP_REPO } from "./fake/ciloop.mjs";

const REPO = CI_LOOP_REPO;
const BASE = CI_LOOP_BASE;
let stack;
/** The fake run's state. */
let run;

before(async () => {
  stack = await startStack({ vars: { MCP_STRUCTURED_OUTPUT: "true" }, listTools: true });
});
after(() => stack?.close());
beforeEach(() => {
  stack.upstream.reset();
  run = ciLoopRun(stack.upstream);
  routes(stack.upstream);
});

/** The refusals and the dispatch the tests ask for, beside the run. */
function routes(upstream) {
  upstream.route("POST", new RegExp(`^${BASE}/runs/1/rerun-failed-jobs$`), (_req, res, _m, { json }) => {
    json(res, 403, { message: "Unable to re-run this workflow run because it was created over a month ago", documentation_url: "https://docs.github.com/rest" });
  });
  upstream.route("POST", new RegExp(`^${BASE}/runs/4242/cancel$`), (_req, res, _m, { json }) => {
    json(res, 409, { message: "Cannot cancel a workflow run that is completed." });
  });
  upstream.route("POST", new RegExp(`^${BASE}/workflows/deploy\\.yml/dispatches$`), (_req, res, _m, { json }) => {
    json(res, 200, { workflow_run_id: 5150, run_url: "x", html_url: "https://github.com/octo-org/hello-world/actions/runs/5150" });
  });
  upstream.route("POST", new RegExp(`^${BASE}/workflows/lint\\.yml/dispatches$`), (_req, res, _m, { json }) => {
    json(res, 422, { message: "Workflow does not have 'workflow_dispatch' trigger" });
  });
}

const posts = () => stack.upstream.requests.filter((r) => r.method === "POST");

test("the loop: a failed run, its failed jobs, a re-run, and a wait answered mostly by 304s", async () => {
  const first = await stack.call("github_get_workflow_run", { ...REPO, runId: 4242 });
  assert.equal(first.isError, false, first.text);
  const data = first.result.structuredContent.data;
  assert.equal(data.run.conclusion, "failure");
  assert.deepEqual(data.failedJobs, [{ id: 72, name: "test", conclusion: "failure", failedStep: "Run tests" }]);
  assert.equal(data.completed, true);

  const rerun = await stack.call("github_rerun_workflow_run", { ...REPO, runId: 4242 });
  assert.equal(rerun.isError, false, rerun.text);
  assert.match(rerun.text, /^attempt: 2$/m);
  assert.equal(rerun.result.structuredContent, undefined, "the writes are text only");
  assert.deepEqual(posts().map((r) => [r.path, r.body]), [[`${BASE}/runs/4242/rerun-failed-jobs`, '{"enable_debug_logging":false}']]);

  run.polls = 0;
  run.notModified = 0;
  const started = Date.now();
  const waited = await stack.call("github_get_workflow_run", { ...REPO, runId: 4242, waitSeconds: 60 });
  assert.equal(waited.isError, false, waited.text);
  const after = waited.result.structuredContent.data;
  assert.equal(after.completed, true);
  assert.equal(after.run.conclusion, "success");
  assert.equal(after.run.attempt, 2);
  assert.deepEqual(after.failedJobs, []);
  // Polls at 0 and 5 s answer in_progress with the ETag the re-run's read-back kept (304s), the
  // third at 15 s completed (a 200).
  assert.equal(after.polls, 3);
  assert.equal(after.revalidated, 2);
  assert.ok(after.waitedMs >= 15_000 && after.waitedMs < 20_000, `waitedMs ${after.waitedMs}`);
  assert.ok(Date.now() - started >= 15_000, "the worker really waited");
  const conditional = stack.upstream.requests.filter((r) => r.path === `${BASE}/runs/4242` && r.headers["if-none-match"]);
  assert.ok(conditional.length >= 2, "polls carry If-None-Match");
  stack.assertNoSecrets();
});

test("a client that asks for progress hears the wait as it goes, on an event stream", async () => {
  Object.assign(run, { completed: false, conclusion: "success", pollsLeft: 2 });
  const notes = [];
  const client = await stack.client();
  const result = await client.callTool(
    { name: "github_get_workflow_run", arguments: { ...REPO, runId: 4242, waitSeconds: 60 } },
    undefined,
    { onprogress: (p) => notes.push(p), timeout: 60_000 },
  );
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent.data.completed, true);
  // Polls at 0 and 5 s find the run going; the one at 15 s finds it completed.
  assert.deepEqual(notes.map((n) => [n.progress, n.total]), [[0, 60], [5, 60]]);
  assert.match(notes[1].message, /^in_progress; 2 polls, 5 s of 60 s$/);
});

test("a wait stops polling once its client has gone away", async () => {
  Object.assign(run, { completed: false, conclusion: "success", pollsLeft: 1000 });
  const url = new URL(stack.worker.mcpUrl);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: {
    name: "github_get_workflow_run", arguments: { ...REPO, runId: 4242, waitSeconds: 120 }, _meta: { progressToken: "gone-1" } } });
  const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent: false, headers: {
    "content-type": "application/json", accept: "application/json, text/event-stream",
    authorization: `Bearer ${PRINCIPALS.alice}`, "mcp-protocol-version": "2025-06-18" } });
  const first = new Promise((resolve, reject) => {
    req.on("response", (res) => {
      assert.equal(res.headers["content-type"], "text/event-stream");
      res.once("data", (chunk) => resolve(chunk.toString()));
    });
    req.on("error", reject);
  });
  req.end(body);
  const event = await first;
  assert.match(event, /^event: message\ndata: \{"jsonrpc":"2.0","method":"notifications\/progress","params":\{"progressToken":"gone-1","progress":0,/);
  req.destroy();
  const atClose = run.polls;
  // Polls would follow at 5 and 15 s: the first tells the worker its client is gone, and there
  // is no second.
  await new Promise((resolve) => setTimeout(resolve, 20_000));
  assert.ok(run.polls - atClose <= 1, `${run.polls - atClose} polls after the client went away`);
});

test("a Retry-After within the wait is honoured, and the run answered", async () => {
  stack.upstream.fault({ path: `${BASE}/runs/4242`, method: "GET", status: 429, headers: { "Retry-After": "1" },
    body: { message: "You have exceeded a secondary rate limit" }, times: 1 });
  const r = await stack.call("github_get_workflow_run", { ...REPO, runId: 4242, waitSeconds: 30 });
  assert.equal(r.isError, false, r.text);
  const data = r.result.structuredContent.data;
  assert.equal(data.polls, 2);
  assert.equal(data.completed, true);
  // Without a wait the limit fails the call with GitHub's reason and when to retry.
  stack.upstream.fault({ path: `${BASE}/runs/4242`, method: "GET", status: 429, headers: { "Retry-After": "30" },
    body: { message: "You have exceeded a secondary rate limit" }, times: 1 });
  const text = await stack.callError("github_get_workflow_run", { ...REPO, runId: 4242 });
  assert.match(text, /^Error: Rate limit exceeded\. GitHub API: You have exceeded a secondary rate limit\. Retry after 30 seconds/);
});

test("GitHub's refusals are clear errors, each write sent once", async () => {
  const cases = [
    ["github_rerun_workflow_run", { ...REPO, runId: 1 }, "Error: GitHub refused to re-run run 1 (HTTP 403): Unable to re-run this workflow run because it was created over a month ago. Nothing was retried."],
    ["github_cancel_workflow_run", { ...REPO, runId: 4242 }, "Error: GitHub refused to cancel run 4242 (HTTP 409): Cannot cancel a workflow run that is completed. Nothing was retried."],
    ["github_dispatch_workflow", { ...REPO, workflow: "lint.yml", ref: "main" }, "Error: GitHub refused to dispatch workflow lint.yml (HTTP 422): Workflow does not have 'workflow_dispatch' trigger. Nothing was retried."],
  ];
  for (const [tool, args, expected] of cases) {
    stack.upstream.reset();
    routes(stack.upstream);
    assert.equal(await stack.callError(tool, args), expected);
    assert.equal(stack.upstream.requests.length, 1, `${tool}: one request`);
  }
  const missing = await stack.callError("github_get_workflow_run", { ...REPO, runId: 999999 });
  assert.match(missing, /^Error: Resource not found/);
});

test("a dispatch answers the run GitHub names", async () => {
  const r = await stack.call("github_dispatch_workflow", { ...REPO, workflow: "deploy.yml", ref: "main", inputs: { environment: "staging" } });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /^runId: 5150$/m);
  const [sent] = posts();
  assert.deepEqual(JSON.parse(sent.body), { ref: "main", inputs: { environment: "staging" }, return_run_details: true });
});

/** tools/list at `path` of `worker` under 2025-11-25: the tools. */
async function list(worker, path, token) {
  const r = await fetch(`${worker.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${token}`, "MCP-Protocol-Version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body.result.tools;
}

test("read-only connections get no writes; the github toolset lists under 3,000 tokens", async () => {
  const token = "e2e-ciloop-token-0123456789abcdef";
  const worker = await startWorker({ vars: { MCP_AUTH_TOKENS: JSON.stringify({ ci: token }) } });
  try {
    const writes = ["github_rerun_workflow_run", "github_cancel_workflow_run", "github_dispatch_workflow"];
    const github = await list(worker, "/mcp/x/github", token);
    for (const name of writes) {
      const tool = github.find((t) => t.name === name);
      assert.equal(tool?.annotations.readOnlyHint, false, name);
    }
    assert.equal(github.find((t) => t.name === "github_cancel_workflow_run").annotations.destructiveHint, true);
    for (const path of ["/mcp/readonly", "/mcp/x/github/readonly"]) {
      const names = (await list(worker, path, token)).map((t) => t.name);
      assert.ok(names.includes("github_get_workflow_run"), path);
      for (const name of writes) assert.ok(!names.includes(name), `${path} lists ${name}`);
    }
    const tokens = countTokens(JSON.stringify(github));
    assert.ok(tokens < 3000, `/mcp/x/github lists ${tokens} tokens`);
  } finally {
    await worker.close();
  }
});
