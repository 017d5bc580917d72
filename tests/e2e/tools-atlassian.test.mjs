// The 15 Atlassian passthrough tools (jira_*, conf_*, bb_*) in workerd against the fake Jira,
// Confluence and Bitbucket: the request each verb sends (method, URL, body, Basic credentials per
// vendor), the bare-body text, 204 and empty bodies, text bodies, paging links passed through,
// path injection refused before any request, and error results.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack, CREDENTIALS as C, basic } from "./tools-common.mjs";

let stack;
before(async () => { stack = await startStack(); });
beforeEach(() => stack.upstream.reset());
after(() => stack?.close());

const JIRA_AUTH = basic(C.ATLASSIAN_USER_EMAIL, C.ATLASSIAN_API_TOKEN);
// Bitbucket takes the Atlassian pair when both are set, like the reference server (docs/parity.md).
const BB_AUTH = JIRA_AUTH;

function only(method) {
  const reqs = stack.upstream.requests;
  assert.equal(reqs.length, 1, `one upstream request, got ${reqs.map((r) => `${r.method} ${r.url}`).join(", ")}`);
  assert.equal(reqs[0].method, method);
  return reqs[0];
}

test("jira_get: the issue as the bare body, Basic email:token, JSON headers", async () => {
  const issue = await stack.callJson("jira_get", { path: "/rest/api/3/issue/PROJ-7" });
  assert.equal(issue.key, "PROJ-7");
  const req = only("GET");
  assert.equal(req.url, "/rest/api/3/issue/PROJ-7");
  assert.equal(req.headers.authorization, JIRA_AUTH);
  assert.equal(req.headers.accept, "application/json");
  assert.equal(req.body, "");
});

test("jira_get: a search page with queryParams, nextPageToken passed through", async () => {
  const jq = "{count: length(issues), first: issues[0].key, isLast: isLast, next: nextPageToken}";
  const page1 = await stack.callJson("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ ORDER BY key", maxResults: "50", fields: "summary,status" }, jq });
  assert.deepEqual([page1.count, page1.first, page1.isLast], [50, "PROJ-1", false]);
  assert.equal(typeof page1.next, "string");
  assert.equal(only("GET").url, "/rest/api/3/search/jql?jql=project+%3D+PROJ+ORDER+BY+key&maxResults=50&fields=summary%2Cstatus");
  stack.upstream.reset();
  const page2 = await stack.callJson("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "50", nextPageToken: page1.next }, jq });
  assert.deepEqual([page2.count, page2.first, page2.isLast], [50, "PROJ-51", false]);
  const page3 = await stack.callJson("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "50", nextPageToken: page2.next }, jq });
  assert.deepEqual([page3.count, page3.first, page3.isLast, page3.next], [20, "PROJ-101", true, null]);
  assert.equal(stack.upstream.requests.at(-1).query.get("nextPageToken"), page2.next);
});

test("jira_get: TOON by default, jq projects", async () => {
  const r = await stack.call("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "3" }, jq: "issues[*].{key: key, status: fields.status.name}" });
  assert.equal(r.isError, false);
  assert.equal(r.text, "[3]{key,status}:\n  PROJ-1,In Progress\n  PROJ-2,In Progress\n  PROJ-3,Done");
});

test("jira_post: the body is sent as JSON and the 201 body returned", async () => {
  const body = { fields: { project: { key: "PROJ" }, summary: "Flaky test in CI", issuetype: { name: "Bug" } } };
  const created = await stack.callJson("jira_post", { path: "/rest/api/3/issue", body });
  assert.match(created.key, /^PROJ-\d+$/);
  const req = only("POST");
  assert.deepEqual(JSON.parse(req.body), body);
  assert.equal(req.headers["content-type"], "application/json");
  assert.equal(req.headers.authorization, JIRA_AUTH);
});

test("jira_put and jira_delete: 204 renders {} in JSON and nothing in TOON", async () => {
  const put = await stack.call("jira_put", { path: "/rest/api/3/issue/PROJ-3", body: { fields: { summary: "Renamed" } }, outputFormat: "json" });
  assert.deepEqual([put.isError, put.text], [false, "{}"]);
  assert.deepEqual(JSON.parse(only("PUT").body), { fields: { summary: "Renamed" } });
  stack.upstream.reset();
  const del = await stack.call("jira_delete", { path: "/rest/api/3/issue/PROJ-3", queryParams: { deleteSubtasks: "true" } });
  assert.deepEqual([del.isError, del.text], [false, ""]);
  const req = only("DELETE");
  assert.equal(req.url, "/rest/api/3/issue/PROJ-3?deleteSubtasks=true");
  assert.equal(req.body, "", "a delete sends no body");
});

test("jira_patch sends PATCH with its body", async () => {
  stack.upstream.route("PATCH", /^\/rest\/api\/3\/issue\/PROJ-1\/comment\/(\d+)$/, (req, res, m, { json }) => json(res, 200, { id: m[1], patched: JSON.parse(req.body) }));
  const out = await stack.callJson("jira_patch", { path: "/rest/api/3/issue/PROJ-1/comment/5", body: { visibility: null } });
  assert.deepEqual(out, { id: "5", patched: { visibility: null } });
  only("PATCH");
});

test("jira_post to transitions: 204 is an empty success", async () => {
  const r = await stack.call("jira_post", { path: "rest/api/3/issue/PROJ-2/transitions", body: { transition: { id: "31" } } });
  assert.deepEqual([r.isError, r.text], [false, ""]);
  assert.equal(only("POST").path, "/rest/api/3/issue/PROJ-2/transitions", "a leading slash is added");
});

test("conf_get: v2 pages with cursor paging and v1 CQL search", async () => {
  const page = await stack.callJson("conf_get", { path: "/wiki/api/v2/pages", queryParams: { limit: "5" } });
  assert.equal(page.results.length, 5);
  assert.match(page._links.next, /^\/wiki\/api\/v2\/pages\?limit=5&cursor=/);
  assert.equal(only("GET").headers.authorization, JIRA_AUTH);
  stack.upstream.reset();
  const cursor = new URLSearchParams(page._links.next.split("?")[1]).get("cursor");
  const next = await stack.callJson("conf_get", { path: "/wiki/api/v2/pages", queryParams: { limit: "5", cursor } });
  assert.equal(next.results[0].id, "2006");
  stack.upstream.reset();
  const search = await stack.callJson("conf_get", { path: "/wiki/rest/api/search", queryParams: { cql: 'type=page AND space="OPS"', limit: "2" }, jq: "results[*].title" });
  assert.deepEqual(search, ["Runbook 1", "Runbook 2"]);
  assert.equal(only("GET").url, "/wiki/rest/api/search?cql=type%3Dpage+AND+space%3D%22OPS%22&limit=2");
});

test("conf_post, conf_put, conf_patch, conf_delete", async () => {
  const created = await stack.callJson("conf_post", { path: "/wiki/api/v2/pages", body: { spaceId: "42", status: "current", title: "New runbook", body: { representation: "storage", value: "<p>Hi</p>" } } });
  assert.equal(created.title, "New runbook");
  assert.equal(JSON.parse(only("POST").body).title, "New runbook");
  stack.upstream.reset();
  const updated = await stack.callJson("conf_put", { path: "/wiki/api/v2/pages/2003", body: { id: "2003", status: "current", title: "Renamed", version: { number: 5 } } });
  assert.deepEqual([updated.title, updated.version.number], ["Renamed", 5]);
  only("PUT");
  stack.upstream.reset();
  stack.upstream.route("PATCH", /^\/wiki\/api\/v2\/pages\/2003\/properties\/7$/, (req, res) => { res.writeHead(200); res.end(); });
  const patched = await stack.call("conf_patch", { path: "/wiki/api/v2/pages/2003/properties/7", body: { value: 1 }, outputFormat: "json" });
  assert.deepEqual([patched.isError, patched.text], [false, "{}"], "an empty 200 body is {}");
  only("PATCH");
  stack.upstream.reset();
  const deleted = await stack.call("conf_delete", { path: "/wiki/api/v2/pages/2003" });
  assert.deepEqual([deleted.isError, deleted.text], [false, ""]);
  only("DELETE");
});

test("bb_get: /2.0 is prefixed, the page's next URL passes through", async () => {
  const page = await stack.callJson("bb_get", { path: "/repositories/acme", queryParams: { pagelen: "10", page: "2" } });
  assert.equal(page.values.length, 10);
  assert.equal(page.values[0].slug, "repo-11");
  assert.match(page.next, /\/2\.0\/repositories\/acme\?pagelen=10&page=3$/);
  const req = only("GET");
  assert.equal(req.url, "/2.0/repositories/acme?pagelen=10&page=2");
  assert.equal(req.headers.authorization, BB_AUTH);
  stack.upstream.reset();
  const last = await stack.callJson("bb_get", { path: "/2.0/repositories/acme", queryParams: { pagelen: "10", page: "3" } });
  assert.equal(last.values.length, 3);
  assert.equal(last.next, undefined);
  assert.equal(only("GET").path, "/2.0/repositories/acme", "an existing /2.0 prefix is kept once");
});

test("bb_get: a text/plain diff is a string value, quoted in TOON and JSON alike", async () => {
  const toon = await stack.call("bb_get", { path: "/repositories/acme/widgets/diff/main..topic-3" });
  const json = await stack.call("bb_get", { path: "/repositories/acme/widgets/diff/main..topic-3", outputFormat: "json" });
  assert.equal(toon.isError, false);
  const diff = JSON.parse(json.text);
  assert.match(diff, /^diff --git a\/src\/main\.rs b\/src\/main\.rs\n/);
  assert.match(diff, /\+ {4}\/\/ spec main\.\.topic-3\n/);
  assert.equal(toon.text, json.text, "a root string renders the same in TOON and JSON");
  const lines = await stack.callJson("bb_get", { path: "/repositories/acme/widgets/diff/main..topic-3", jq: "length(@)" });
  assert.equal(lines, diff.length, "jq runs over string bodies too");
});

test("bb_post, bb_put, bb_patch, bb_delete", async () => {
  const pr = await stack.callJson("bb_post", { path: "/repositories/acme/widgets/pullrequests", body: { title: "Add CI", source: { branch: { name: "ci" } } } });
  assert.deepEqual([pr.id, pr.title], [13, "Add CI"]);
  const post = only("POST");
  assert.equal(post.path, "/2.0/repositories/acme/widgets/pullrequests");
  assert.equal(post.headers.authorization, BB_AUTH);
  stack.upstream.reset();
  const put = await stack.callJson("bb_put", { path: "/repositories/acme/widgets/pullrequests/4", body: { title: "Retitled" } });
  assert.equal(put.title, "Retitled");
  only("PUT");
  stack.upstream.reset();
  stack.upstream.route("PATCH", /^\/2\.0\/repositories\/acme\/widgets\/issues\/1$/, (req, res, m, { json }) => json(res, 202, { status: "accepted" }));
  assert.deepEqual(await stack.callJson("bb_patch", { path: "/repositories/acme/widgets/issues/1", body: { state: "resolved" } }), { status: "accepted" });
  only("PATCH");
  stack.upstream.reset();
  const del = await stack.call("bb_delete", { path: "/repositories/acme/widgets/refs/branches/topic-3", outputFormat: "json" });
  assert.deepEqual([del.isError, del.text], [false, "{}"]);
  assert.equal(only("DELETE").path, "/2.0/repositories/acme/widgets/refs/branches/topic-3");
});

test("writes without a body object are refused before any request", async () => {
  for (const tool of ["jira_post", "conf_put", "bb_patch"]) {
    await stack.callError(tool, { path: "/x" });
    await stack.callError(tool, { path: "/x", body: "not an object" });
  }
  assert.equal(stack.upstream.requests.length, 0);
});

test("path injection is refused before any request, for every vendor", async () => {
  const attempts = [
    "https://evil.example/rest/api/3/myself", "//evil.example/x", "/rest/api/3/../../../../admin", "/../x",
    "/rest/api/3/issue/PROJ-1@evil.example", "/rest\\api", "/rest/api/3/myself\u0007", "/x\r\nHost: evil.example",
    "%2e%2e/x", "javascript:alert(1)",
  ];
  for (const tool of ["jira_get", "conf_delete", "bb_get", "bb_post"]) {
    for (const path of attempts) await stack.callError(tool, { path, ...(tool.endsWith("post") ? { body: {} } : {}) });
  }
  assert.equal(stack.upstream.requests.length, 0, stack.upstream.requests.map((r) => r.url).join(" "));
});

test("upstream errors are error results in the reference servers' words", async () => {
  const notFound = await stack.call("jira_get", { path: "/rest/api/3/issue/NOPE-1" });
  assert.equal(notFound.isError, true);
  assert.equal(notFound.text, 'Error: API not found. Verify the ID is correct and that you have access to this api.\nJira API Error: {"errorMessages":["Issue does not exist or you do not have permission to see it."],"errors":{}}');
  const jql = await stack.call("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project =" } });
  assert.equal(jql.isError, true);
  assert.match(jql.text, /^Error: 400 Bad Request: Error in the JQL Query|Error in the JQL Query/);
  const bb = await stack.call("bb_get", { path: "/repositories/missing-ws" });
  assert.equal(bb.isError, true);
  assert.match(bb.text, /^Error: .*\nHTTP Status: 404\n\nRaw API Response:\n/s);
  assert.match(bb.text, /Workspace not found/);
});

test("every error status is an error result for each Atlassian vendor", async () => {
  for (const [tool, path, prefix] of [["jira_get", "/rest/api/3/myself", ""], ["conf_get", "/wiki/api/v2/spaces", ""], ["bb_get", "/user", "/2.0"]]) {
    for (const status of [400, 401, 403, 404, 409, 429, 500, 502, 503]) {
      stack.upstream.fault({ path: `${prefix}${path}`, status, body: { message: `scripted ${status}` }, times: 1 });
      const text = await stack.callError(tool, { path });
      assert.ok(text.startsWith("Error: "), `${tool} ${status}: ${text}`);
    }
  }
});

test("no credential appears in any result or log line", () => {
  assert.ok(stack.assertNoSecrets().results > 40);
});
