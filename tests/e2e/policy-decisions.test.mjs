// Enterprise policy decisions in workerd through the official MCP SDK client: allowed calls carry
// the upstream identity that acted and the fake upstream saw exactly that identity's credential;
// refusals (a deny rule, default deny, `..` tricks, write verbs, first-match order) are error
// results with `_meta.code` and the decision object and reach no upstream; Bitbucket paths are
// matched with their `/2.0` prefix; the `_meta` survives every protocol revision; tools/list hides
// nothing; decisions are logged without credentials.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import {
  startPolicyStack, assertRefusal, assertActedAs, IDENTITY_AUTH, DEFAULT_AUTH, ADMIN_REASON, POLICY_PRINCIPALS, UPSTREAM_META,
} from "./policy-common.mjs";
import { eventually } from "./worker.mjs";

const REPO = { owner: "octo-org", repo: "hello-world" };
let stack;

before(async () => { stack = await startPolicyStack(); });
beforeEach(() => stack.upstream.reset());
after(() => stack?.close());

/** The one upstream request made since the last reset. */
function onlyRequest() {
  const reqs = stack.upstream.requests;
  assert.equal(reqs.length, 1, `one upstream request, got ${reqs.map((r) => `${r.method} ${r.url}`).join(", ")}`);
  return reqs[0];
}

test("a rule's named GitHub identity acts for alice; the fake sees the bot token, the result names it", async () => {
  const { result, isError, text } = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 1 }, "alice");
  assert.equal(isError, false, text);
  assertActedAs(result, "github", "gh-bot");
  assert.equal(onlyRequest().headers.authorization, IDENTITY_AUTH["gh-bot"]);
});

test("a later rule without identities uses the default credential, reported as identity \"default\"", async () => {
  for (const principal of ["bob", "mallory"]) {
    stack.upstream.reset();
    const { result, isError, text } = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 1 }, principal);
    assert.equal(isError, false, `${principal}: ${text}`);
    assertActedAs(result, "github", "default");
    assert.equal(onlyRequest().headers.authorization, DEFAULT_AUTH.github);
  }
});

test("the HTTP cache is keyed by the acting identity: circleci_get by alice and bob both reach CircleCI", async () => {
  const path = "/project/gh/policy-e2e/cache-probe";
  const cache = await stack.worker.mf.getKVNamespace("HTTP_CACHE");
  const entries = async () => (await cache.list()).keys.length;
  const start = await entries();
  // Cache writes land after the response (decision 0003): wait for them, so a shared key would hit.
  const cached = async (n) => {
    await eventually(async () => (await entries()) >= start + n, `${n} cache entries written`);
    assert.equal(await entries(), start + n, `${n} cache entries written`);
  };
  const a = await stack.call("circleci_get", { path }, "alice");
  assert.equal(a.isError, false, a.text);
  assertActedAs(a.result, "circleci", "circle-team");
  await cached(1);
  const b = await stack.call("circleci_get", { path }, "bob");
  assert.equal(b.isError, false, b.text);
  assertActedAs(b.result, "circleci", "default");
  await cached(2);
  const seen = stack.upstream.matching("GET", "/api/v2/project/gh/policy-e2e/cache-probe").map((r) => r.headers["circle-token"]);
  assert.deepEqual(seen, [IDENTITY_AUTH["circle-team"], DEFAULT_AUTH.circleci], "each identity made its own request");
  // The same identity again is served from its own entry.
  const again = await stack.call("circleci_get", { path }, "alice");
  assertActedAs(again.result, "circleci", "circle-team");
  assert.equal(stack.upstream.count("GET", "/api/v2/project/gh/policy-e2e/cache-probe"), 2);
});

test("a per-team Jira identity: platform members read and create issues with its Basic pair", async () => {
  const read = await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-7", outputFormat: "json" }, "bob");
  assert.equal(read.isError, false, read.text);
  assert.equal(JSON.parse(read.text).key, "PROJ-7");
  assertActedAs(read.result, "jira", "jira-platform");
  assert.equal(onlyRequest().headers.authorization, IDENTITY_AUTH["jira-platform"]);
  stack.upstream.reset();
  // `/rest/api/3/issue/**` matches `/rest/api/3/issue` itself (`**` is zero or more segments).
  const created = await stack.call("jira_post", { path: "/rest/api/3/issue", body: { fields: { project: { key: "PROJ" }, summary: "Flaky test", issuetype: { name: "Bug" } } } }, "alice");
  assert.equal(created.isError, false, created.text);
  assertActedAs(created.result, "jira", "jira-platform");
  assert.equal(onlyRequest().headers.authorization, IDENTITY_AUTH["jira-platform"]);
});

test("an upstream error under policy still names the identity that acted", async () => {
  const r = await stack.call("jira_get", { path: "/rest/api/3/issue/NOPE-1" }, "alice");
  assert.equal(r.isError, true);
  assertActedAs(r.result, "jira", "jira-platform");
  assert.equal(onlyRequest().headers.authorization, IDENTITY_AUTH["jira-platform"]);
});

test("a deny rule refuses with policy_denied and the full decision, before any request", async () => {
  const r = await stack.call("jira_get", { path: "/rest/api/3/admin/settings", queryParams: { jql: "x" } }, "alice");
  const decision = assertRefusal(r.result, "policy_denied", {
    effect: "deny", rule: "no-admin", reason: ADMIN_REASON, principal: "alice", tool: "jira_get", method: "GET",
    path: "/rest/api/3/admin/settings",
  });
  assert.equal(decision.approval, undefined);
  assert.ok(r.text.includes(ADMIN_REASON) || r.text.includes("no-admin"), `the text gives the reason or rule: ${r.text}`);
  assert.ok(!JSON.stringify(decision).includes("jql"), "the query string is not part of the decision");
  assert.equal(stack.upstream.requests.length, 0);
});

test("first match decides: a deny rule above an allow rule wins for a path both match", async () => {
  // `/rest/api/3/issue/admin/x` is under platform-jira's `/rest/api/3/issue/**`, but no-admin is first.
  const r = await stack.call("jira_get", { path: "/rest/api/3/issue/admin/x" }, "alice");
  assertRefusal(r.result, "policy_denied", { effect: "deny", rule: "no-admin", path: "/rest/api/3/issue/admin/x" });
  assert.equal(stack.upstream.requests.length, 0);
});

test("`..` is resolved before matching: out of an allowed subtree is denied, into a denied one too", async () => {
  // Starts inside /rest/api/3/issue/** but resolves to /rest/api/3/myself: no rule allows it.
  const escape = await stack.call("jira_get", { path: "/rest/api/3/issue/../myself" }, "alice");
  assertRefusal(escape.result, "policy_denied", { effect: "deny", rule: null, path: "/rest/api/3/myself", method: "GET" });
  const hidden = await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-1/../../admin/./settings" }, "bob");
  assertRefusal(hidden.result, "policy_denied", { rule: "no-admin", path: "/rest/api/3/admin/settings" });
  assert.equal(stack.upstream.requests.length, 0);
  // And `..` that lands inside an allowed subtree is allowed, with the resolved path requested.
  const inside = await stack.call("jira_get", { path: "/rest/api/3/search/../issue/PROJ-3" }, "alice");
  assert.equal(inside.isError, false, inside.text);
  assert.equal(onlyRequest().path, "/rest/api/3/issue/PROJ-3");
});

test("default deny: no matching rule refuses with rule null", async () => {
  const r = await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-1" }, "mallory");
  assertRefusal(r.result, "policy_denied", {
    effect: "deny", rule: null, principal: "mallory", tool: "jira_get", method: "GET", path: "/rest/api/3/issue/PROJ-1",
  });
  const conf = await stack.call("conf_get", { path: "/wiki/api/v2/pages" }, "alice");
  assertRefusal(conf.result, "policy_denied", { rule: null, tool: "conf_get" });
  assert.equal(stack.upstream.requests.length, 0);
});

test("write verbs a rule does not list are denied, whatever the path", async () => {
  for (const [tool, method, extra] of [["jira_put", "PUT", { body: { fields: {} } }], ["jira_delete", "DELETE", {}], ["jira_patch", "PATCH", { body: {} }]]) {
    const r = await stack.call(tool, { path: "/rest/api/3/issue/PROJ-1", ...extra }, "alice");
    assertRefusal(r.result, "policy_denied", { rule: null, method, tool, path: "/rest/api/3/issue/PROJ-1" });
  }
  // circleci_get is always a GET, so the GET-only rule lets even mallory read.
  const read = await stack.call("circleci_get", { path: "/me" }, "mallory");
  assert.equal(read.isError, false, read.text);
  assertActedAs(read.result, "circleci", "default");
  assert.equal(stack.upstream.requests.filter((r) => r.method !== "GET").length, 0);
});

test("Bitbucket paths are matched with the /2.0 prefix, written or not", async () => {
  for (const path of ["/repositories/acme/web", "/2.0/repositories/acme/web"]) {
    stack.upstream.reset();
    const ok = await stack.call("bb_get", { path }, "bob");
    assert.equal(ok.isError, false, ok.text);
    assertActedAs(ok.result, "bitbucket", "default");
    const req = onlyRequest();
    assert.equal(req.path, "/2.0/repositories/acme/web");
    assert.equal(req.headers.authorization, DEFAULT_AUTH.atlassian);
  }
  stack.upstream.reset();
  const denied = await stack.call("bb_get", { path: "/repositories/acme/web/admin/hooks" }, "bob");
  assertRefusal(denied.result, "policy_denied", { rule: "no-admin", path: "/2.0/repositories/acme/web/admin/hooks" });
  const outsider = await stack.call("bb_get", { path: "/repositories/acme/web" }, "mallory");
  assertRefusal(outsider.result, "policy_denied", { rule: null, path: "/2.0/repositories/acme/web" });
  assert.equal(stack.upstream.requests.length, 0);
});

test("GitHub tools are matched as the GET of the path they would request", async () => {
  const r = await stack.call("github_list_workflow_runs", { owner: "acme", repo: "admin", workflowId: "ci.yml" }, "bob");
  // /repos/acme/admin/actions/... has an `admin` segment followed by more: the deny rule matches.
  assertRefusal(r.result, "policy_denied", {
    rule: "no-admin", method: "GET", tool: "github_list_workflow_runs", path: "/repos/acme/admin/actions/workflows/ci.yml/runs",
  });
  const jobs = await stack.call("github_list_workflow_jobs", { ...REPO, runId: 42 }, "mallory");
  assert.equal(jobs.isError, false, jobs.text);
  assertActedAs(jobs.result, "github", "default");
  assert.equal(onlyRequest().path, "/repos/octo-org/hello-world/actions/runs/42/jobs");
});

test("artifact_read ignores the rules: the owner reads her artifact despite a deny rule, others never despite an allow", async () => {
  // A page of 100 runs (~300 KB) is truncated, and the full text is kept as alice's artifact.
  const page = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 100 }, "alice");
  assert.equal(page.isError, false, page.text.slice(0, 300));
  assertActedAs(page.result, "github", "gh-bot");
  const artifactId = /artifact `([0-9a-f-]{36})`/.exec(page.text)?.[1];
  assert.ok(artifactId, `the truncated text names its artifact: ${page.text.slice(-400)}`);
  const own = await stack.call("artifact_read", { artifactId, maxBytes: 64 }, "alice");
  assert.equal(own.isError, false, own.text);
  assert.equal(JSON.parse(own.text).artifactId, artifactId);
  assert.equal(own.result._meta?.[UPSTREAM_META], undefined, "no upstream identity acted");
  assert.equal(own.result._meta?.code, undefined);
  // The id is recent but not theirs: not found at once, as for any unknown id.
  await Promise.all(["bob", "mallory"].map(async (principal) => {
    const other = await stack.call("artifact_read", { artifactId }, principal);
    assert.equal(other.isError, true, `${principal} cannot read alice's artifact`);
    assert.equal(other.text, "Artifact not found or expired", "refused by the artifact store, not by a rule");
    assert.equal(other.result._meta?.code, undefined);
  }));
});

test("tools/list under policy hides no tool and marks restricted ones", async () => {
  const all = new Map();
  for (const principal of ["alice", "mallory"]) {
    const { tools } = await (await stack.client(principal)).listTools();
    all.set(principal, tools);
  }
  const names = (p) => all.get(p).map((t) => t.name).sort();
  assert.deepEqual(names("mallory"), names("alice"), "every principal sees the same tools");
  for (const name of ["jira_get", "bb_post", "conf_delete", "github_list_workflow_runs", "approval_list", "approval_decide"]) {
    assert.ok(names("mallory").includes(name), `${name} is listed for mallory`);
  }
  const desc = (p, name) => all.get(p).find((t) => t.name === name).description;
  assert.match(desc("mallory", "jira_get"), /restricted by enterprise policy/i, "a tool mallory may not use says so");
  assert.match(desc("alice", "bb_post"), /restricted by enterprise policy/i, "a tool with an approval rule says so");
});

test("the _meta of allowed and refused calls is the same under every protocol revision", async () => {
  for (const version of ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]) {
    const seen = {};
    for (const [label, principal, args] of [["allowed", "alice", { ...REPO, perPage: 1 }], ["denied", "alice", { owner: "x", repo: "admin", runId: 1 }]]) {
      const name = label === "allowed" ? "github_list_workflow_runs" : "github_list_workflow_jobs";
      const params = { name, arguments: args };
      const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${POLICY_PRINCIPALS[principal]}` };
      if (version !== "2025-03-26") headers["MCP-Protocol-Version"] = version;
      if (version === "2026-07-28") {
        Object.assign(headers, { "Mcp-Method": "tools/call", "Mcp-Name": name });
        params._meta = {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "e2e-raw", version: "1.0.0" },
        };
      }
      const res = await fetch(stack.worker.mcpUrl, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }) });
      assert.equal(res.status, 200, `${version} ${label}`);
      const { result } = await res.json();
      seen[label] = result;
    }
    assertActedAs(seen.allowed, "github", "gh-bot");
    assertRefusal(seen.denied, "policy_denied", { rule: "no-admin", path: "/repos/x/admin/actions/runs/1/jobs" });
  }
});

test("each decision is logged as one JSON line naming rule, effect and identity, never a credential", async () => {
  await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-2" }, "bob");
  await stack.call("jira_get", { path: "/rest/api/3/admin/x" }, "bob");
  const decisions = stack.events("policy_decision").filter((e) => e.principal === "bob" && e.tool === "jira_get");
  const allow = decisions.find((e) => e.path === "/rest/api/3/issue/PROJ-2");
  assert.ok(allow, `a decision line for the allowed call:\n${stack.logs.join("\n")}`);
  assert.deepEqual([allow.effect, allow.rule, allow.vendor, allow.identity, allow.method], ["allow", "platform-jira", "jira", "jira-platform", "GET"]);
  const deny = decisions.find((e) => e.path === "/rest/api/3/admin/x");
  assert.ok(deny, "a decision line for the denied call");
  assert.deepEqual([deny.effect, deny.rule], ["deny", "no-admin"]);
  const { results, logs } = stack.assertNoSecrets();
  assert.ok(results > 10 && logs > 2, `checked ${results} results and ${logs} log lines`);
});

test("a megabyte path never makes a megabyte log line: every line stays under 8 KiB, the path cut with a marker", async () => {
  const path = `/rest/api/3/issue/${"a".repeat(1 << 20)}`;
  const before = stack.logs.length;
  const { isError } = await stack.call("jira_get", { path }, "alice");
  assert.equal(isError, true, "the huge issue key is refused or fails upstream");
  const lines = stack.logs.slice(before);
  assert.ok(lines.length > 0, "the call was logged");
  for (const line of lines) assert.ok(Buffer.byteLength(line) <= 8 * 1024, `a ${Buffer.byteLength(line)}-byte log line`);
  assert.ok(lines.some((line) => line.includes(`[cut, ${Buffer.byteLength(path)} bytes]`)), "the path was logged, cut");
  for (const decision of stack.events("policy_decision").filter((e) => e.path?.startsWith("/rest/api/3/issue/aaa"))) {
    assert.match(decision.path, /…\[cut, \d+ bytes\]$/, "the path is cut with the marker naming its length");
    assert.ok(Buffer.byteLength(decision.path) < 1100, `a ${Buffer.byteLength(decision.path)}-byte path in the log`);
  }
});
