// Bitbucket Data Center (BITBUCKET_FLAVOR=datacenter, decision 0112) in workerd through the
// official client, against a fake shaped like Bitbucket Data Center 8's REST API under a context
// path: its HTTP access token sent as a bearer token (and a Cloudflare Access service token beside
// it, to that root only), /rest/api/1.0 lists paged with isLastPage/nextPageStart, `latest` sent as
// 1.0, raw files as text, tools/list describing that API while Jira stays on Cloud, a Cloud path
// refused naming the API this one speaks, an expired token's 401 naming its setting, a deny rule
// holding on every spelling of its path, and no token in any result or log line.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";

const TOKENS = {
  BITBUCKET_PERSONAL_TOKEN: "BBDC-NzQ2MjU1ODk0NTkzOkBbDcHttpAccessToken0123",
  BITBUCKET_CF_ACCESS_CLIENT_ID: "7a1c3e5f9b2d4f6a8c0e2a4c6e8a0c2e.access",
  BITBUCKET_CF_ACCESS_CLIENT_SECRET: "e2eBitbucketCfAccessSecret0123456789abcdef0123456789",
};
/** A Data Center deployment's Bitbucket settings: Cloud's are unset (blank), as they must be. */
const DATA_CENTER = (upstream, extra = {}) => ({
  BITBUCKET_FLAVOR: "datacenter",
  BITBUCKET_BASE_URL: `${upstream.url}/bitbucket`,
  BITBUCKET_API_URL: "",
  ATLASSIAN_BITBUCKET_USERNAME: "",
  ATLASSIAN_BITBUCKET_APP_PASSWORD: "",
  ...extra,
});

let upstream;
let stack;
before(async () => {
  upstream = await startFakeUpstream();
  stack = await startStack({ upstream, vars: DATA_CENTER(upstream), secrets: TOKENS, listTools: true });
});
beforeEach(() => { stack.upstream.reset(); bitbucketRoutes(); });
after(async () => { await stack?.close(); await upstream?.close(); });

const REPOS = ["api", "web", "infra", "docs", "tools"];
const repo = (base, slug, i) => ({
  slug, id: 100 + i, name: slug, scmId: "git", state: "AVAILABLE", forkable: true, public: false,
  project: { key: "OPS", id: 7, name: "Operations", type: "NORMAL" },
  links: { self: [{ href: `${base}/bitbucket/projects/OPS/repos/${slug}/browse` }] },
});

/** Routes shaped like Bitbucket Data Center 8, under its context path. */
function bitbucketRoutes() {
  const { route, url } = stack.upstream;
  const authorized = (req) => req.headers.authorization === `Bearer ${TOKENS.BITBUCKET_PERSONAL_TOKEN}`;
  const unauthorized = (res, json) => json(res, 401, { errors: [{ context: null, message: "Authentication failed. Please check your credentials and try again.", exceptionName: "com.atlassian.bitbucket.auth.IncorrectPasswordAuthenticationException" }] });
  route("GET", /^\/bitbucket\/rest\/api\/1\.0\/projects\/OPS\/repos$/, (req, res, m, { json }) => {
    if (!authorized(req)) return unauthorized(res, json);
    const start = Number(req.query.get("start") ?? 0);
    const limit = Number(req.query.get("limit") ?? 25);
    const values = REPOS.slice(start, start + limit).map((slug, i) => repo(url, slug, start + i));
    const isLastPage = start + limit >= REPOS.length;
    json(res, 200, { size: values.length, limit, isLastPage, values, start, ...(isLastPage ? {} : { nextPageStart: start + values.length }) });
  });
  route("GET", /^\/bitbucket\/rest\/api\/1\.0\/projects\/OPS\/repos\/api\/raw\/package\.json$/, (req, res) => {
    if (!authorized(req)) { res.writeHead(401); return res.end(); }
    const body = '{\n  "name": "api",\n  "version": "4.2.0"\n}\n';
    res.writeHead(200, { "Content-Type": "text/plain;charset=UTF-8", "Content-Length": Buffer.byteLength(body) });
    res.end(body);
  });
  route("POST", /^\/bitbucket\/rest\/api\/1\.0\/projects\/OPS\/repos\/api\/pull-requests\/12\/comments$/, (req, res, m, { json }) => {
    if (!authorized(req)) return unauthorized(res, json);
    const { text } = JSON.parse(req.body.toString("utf8"));
    json(res, 201, { id: 301, version: 0, text, author: { name: "svc-mcp", slug: "svc-mcp" }, createdDate: 1764979200000 });
  });
  // The token expired: every request under /users is refused.
  route("GET", /^\/bitbucket\/rest\/api\/1\.0\/users/, (req, res, m, { json }) => unauthorized(res, json));
}

test("tools/list describes Bitbucket Data Center's API and paging; Jira stays on Cloud", async () => {
  const { tools } = await (await stack.client()).listTools();
  const bb = tools.find((t) => t.name === "bb_get");
  assert.match(bb.description, /Bitbucket Data Center REST API \(under \/rest\/api\/1\.0\)/);
  assert.match(bb.description, /nextPageStart in queryParams\.start/);
  assert.match(bb.inputSchema.properties.path.description, /\/rest\/api\/1\.0\/projects\/\{key\}\/repos/);
  assert.ok(!bb.description.includes("/2.0") && !bb.inputSchema.properties.path.description.includes("/2.0"));
  assert.match(tools.find((t) => t.name === "jira_get").description, /Jira Cloud REST API/);
});

test("bb_get: a list paged with isLastPage/nextPageStart, on the server's root, bearer and Access tokens", async () => {
  const jq = "{start: start, isLastPage: isLastPage, next: nextPageStart, slugs: values[*].slug}";
  const page1 = await stack.callJson("bb_get", { path: "/rest/api/1.0/projects/OPS/repos", queryParams: { limit: "3" }, jq });
  assert.deepEqual(page1, { start: 0, isLastPage: false, next: 3, slugs: ["api", "web", "infra"] });
  // The model passes nextPageStart back as start; `latest` is the same API, sent as 1.0.
  const page2 = await stack.callJson("bb_get", { path: "/rest/api/latest/projects/OPS/repos", queryParams: { limit: "3", start: String(page1.next) }, jq });
  assert.deepEqual(page2, { start: 3, isLastPage: true, next: null, slugs: ["docs", "tools"] });
  const reqs = stack.upstream.requests;
  assert.deepEqual(reqs.map((r) => r.url), [
    "/bitbucket/rest/api/1.0/projects/OPS/repos?limit=3",
    "/bitbucket/rest/api/1.0/projects/OPS/repos?limit=3&start=3",
  ]);
  for (const r of reqs) {
    assert.equal(r.headers.authorization, `Bearer ${TOKENS.BITBUCKET_PERSONAL_TOKEN}`);
    assert.equal(r.headers["cf-access-client-id"], TOKENS.BITBUCKET_CF_ACCESS_CLIENT_ID);
    assert.equal(r.headers["cf-access-client-secret"], TOKENS.BITBUCKET_CF_ACCESS_CLIENT_SECRET);
  }
  stack.assertNoSecrets();
});

test("bb_get: a raw file comes back as its text, a name ending in .json included", async () => {
  const text = await stack.callJson("bb_get", { path: "/rest/api/1.0/projects/OPS/repos/api/raw/package.json", queryParams: { at: "refs/heads/main" } });
  assert.equal(text, '{\n  "name": "api",\n  "version": "4.2.0"\n}\n');
  assert.equal(stack.upstream.requests[0].url, "/bitbucket/rest/api/1.0/projects/OPS/repos/api/raw/package.json?at=refs%2Fheads%2Fmain");
});

test("bb_post: a pull request comment with the bearer token", async () => {
  const r = await stack.call("bb_post", { path: "/rest/api/1.0/projects/OPS/repos/api/pull-requests/12/comments", body: { text: "CI is green again" }, outputFormat: "json" });
  assert.equal(r.isError, false, r.text);
  assert.equal(JSON.parse(r.text).text, "CI is green again");
  const [sent] = stack.upstream.requests;
  assert.equal(sent.method, "POST");
  assert.equal(sent.headers.authorization, `Bearer ${TOKENS.BITBUCKET_PERSONAL_TOKEN}`);
  assert.deepEqual(JSON.parse(sent.body), { text: "CI is green again" });
});

test("a Cloud path, another spelling of 1.0 or a cut suffix is refused before anything is sent", async () => {
  for (const [path, says] of [
    ["/2.0/repositories/acme", /this Bitbucket is Data Center: its API is under \/rest\/api\/1\.0/],
    ["/repositories/acme/app/pullrequests", /\/2\.0 paths are Bitbucket Cloud's/],
    ["/rest/api/1/projects/OPS/repos", /\/rest\/\{module\}\/1\.0 or \/rest\/\{module\}\/latest/],
    ["/rest/api/1.0/projects/OPS.json", /\.json, \.xml/],
    ["/rest/api/1.0/projects/OPS/repos/api/branches/feature%2Fx", /%2F|encoded/i],
  ]) {
    const text = await stack.callError("bb_get", { path });
    assert.match(text, says, path);
  }
  assert.equal(stack.upstream.requests.length, 0);
});

test("an expired or revoked HTTP access token: the 401 names its setting, never its value", async () => {
  const text = await stack.callError("bb_get", { path: "/rest/api/1.0/users/svc-mcp" });
  assert.match(text, /Authentication failed/);
  assert.match(text, /HTTP access token in BITBUCKET_PERSONAL_TOKEN may have expired or been revoked/);
  stack.assertNoSecrets();
});

// A deny rule written in either spelling holds on every spelling of the path, and nothing is sent.
test("policy: a deny rule holds on Bitbucket Data Center's path space", async () => {
  const policy = {
    rules: [
      { id: "no-secret-project", match: { tools: ["bb_*"], paths: ["/rest/api/1.0/projects/SECRET/**"] }, effect: "deny" },
      { id: "no-secret-latest", match: { tools: ["bb_*"], paths: ["/rest/api/latest/projects/VAULT/**"] }, effect: "deny" },
      { id: "the-rest", match: { tools: ["bb_*"] }, effect: "allow" },
    ],
  };
  const guarded = await startStack({ upstream, vars: DATA_CENTER(upstream, { MCP_POLICY: JSON.stringify(policy) }), secrets: TOKENS });
  try {
    upstream.reset();
    for (const path of [
      "/rest/api/1.0/projects/SECRET/repos",
      "/rest/api/latest/projects/SECRET/repos",
      "/rest/api/LATEST/projects/secret/repos/",
      "/rest/api/1.0/projects/VAULT/repos",
    ]) {
      const r = await guarded.call("bb_get", { path });
      assert.equal(r.result._meta?.code, "policy_denied", `${path}: ${r.text}`);
    }
    for (const path of ["/rest/api/1/projects/SECRET/repos", "/rest/api/1.0/projects/SECRET.json"]) {
      const r = await guarded.call("bb_get", { path });
      assert.equal(r.isError, true, `${path}: ${r.text}`);
    }
    assert.equal(upstream.requests.length, 0, upstream.requests.map((q) => q.url).join(", "));
    bitbucketRoutes();
    const allowed = await guarded.call("bb_get", { path: "/rest/api/1.0/projects/OPS/repos" });
    assert.equal(allowed.isError, false, allowed.text);
  } finally {
    await guarded.close();
  }
});
