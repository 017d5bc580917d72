// github_list_workflow_runs and github_list_workflow_jobs in workerd against the fake GitHub:
// the {data, nextPage} envelope, paging through Link headers (first, middle, last page), filters,
// jq, argument checks that stop bad input before any request, the credential header, and every
// error status, including the rate-limit 403 and 429 retry hints.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack, CREDENTIALS } from "./tools-common.mjs";
import { githubRateLimitHeaders, GITHUB_RATE_LIMIT_BODY, GITHUB_RUNS } from "./fake-upstream.mjs";

const REPO = { owner: "octo-org", repo: "hello-world" };
const RUNS = "github_list_workflow_runs";
const JOBS = "github_list_workflow_jobs";
let stack;

before(async () => { stack = await startStack(); });
beforeEach(() => stack.upstream.reset());
after(() => stack?.close());

const ids = (data) => data.workflow_runs.map((r) => r.id);

test("runs: the envelope holds the upstream body and the next page from the Link header", async () => {
  const out = await stack.callJson(RUNS, { ...REPO, perPage: 3 });
  assert.deepEqual(Object.keys(out), ["data", "nextPage"]);
  const [req] = stack.upstream.requests;
  assert.equal(req.method, "GET");
  assert.equal(req.path, "/repos/octo-org/hello-world/actions/runs");
  const direct = await (await fetch(`${stack.upstream.url}${req.url}`)).json();
  assert.deepEqual(out.data, direct, "data is the upstream body as it came");
  assert.deepEqual(ids(out.data), [250, 249, 248]);
  assert.equal(out.nextPage, 2);
});

test("runs: GitHub's default page of 30", async () => {
  const out = await stack.callJson(RUNS, { ...REPO, jq: "{total: total_count, ids: workflow_runs[*].id}" });
  assert.equal(out.data.total, GITHUB_RUNS);
  assert.equal(out.data.ids.length, 30);
  assert.equal(out.nextPage, 2);
});

test("runs: the GitHub token, Accept and User-Agent headers reach the API", async () => {
  await stack.callJson(RUNS, { ...REPO, perPage: 1 });
  const { headers } = stack.upstream.requests[0];
  assert.match(headers.authorization, new RegExp(`^(Bearer|token) ${CREDENTIALS.GITHUB_TOKEN}$`));
  assert.match(headers.accept, /application\/vnd\.github\+json/);
  assert.ok(headers["user-agent"], "GitHub refuses requests without a User-Agent");
  assert.equal(headers["circle-token"], undefined);
});

test("runs: first, middle and last page give nextPage 2, 3 and null", async () => {
  const seen = [];
  for (const [page, next] of [[1, 2], [2, 3], [3, null]]) {
    const out = await stack.callJson(RUNS, { ...REPO, perPage: 100, page, jq: "workflow_runs[*].id" });
    assert.equal(out.nextPage, next, `page ${page}`);
    seen.push(...out.data);
  }
  assert.deepEqual(seen, Array.from({ length: GITHUB_RUNS }, (_, i) => GITHUB_RUNS - i), "the three pages cover every run once");
  const queries = stack.upstream.requests.map((r) => [r.query.get("per_page"), r.query.get("page")]);
  assert.deepEqual(queries.map(([pp]) => pp), ["100", "100", "100"]);
  assert.deepEqual(queries.slice(1).map(([, p]) => p), ["2", "3"]);
  assert.ok([null, "1"].includes(queries[0][1]), "page 1 is the default");
});

test("runs: a page past the end is empty with nextPage null", async () => {
  const out = await stack.callJson(RUNS, { ...REPO, perPage: 100, page: 9 });
  assert.deepEqual(out.data.workflow_runs, []);
  assert.equal(out.nextPage, null);
});

test("runs: workflowId as a number or a file name selects that workflow's runs", async () => {
  for (const workflowId of [1001, "release.yml"]) {
    stack.upstream.reset();
    const out = await stack.callJson(RUNS, { ...REPO, workflowId, perPage: 50, jq: "workflow_runs[*].workflow_id" });
    assert.ok(out.data.length > 0);
    assert.ok(out.data.every((id) => id === 1001), `${workflowId}: only workflow 1001`);
    assert.equal(out.nextPage, 2, "83 runs in pages of 50");
    assert.equal(stack.upstream.requests[0].path, `/repos/octo-org/hello-world/actions/workflows/${workflowId}/runs`);
  }
});

test("runs: branch, status, event and actor filters are sent and honoured", async () => {
  const out = await stack.callJson(RUNS, { ...REPO, branch: "feature/x", status: "success", event: "push", actor: "hubot", perPage: 100 });
  const q = stack.upstream.requests[0].query;
  assert.equal(q.get("branch"), "feature/x");
  assert.equal(q.get("status"), "success");
  assert.equal(q.get("event"), "push");
  assert.equal(q.get("actor"), "hubot");
  assert.ok(out.data.workflow_runs.length > 0);
  for (const run of out.data.workflow_runs) {
    assert.equal(run.head_branch, "feature/x");
    assert.equal(run.conclusion, "success");
    assert.equal(run.event, "push");
    assert.equal(run.actor.login, "hubot");
  }
  assert.equal(out.nextPage, null);
});

test("runs: jq projects each run, in TOON by default", async () => {
  const jq = "workflow_runs[*].{id: id, status: status, conclusion: conclusion}";
  const out = await stack.callJson(RUNS, { ...REPO, perPage: 5, jq });
  assert.deepEqual(out.data[0], { id: 250, status: "in_progress", conclusion: null });
  assert.equal(out.data.length, 5);
  const toon = await stack.call(RUNS, { ...REPO, perPage: 5, jq });
  assert.equal(toon.isError, false);
  assert.match(toon.text, /^data\[5\]\{id,status,conclusion\}:$/m, "a tabular TOON array");
  assert.match(toon.text, /^ {2}250,in_progress,null$/m);
  assert.match(toon.text, /^nextPage: 2$/m);
});

test("runs: an invalid jq expression yields _jqError with the original data, not an error result", async () => {
  const out = await stack.callJson(RUNS, { ...REPO, perPage: 1, jq: "workflow_runs[?" });
  assert.equal(typeof out.data._jqError, "string");
  assert.equal(out.data._originalData.workflow_runs.length, 1);
  assert.equal(out.nextPage, 2);
});

test("runs: the 300 KB page of 100 runs is truncated to MCP_TEXT_MAX_CHARS with the notice", async () => {
  const r = await stack.call(RUNS, { ...REPO, perPage: 100, outputFormat: "json" });
  assert.equal(r.isError, false);
  assert.ok(r.text.length <= 40_000 + 2_000, "the text respects MCP_TEXT_MAX_CHARS");
  assert.match(r.text, /Response Truncated/);
  assert.equal(stack.upstream.requests.length, 1);
});

test("runs and jobs: bad arguments are refused before any request", async () => {
  const bad = [
    [RUNS, { ...REPO, perPage: 0 }], [RUNS, { ...REPO, perPage: 101 }], [RUNS, { ...REPO, page: 0 }],
    [RUNS, { owner: "octo-org" }], [RUNS, { ...REPO, workflowId: "../../../user" }], [RUNS, { ...REPO, workflowId: "a/b.yml" }],
    [RUNS, { ...REPO, outputFormat: "xml" }], [JOBS, { ...REPO }], [JOBS, { ...REPO, runId: 1, filter: "newest" }],
    [JOBS, { ...REPO, runId: "1/../../x" }],
  ];
  for (const [tool, args] of bad) await stack.callError(tool, args);
  assert.equal(stack.upstream.requests.length, 0, "no upstream request for refused arguments");
});

test("runs: owner and repo cannot steer the request off /repos/{owner}/{repo}: each is refused before any request, naming the argument", async () => {
  const attempts = [
    ["owner", { owner: "octo-org/../../user", repo: "x" }], ["owner", { owner: "..", repo: ".." }],
    ["repo", { owner: "octo-org", repo: "r?per_page=1" }], ["repo", { owner: "octo-org", repo: "r#frag" }],
    ["owner", { owner: "https://evil.example", repo: "x" }], ["owner", { owner: "a\\b", repo: "x" }],
    ["owner", { owner: "a\u0000b", repo: "x" }], ["repo", { owner: "octo-org", repo: "x/../../../orgs" }],
  ];
  for (const [field, args] of attempts) {
    const r = await stack.call(RUNS, args);
    assert.equal(r.isError, true, `${JSON.stringify(args)}: ${r.text}`);
    assert.ok(
      r.text.startsWith(`Invalid arguments for tool ${RUNS}: ${field} must be a GitHub name (letters, digits, '-', '_' and '.'), not "`),
      `${JSON.stringify(args)}: ${r.text}`,
    );
    assert.deepEqual(stack.upstream.requests.map((q) => q.url), [], `${JSON.stringify(args)} sent nothing`);
  }
});

test("jobs: filter all includes earlier attempts; latest is the default", async () => {
  const latest = await stack.callJson(JOBS, { ...REPO, runId: 14, jq: "jobs[*].run_attempt" });
  assert.deepEqual(latest.data, [2, 2, 2]);
  assert.equal(latest.nextPage, null);
  const all = await stack.callJson(JOBS, { ...REPO, runId: 14, filter: "all", jq: "jobs[*].run_attempt" });
  assert.deepEqual(all.data, [2, 2, 2, 1, 1, 1]);
  const [first, second] = stack.upstream.requests;
  assert.equal(first.path, "/repos/octo-org/hello-world/actions/runs/14/jobs");
  assert.ok([null, "latest"].includes(first.query.get("filter")));
  assert.equal(second.query.get("filter"), "all");
});

test("jobs: first, middle and last page of a 25-job matrix", async () => {
  const names = [];
  for (const [page, next] of [[1, 2], [2, 3], [3, null]]) {
    const out = await stack.callJson(JOBS, { ...REPO, runId: 250, perPage: 10, page, jq: "jobs[*].name" });
    assert.equal(out.nextPage, next, `page ${page}`);
    names.push(...out.data);
  }
  assert.equal(names.length, 25);
  assert.equal(new Set(names).size, 25);
});

test("jobs: an unknown run is a 404 error result", async () => {
  const text = await stack.callError(JOBS, { ...REPO, runId: 999999 });
  assert.match(text, /not found|404/i);
});

test("GitHub's rate-limit 403 says when the limit resets", async () => {
  const reset = Math.floor(Date.now() / 1000) + 600;
  stack.upstream.fault({ path: "/repos/", status: 403, headers: githubRateLimitHeaders(reset), body: GITHUB_RATE_LIMIT_BODY, times: 1 });
  const text = await stack.callError(RUNS, REPO);
  assert.match(text, /rate limit/i);
  const when = new Date(reset * 1000).toISOString().slice(0, 19);
  assert.ok(text.includes(when) || /\b(59\d|600)\b/.test(text), `the reset time (${when}Z, ~600 s) is named: ${text}`);
});

test("a 403 that is not a rate limit is a permission error, without a retry time", async () => {
  stack.upstream.fault({ path: "/repos/", status: 403, body: { message: "Resource not accessible by integration", documentation_url: "https://docs.github.com/rest", status: "403" }, times: 1 });
  const text = await stack.callError(RUNS, REPO);
  assert.match(text, /Resource not accessible by integration|permission|forbidden|403/i);
  assert.doesNotMatch(text, /retry after|try again at/i);
});

test("429 with Retry-After says how long to wait; without it, still a clear rate-limit error", async () => {
  stack.upstream.fault({ path: "/repos/", status: 429, headers: { "Retry-After": "137" }, body: { message: "You have exceeded a secondary rate limit." }, times: 1 });
  const text = await stack.callError(RUNS, REPO);
  assert.match(text, /137/);
  assert.match(text, /rate limit|too many/i);
  stack.upstream.fault({ path: "/repos/", status: 429, body: "", times: 1 });
  assert.match(await stack.callError(RUNS, REPO), /rate limit|too many|429/i);
});

test("every other error status is an error result naming GitHub and what went wrong", async () => {
  const cases = [
    [400, { message: "Invalid request." }], [401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" }],
    [404, { message: "Not Found" }], [409, { message: "Conflict" }], [422, { message: "Validation Failed", errors: [] }],
    [500, { message: "Server Error" }], [502, "<html><body>Bad Gateway</body></html>"], [503, ""],
  ];
  for (const [status, body] of cases) {
    stack.upstream.fault({ path: "/repos/", status, body, times: 1, headers: typeof body === "string" ? { "Content-Type": "text/html" } : {} });
    const text = await stack.callError(JOBS, { ...REPO, runId: 1 });
    assert.match(text, /GitHub/, `${status}: names the vendor: ${text}`);
    const said = typeof body === "object" ? body.message : String(status);
    assert.ok(text.includes(said) || text.includes(String(status)), `${status}: says what went wrong: ${text}`);
  }
});

test("concurrent calls in one isolate each get their own answer", async () => {
  const calls = [];
  for (let page = 1; page <= 8; page++) {
    calls.push(stack.callJson(RUNS, { ...REPO, perPage: 30, page, jq: "workflow_runs[*].id" }, page % 2 ? "alice" : "bob")
      .then((out) => ({ page, out })));
    calls.push(stack.callJson("jira_get", { path: `/rest/api/3/issue/PROJ-${page}`, jq: "key" }).then((out) => ({ key: out, page })));
  }
  for (const { page, out, key } of await Promise.all(calls)) {
    if (key !== undefined) {
      assert.equal(key, `PROJ-${page}`);
    } else {
      const first = GITHUB_RUNS - (page - 1) * 30;
      assert.deepEqual(out.data, Array.from({ length: Math.max(0, Math.min(30, first)) }, (_, i) => first - i), `page ${page}`);
      assert.equal(out.nextPage, page < 9 ? page + 1 : null);
    }
  }
  assert.equal(stack.upstream.requests.length, 16);
});

test("no credential appears in any result or log line", () => {
  const seen = stack.assertNoSecrets();
  assert.ok(seen.results > 20);
});
