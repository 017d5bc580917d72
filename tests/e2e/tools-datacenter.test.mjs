// Jira and Confluence Data Center (ATLASSIAN_FLAVOR=datacenter, decision 0107) in workerd through
// the official client, against fakes shaped like Data Center's answers: each product on its own
// root with a context path and its own personal access token sent as a bearer token, Jira REST v2
// with startAt/maxResults paging, Confluence /rest/api content and CQL search with start/limit,
// tools/list describing that API, Cloud paths refused naming it, an expired token's 401 naming
// its setting, a Cloudflare Access service token sent to its own product only and scrubbed from
// echoes, and no token in any result or log line.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";

const TOKENS = {
  JIRA_PERSONAL_TOKEN: "NjE2Mzg5NDU2ODk5OkDcJiraPat0123456789abcdef",
  CONFLUENCE_PERSONAL_TOKEN: "MzQ1Njc4OTAxMjM0OkDcConfluencePat0123456789",
  // Jira sits behind Cloudflare Access; Confluence does not.
  JIRA_CF_ACCESS_CLIENT_ID: "0d3a9c5e7f1b2e4a6c8d0f1a3b5c7d9e.access",
  JIRA_CF_ACCESS_CLIENT_SECRET: "e2eCfAccessClientSecret0123456789abcdef0123456789abcdef",
};

let upstream;
let stack;
before(async () => {
  upstream = await startFakeUpstream();
  stack = await startStack({
    upstream,
    vars: {
      ATLASSIAN_FLAVOR: "datacenter",
      // Cloud's root is a Cloud setting: blank (unset) on a Data Center deployment.
      ATLASSIAN_BASE_URL: "",
      JIRA_BASE_URL: `${upstream.url}/jira`,
      CONFLUENCE_BASE_URL: `${upstream.url}/confluence`,
    },
    secrets: TOKENS,
    listTools: true,
  });
});
beforeEach(() => { stack.upstream.reset(); dataCenterRoutes(); });
after(async () => { await stack?.close(); await upstream?.close(); });

const ISSUES = 7;
const issue = (base, n) => ({
  expand: "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
  id: String(10000 + n), self: `${base}/jira/rest/api/2/issue/${10000 + n}`, key: `DC-${n}`,
  fields: { summary: `Data Center issue ${n}`, status: { name: n % 2 ? "Open" : "Closed" }, description: `Plain *wiki* text ${n}` },
});
const PAGES = ["Runbook", "On-call", "Release checklist"];

/** Routes shaped like Jira 9 and Confluence 8 Data Center, under their context paths. */
function dataCenterRoutes() {
  const { route, url } = stack.upstream;
  const bearer = (req, token) => req.headers.authorization === `Bearer ${token}`;
  const unauthorized = (res, json) => json(res, 401, { message: "Client must be authenticated to access this resource.", "status-code": 401 });
  route("GET", /^\/jira\/rest\/api\/2\/search$/, (req, res, m, { json }) => {
    if (!bearer(req, TOKENS.JIRA_PERSONAL_TOKEN)) return unauthorized(res, json);
    const startAt = Number(req.query.get("startAt") ?? 0);
    const maxResults = Number(req.query.get("maxResults") ?? 50);
    const issues = [];
    for (let n = startAt + 1; n <= Math.min(ISSUES, startAt + maxResults); n++) issues.push(issue(url, n));
    json(res, 200, { expand: "schema,names", startAt, maxResults, total: ISSUES, issues });
  });
  route("GET", /^\/jira\/rest\/api\/(2|latest)\/issue\/DC-(\d+)$/, (req, res, m, { json }) => {
    if (!bearer(req, TOKENS.JIRA_PERSONAL_TOKEN)) return unauthorized(res, json);
    const n = Number(m[2]);
    if (n > ISSUES) return json(res, 404, { errorMessages: ["Issue Does Not Exist"], errors: {} });
    json(res, 200, issue(url, n));
  });
  route("GET", /^\/jira\/rest\/api\/2\/myself$/, (req, res, m, { json }) => unauthorized(res, json));
  // A proxy that echoes what it was sent: the Access secret must not come back.
  route("GET", /^\/jira\/rest\/api\/2\/echo$/, (req, res, m, { json }) => json(res, 400, { errorMessages: [`bad header CF-Access-Client-Secret: ${req.headers["cf-access-client-secret"]}`], errors: {} }));
  route("GET", /^\/confluence\/rest\/api\/content$/, (req, res, m, { json }) => {
    if (!bearer(req, TOKENS.CONFLUENCE_PERSONAL_TOKEN)) return unauthorized(res, json);
    const start = Number(req.query.get("start") ?? 0);
    const limit = Number(req.query.get("limit") ?? 25);
    const results = PAGES.slice(start, start + limit).map((title, i) => ({ id: String(65000 + start + i), type: "page", status: "current", title }));
    const next = start + limit < PAGES.length ? { next: `/rest/api/content?spaceKey=DOCS&limit=${limit}&start=${start + limit}` } : {};
    json(res, 200, { results, start, limit, size: results.length, _links: { base: `${url}/confluence`, context: "/confluence", ...next } });
  });
  route("GET", /^\/confluence\/rest\/api\/search$/, (req, res, m, { json }) => {
    if (!bearer(req, TOKENS.CONFLUENCE_PERSONAL_TOKEN)) return unauthorized(res, json);
    const cql = req.query.get("cql") ?? "";
    if (!cql.includes("=")) return json(res, 400, { statusCode: 400, message: "Could not parse cql : " + cql, reason: "Bad Request" });
    const results = PAGES.filter((t) => cql.includes(t.split(" ")[0])).map((title) => ({ content: { id: "65000", type: "page", title }, title, excerpt: "" }));
    json(res, 200, { results, start: 0, limit: 25, size: results.length, totalSize: results.length, cqlQuery: cql });
  });
}

test("tools/list describes the Data Center APIs: Jira REST v2, Confluence /rest/api", async () => {
  const { tools } = await (await stack.client()).listTools();
  const jira = tools.find((t) => t.name === "jira_get");
  const conf = tools.find((t) => t.name === "conf_get");
  assert.match(jira.description, /Jira Data Center REST API \(v2 under \/rest\/api\/2/);
  assert.match(jira.inputSchema.properties.path.description, /\/rest\/api\/2\/search/);
  assert.ok(!jira.description.includes("/rest/api/3"), jira.description);
  assert.match(conf.description, /Confluence Data Center REST API/);
  assert.ok(!conf.inputSchema.properties.path.description.includes("/wiki/"));
  // Bitbucket stays Bitbucket Cloud.
  assert.match(tools.find((t) => t.name === "bb_get").description, /Bitbucket Cloud/);
});

test("jira_get: REST v2 search paged with startAt/maxResults, on Jira's own root, bearer token", async () => {
  const jq = "{startAt: startAt, total: total, keys: issues[*].key}";
  const page1 = await stack.callJson("jira_get", { path: "/rest/api/2/search", queryParams: { jql: "project = DC", startAt: "0", maxResults: "5" }, jq });
  assert.deepEqual(page1, { startAt: 0, total: 7, keys: ["DC-1", "DC-2", "DC-3", "DC-4", "DC-5"] });
  const page2 = await stack.callJson("jira_get", { path: "/rest/api/2/search", queryParams: { jql: "project = DC", startAt: "5", maxResults: "5" }, jq });
  assert.deepEqual(page2, { startAt: 5, total: 7, keys: ["DC-6", "DC-7"] });
  const reqs = stack.upstream.requests;
  assert.equal(reqs.length, 2);
  assert.equal(reqs[0].url, "/jira/rest/api/2/search?jql=project+%3D+DC&startAt=0&maxResults=5");
  assert.equal(reqs[1].headers.authorization, `Bearer ${TOKENS.JIRA_PERSONAL_TOKEN}`);
  assert.equal(reqs[1].headers.accept, "application/json");
  // The Access service token goes with every request to Jira's root.
  assert.equal(reqs[0].headers["cf-access-client-id"], TOKENS.JIRA_CF_ACCESS_CLIENT_ID);
  assert.equal(reqs[1].headers["cf-access-client-secret"], TOKENS.JIRA_CF_ACCESS_CLIENT_SECRET);
});

test("the Access service token is scrubbed from an upstream echo like any credential", async () => {
  const text = await stack.callError("jira_get", { path: "/rest/api/2/echo" });
  assert.match(text, /bad header CF-Access-Client-Secret: /);
  assert.ok(!text.includes(TOKENS.JIRA_CF_ACCESS_CLIENT_SECRET), text);
  stack.assertNoSecrets();
});

test("jira_get: /rest/api/latest is sent as asked; TOON text as on Cloud", async () => {
  const r = await stack.call("jira_get", { path: "/rest/api/latest/issue/DC-3", jq: "{key: key, status: fields.status.name}" });
  assert.deepEqual([r.isError, r.text], [false, "key: DC-3\nstatus: Open"]);
  assert.equal(stack.upstream.requests[0].url, "/jira/rest/api/latest/issue/DC-3");
});

test("jira_get: Data Center's 404 body is the error text, as the reference words it", async () => {
  const text = await stack.callError("jira_get", { path: "/rest/api/2/issue/DC-99" });
  assert.match(text, /Issue Does Not Exist/);
  assert.ok(!text.includes("JIRA_PERSONAL_TOKEN"), text);
});

test("an expired or revoked personal access token: a 401 naming the setting, never the token", async () => {
  const text = await stack.callError("jira_get", { path: "/rest/api/2/myself" });
  assert.match(text, /^Error: Access denied for api\. Verify your credentials/);
  assert.match(text, /personal access token in JIRA_PERSONAL_TOKEN may have expired or been revoked/);
  stack.assertNoSecrets();
});

test("Cloud paths are refused before any request, naming the API the deployment speaks", async () => {
  const jira = await stack.callError("jira_get", { path: "/rest/api/3/search/jql" });
  assert.match(jira, /this Jira is Data Center: it speaks REST API v2/);
  const conf = await stack.callError("conf_get", { path: "/wiki/api/v2/pages" });
  assert.match(conf, /this Confluence is Data Center/);
  // The hostile spellings Cloud refuses are refused on Data Center too.
  assert.match(await stack.callError("jira_get", { path: "/rest/api/2/issue/DC-1.json" }), /\.json/);
  assert.match(await stack.callError("conf_get", { path: "/rest/api/content/65000;x=1" }), /';' path parameters/);
  assert.equal(stack.upstream.requests.length, 0);
});

test("conf_get: content paged with start/limit and CQL search, on Confluence's root and token", async () => {
  const page = await stack.callJson("conf_get", { path: "/rest/api/content", queryParams: { spaceKey: "DOCS", limit: "2" }, jq: "{titles: results[*].title, next: _links.next}" });
  assert.deepEqual(page, { titles: ["Runbook", "On-call"], next: "/rest/api/content?spaceKey=DOCS&limit=2&start=2" });
  const rest = await stack.callJson("conf_get", { path: "/rest/api/content", queryParams: { spaceKey: "DOCS", limit: "2", start: "2" }, jq: "results[*].title" });
  assert.deepEqual(rest, ["Release checklist"]);
  const found = await stack.callJson("conf_get", { path: "/rest/api/search", queryParams: { cql: "type = page AND title ~ \"Runbook\"" }, jq: "results[*].title" });
  assert.deepEqual(found, ["Runbook"]);
  const reqs = stack.upstream.requests;
  assert.equal(reqs[0].url, "/confluence/rest/api/content?spaceKey=DOCS&limit=2");
  assert.ok(reqs.every((r) => r.headers.authorization === `Bearer ${TOKENS.CONFLUENCE_PERSONAL_TOKEN}`));
  // Jira's Access token is Jira's: Confluence never gets it.
  assert.ok(reqs.every((r) => r.headers["cf-access-client-id"] === undefined && r.headers["cf-access-client-secret"] === undefined));
  const bad = await stack.callError("conf_get", { path: "/rest/api/search", queryParams: { cql: "nonsense" } });
  assert.match(bad, /Could not parse cql/);
  stack.assertNoSecrets();
});

// A policy on a Data Center deployment: a deny rule in Cloud's spelling or in Data Center's holds
// on every Data Center spelling of the path, and nothing is sent.
test("policy: deny rules in either flavor's spelling hold on Data Center's path space", async () => {
  const policy = {
    rules: [
      { id: "no-secret-issues", match: { tools: ["jira_*"], paths: ["/rest/api/3/issue/SECRET-*"] }, effect: "deny" },
      { id: "no-secret-search", match: { tools: ["jira_*"], paths: ["/rest/api/2/search/**"] }, effect: "deny" },
      { id: "no-secret-page", match: { tools: ["conf_*"], paths: ["/rest/api/content/123"] }, effect: "deny" },
      { id: "the-rest", match: { tools: ["jira_*", "conf_*"] }, effect: "allow" },
    ],
  };
  const guarded = await startStack({
    upstream,
    vars: {
      ATLASSIAN_FLAVOR: "datacenter",
      ATLASSIAN_BASE_URL: "",
      JIRA_BASE_URL: `${upstream.url}/jira`,
      CONFLUENCE_BASE_URL: `${upstream.url}/confluence`,
      MCP_POLICY: JSON.stringify(policy),
    },
    secrets: TOKENS,
  });
  try {
    upstream.reset();
    for (const path of ["/rest/api/2/issue/SECRET-1", "/rest/api/latest/issue/SECRET-1", "/REST/Api/2/issue/secret-1/", "/rest/api/2/search/x"]) {
      const r = await guarded.call("jira_get", { path });
      assert.equal(r.isError, true, `${path}: ${r.text}`);
      assert.equal(r.result._meta?.code, "policy_denied", `${path}: ${JSON.stringify(r.result._meta)}`);
    }
    const page = await guarded.call("conf_get", { path: "/rest/api/content/123/" });
    assert.equal(page.result._meta?.code, "policy_denied", JSON.stringify(page.result._meta));
    assert.equal(upstream.requests.length, 0, upstream.requests.map((q) => q.url).join(", "));
    dataCenterRoutes();
    const allowed = await guarded.call("jira_get", { path: "/rest/api/2/issue/DC-2" });
    assert.equal(allowed.isError, false, allowed.text);
  } finally {
    await guarded.close();
  }
});
