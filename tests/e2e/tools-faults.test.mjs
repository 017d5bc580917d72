// Transport faults between the worker in workerd and the upstream, for tools of every vendor:
// timeouts (UPSTREAM_TIMEOUT_MS), connections reset mid-body or closed without an answer, bodies
// over UPSTREAM_MAX_BYTES (announced, or streamed without end and cut off at the bound), redirects
// to another host (never followed), non-JSON bodies, and vendors without credentials. Each must be
// a clear error result, and no credential may leak into any of them. A body that arrives in uneven
// pieces over time must still be read whole.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startStack, CREDENTIALS as C, networkErrorText, tooLargeErrorText } from "./tools-common.mjs";
import { eventually } from "./worker.mjs";

const TIMEOUT_MS = 1000;
// The smallest bound the worker accepts would keep this fast; 16 MiB (the default) also works, at
// the cost of streaming that much over loopback.
const MAX_BYTES = 1024 * 1024;

/** One read call per vendor, and the upstream path it requests. */
const CALLS = [
  ["github_list_workflow_runs", { owner: "octo-org", repo: "hello-world", perPage: 1 }, "/repos/octo-org/hello-world/actions/runs"],
  ["github_list_workflow_jobs", { owner: "octo-org", repo: "hello-world", runId: 3 }, "/repos/octo-org/hello-world/actions/runs/3/jobs"],
  ["circleci_get", { path: "/me", fresh: true }, "/api/v2/me"],
  ["jira_get", { path: "/rest/api/3/myself" }, "/rest/api/3/myself"],
  ["conf_get", { path: "/wiki/api/v2/spaces" }, "/wiki/api/v2/spaces"],
  ["bb_get", { path: "/user" }, "/2.0/user"],
];

let stack;
let elsewhere;
before(async () => {
  stack = await startStack({ vars: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS), UPSTREAM_MAX_BYTES: String(MAX_BYTES) } });
  // Another host a redirect may point at; it must never be asked anything.
  elsewhere = { requests: [] };
  elsewhere.server = http.createServer((req, res) => { elsewhere.requests.push(req.headers); res.end("{}"); });
  await new Promise((r) => elsewhere.server.listen(0, "127.0.0.2", r));
  elsewhere.url = `http://127.0.0.2:${elsewhere.server.address().port}`;
});
beforeEach(() => stack.upstream.reset());
after(async () => {
  await stack?.close();
  await new Promise((r) => elsewhere?.server.close(r));
});

test("a slow upstream times out after UPSTREAM_TIMEOUT_MS with a clear error", async () => {
  for (const [tool, args, path] of CALLS) {
    stack.upstream.fault({ path, delayMs: TIMEOUT_MS * 3, status: 200, body: {}, times: 1 });
    const start = Date.now();
    const text = await stack.callError(tool, args);
    const took = Date.now() - start;
    assert.match(text, /time(d)? ?out|did not respond/i, `${tool}: ${text}`);
    assert.ok(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS * 3 - 200, `${tool} gave up after ${took} ms`);
  }
});

test("a connection reset mid-body or closed without an answer is a network error result", async () => {
  for (const [tool, args, path] of CALLS) {
    stack.upstream.fault({ path, status: 200, body: JSON.stringify({ data: "x".repeat(5000) }), resetAfterBytes: 100, times: 1 });
    assert.equal(await stack.callError(tool, args), networkErrorText(tool), `${tool} reset`);
    stack.upstream.fault({ path, hangUp: true, times: 1 });
    assert.equal(await stack.callError(tool, args), networkErrorText(tool), `${tool} hang-up`);
  }
});

test("a body announced larger than UPSTREAM_MAX_BYTES is refused", async () => {
  for (const [tool, args, path] of CALLS) {
    stack.upstream.fault({ path, status: 200, bodyBytes: MAX_BYTES + 1, times: 1 });
    assert.equal(await stack.callError(tool, args), tooLargeErrorText(tool, MAX_BYTES), tool);
  }
});

test("an endless body is read as a stream and cut off at the bound", async () => {
  for (const [tool, args, path] of CALLS) {
    const fault = stack.upstream.fault({ path, status: 200, streamBytes: Infinity, times: 1 });
    assert.equal(await stack.callError(tool, args), tooLargeErrorText(tool, MAX_BYTES), tool);
    await eventually(() => fault.clientClosed, `${tool}: the worker hangs up on the stream`);
    assert.ok(fault.bytesSent >= MAX_BYTES, `${tool}: read up to the bound (${fault.bytesSent} bytes sent)`);
    // Kernel socket buffers hold a few MiB beyond what the reader took before it stopped.
    assert.ok(fault.bytesSent < MAX_BYTES + 16 * 1024 * 1024, `${tool}: stopped near the bound (${fault.bytesSent} bytes sent)`);
    assert.equal(fault.clientClosed, true, `${tool}: the worker hung up on the stream`);
  }
});

test("a body that arrives in uneven pieces over time is read whole, with or without its length", async () => {
  // Pieces smaller and larger than one read of the worker's (64 KiB), some splitting a
  // multi-byte character, with pauses so that each read gets what has arrived so far.
  const runs = Array.from({ length: 2500 }, (_, i) => ({ id: i, name: `run ${i} — é ✓ 𝄞` }));
  const body = Buffer.from(JSON.stringify({ total_count: runs.length, workflow_runs: runs }));
  const sizes = [1, 2, 3, 4095, 4097, 70000, 65536, 65537, 10, 30000];
  const path = "/repos/octo-org/hello-world/actions/runs";
  for (const declared of [true, false]) {
    stack.upstream.route("GET", new RegExp(`^${path}$`), async (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", ...(declared ? { "Content-Length": body.length } : {}) });
      for (let at = 0, k = 0; at < body.length; k++) {
        const end = Math.min(body.length, at + sizes[k % sizes.length]);
        res.write(body.subarray(at, end));
        at = end;
        await new Promise((r) => setTimeout(r, 2));
      }
      res.end();
    });
    const out = await stack.callJson("github_list_workflow_runs", {
      owner: "octo-org",
      repo: "hello-world",
      perPage: 100,
      jq: "[total_count, length(workflow_runs), workflow_runs[0].name, workflow_runs[-1]]",
    });
    assert.deepEqual(out.data, [runs.length, runs.length, runs[0].name, runs.at(-1)], `Content-Length ${declared ? "given" : "absent"}`);
    stack.upstream.reset();
  }
});

test("a redirect to another host is an error and is never followed", async () => {
  for (const [tool, args, path] of CALLS) {
    stack.upstream.fault({ path, status: 302, body: "", headers: { Location: `${elsewhere.url}/steal` }, times: 1 });
    const text = await stack.callError(tool, args);
    assert.match(text, /redirect|302/i, `${tool}: ${text}`);
  }
  assert.equal(elsewhere.requests.length, 0, "nothing reached the other host");
});

test("a non-JSON success body is a string value, not an error", async () => {
  for (const [tool, args, path] of CALLS) {
    stack.upstream.fault({ path, status: 200, body: "<html><body>maintenance page</body></html>", headers: { "Content-Type": "text/html" }, times: 1 });
    const r = await stack.call(tool, { ...args, outputFormat: "json" });
    assert.equal(r.isError, false, `${tool}: ${r.text}`);
    const value = JSON.parse(r.text);
    const data = tool.startsWith("github_") || tool === "circleci_get" ? value.data : value;
    assert.equal(data, "<html><body>maintenance page</body></html>", tool);
  }
});

test("vendors without credentials say so, naming the settings, before any request", async () => {
  const bare = await startStack({ credentials: {} });
  try {
    const expect = {
      github_list_workflow_runs: /GITHUB_TOKEN/, github_list_workflow_jobs: /GITHUB_TOKEN/, circleci_get: /CIRCLECI_TOKEN/,
      jira_get: /ATLASSIAN_(USER_EMAIL|API_TOKEN)/, conf_get: /ATLASSIAN_(USER_EMAIL|API_TOKEN)/, bb_get: /ATLASSIAN_BITBUCKET|ATLASSIAN_(USER_EMAIL|API_TOKEN)/,
    };
    for (const [tool, args] of CALLS) {
      const text = await bare.callError(tool, args);
      assert.match(text, expect[tool], `${tool}: ${text}`);
      assert.match(text, /credential|token|not configured|missing|set/i, `${tool}: ${text}`);
    }
    assert.equal(bare.upstream.requests.length, 0);
  } finally {
    await bare.close();
  }
});

test("Bitbucket uses its own username and app password when the Atlassian pair is absent", async () => {
  const bb = await startStack({ credentials: { ATLASSIAN_BITBUCKET_USERNAME: C.ATLASSIAN_BITBUCKET_USERNAME, ATLASSIAN_BITBUCKET_APP_PASSWORD: C.ATLASSIAN_BITBUCKET_APP_PASSWORD } });
  try {
    const r = await bb.call("bb_get", { path: "/user", outputFormat: "json" });
    assert.equal(r.isError, false, r.text);
    const expected = `Basic ${Buffer.from(`${C.ATLASSIAN_BITBUCKET_USERNAME}:${C.ATLASSIAN_BITBUCKET_APP_PASSWORD}`).toString("base64")}`;
    assert.equal(bb.upstream.requests[0].headers.authorization, expected);
    await bb.callError("jira_get", { path: "/rest/api/3/myself" });
    bb.assertNoSecrets();
  } finally {
    await bb.close();
  }
});

test("no credential appears in any result or log line", () => {
  assert.ok(stack.assertNoSecrets().results > 30);
});
