// Paths a policy can trust, in workerd against the fake upstream: one case per class of path that
// reached the upstream although the policy should have stopped it (docs/policy.md, "One path").
// 1. a product's tool reaching another product's API (Jira and Confluence share a base URL);
// 2. spellings a server routes to a denied resource (trailing slash, `;` parameters, `..;`,
//    `%2F`, a non-ASCII letter Java folds onto ASCII);
// 3. several names for one resource (Jira's API versions, CircleCI's vcs slugs);
// 4. what Atlassian's REST framework reads besides the path: the agile API's `latest`, another
//    spelling of a version number, a media-type ending it cuts before routing.
// Each refused call is an error result and the fake upstream receives nothing.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startPolicyStack, assertRefusal, POLICY } from "./policy-common.mjs";

/** The test policy plus rules on secret issues and a Confluence-only principal (mallory). */
const PATHS_POLICY = {
  ...POLICY,
  rules: [
    { id: "no-secret-issues", match: { tools: ["jira_*"], paths: ["/rest/api/3/issue/SECRET-*"] }, effect: "deny" },
    { id: "no-secret-project", match: { tools: ["circleci_get"], paths: ["/project/gh/acme/secret/**"] }, effect: "deny" },
    { id: "no-secret-agile", match: { tools: ["jira_*"], paths: ["/rest/agile/1.0/issue/SECRET-*"] }, effect: "deny" },
    { id: "no-secret-page", match: { tools: ["conf_*"], paths: ["/wiki/rest/api/content/123"] }, effect: "deny" },
    { id: "agile-boards", match: { tools: ["jira_get"], paths: ["/rest/agile/1.0/board/**"] }, effect: "allow" },
    { id: "mallory-reads-confluence", match: { principals: ["mallory"], tools: ["conf_get"], paths: ["/wiki/**"] }, effect: "allow" },
    ...POLICY.rules,
  ],
};

let stack;

before(async () => { stack = await startPolicyStack({ policy: PATHS_POLICY }); });
beforeEach(() => stack.upstream.reset());
after(() => stack?.close());

/** Asserts that nothing reached the fake upstream since the last reset. */
function nothingSent(what) {
  const reqs = stack.upstream.requests;
  assert.equal(reqs.length, 0, `${what}: nothing is sent, got ${reqs.map((r) => `${r.method} ${r.url}`).join(", ")}`);
}

/** Asserts an invalid-arguments error naming `says`, and that nothing was sent. */
function invalid(r, tool, says, what) {
  assert.equal(r.isError, true, `${what}: ${r.text}`);
  assert.ok(r.text.startsWith(`Invalid arguments for tool ${tool}: Invalid path: `), `${what}: ${r.text}`);
  assert.ok(r.text.includes(says), `${what}: ${JSON.stringify(says)} not in ${r.text}`);
  nothingSent(what);
}

test("1. a product's tool cannot reach another product's API: conf_get with a Jira path, jira_get with a Confluence path", async () => {
  // mallory may read Confluence only; the Confluence rule must not reach Jira through conf_get.
  let r = await stack.call("conf_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = SECRET" } }, "mallory");
  invalid(r, "conf_get", "Confluence paths start with /wiki/", "conf_get /rest/api/3/search/jql");
  // alice may use Jira; jira_get must not read Confluence for her.
  for (const path of ["/wiki/api/v2/pages", "/WIKI/rest/api/content"]) {
    stack.upstream.reset();
    r = await stack.call("jira_get", { path }, "alice");
    invalid(r, "jira_get", "/wiki/ is Confluence's API", `jira_get ${path}`);
  }
  // The product's own path is allowed and sent as given; the decision names the product.
  stack.upstream.reset();
  r = await stack.call("conf_get", { path: "/wiki/api/v2/pages" }, "mallory");
  assert.equal(r.isError, false, r.text);
  assert.equal(stack.upstream.requests.length, 1);
  assert.equal(new URL(stack.upstream.requests[0].url, "http://x").pathname.endsWith("/wiki/api/v2/pages"), true);
  stack.upstream.reset();
  r = await stack.call("jira_get", { path: "/rest/api/3/issue/SECRET-1" }, "alice");
  const decision = assertRefusal(r.result, "policy_denied", { rule: "no-secret-issues", path: "/rest/api/3/issue/SECRET-1" });
  assert.equal(decision.product, "jira");
  nothingSent("the deny itself");
});

test("2. spellings a server routes to the denied resource are refused or matched as that resource", async () => {
  // A trailing slash is the same issue to Jira: the deny rule matches it.
  let r = await stack.call("jira_get", { path: "/rest/api/3/issue/SECRET-1/" }, "alice");
  assertRefusal(r.result, "policy_denied", { rule: "no-secret-issues", path: "/rest/api/3/issue/SECRET-1" });
  nothingSent("trailing slash");
  // Tomcat drops `;params` before routing, and resolves `..;` as `..`; %2F may be decoded first;
  // Java folds `ſ` (U+017F) onto `S`.
  for (const [path, says] of [
    ["/rest/api/3/issue;x=1/SECRET-1", "';' path parameters"],
    ["/rest/api/3/issue/..;/project", "';' path parameters"],
    ["/rest/api/3/issue%2FSECRET-1", "%2F"],
    ["/rest/api/3/issue/\u017fECRET-1", "outside ASCII"],
    ["/rest/api/3/issue/%C5%BFECRET-1", "outside ASCII"],
  ]) {
    stack.upstream.reset();
    r = await stack.call("jira_get", { path }, "alice");
    invalid(r, "jira_get", says, `jira_get ${path}`);
  }
});

test("3. several names for one resource are matched as one: Jira's API versions, CircleCI's vcs slugs", async () => {
  for (const path of ["/rest/api/2/issue/SECRET-1", "/rest/api/latest/issue/SECRET-1", "/rest/api/LATEST/issue/SECRET-1/", "/Rest/API/2/issue/SECRET-1"]) {
    stack.upstream.reset();
    const r = await stack.call("jira_get", { path }, "alice");
    assertRefusal(r.result, "policy_denied", { rule: "no-secret-issues", path: "/rest/api/3/issue/SECRET-1" });
    nothingSent(`jira_get ${path}`);
  }
  for (const path of ["/project/github/acme/secret/pipeline", "/project/GitHub/acme/secret", "/api/v2/project/gh/acme/secret/pipeline"]) {
    stack.upstream.reset();
    const r = await stack.call("circleci_get", { path }, "bob");
    const decision = assertRefusal(r.result, "policy_denied", { rule: "no-secret-project" });
    assert.ok(decision.path.startsWith("/project/gh/acme/secret"), decision.path);
    assert.equal(decision.product, "circleci");
    nothingSent(`circleci_get ${path}`);
  }
  // The canonical slug is what is sent for an allowed project.
  stack.upstream.reset();
  const r = await stack.call("circleci_get", { path: "/project/github/acme/open" }, "bob");
  assert.equal(r.isError, false, r.text);
  assert.equal(stack.upstream.requests.length, 1);
  assert.ok(stack.upstream.requests[0].url.includes("/project/gh/acme/open"), stack.upstream.requests[0].url);
});

test("4. the REST framework's own readings: the agile API's latest is its 1.0, other version spellings and media-type endings are refused", async () => {
  for (const path of ["/rest/agile/latest/issue/SECRET-1", "/REST/Agile/LATEST/issue/SECRET-1/"]) {
    stack.upstream.reset();
    const r = await stack.call("jira_get", { path }, "alice");
    assertRefusal(r.result, "policy_denied", { rule: "no-secret-agile" });
    nothingSent(`jira_get ${path}`);
  }
  for (const [path, says] of [
    ["/rest/agile/1/issue/SECRET-1", "API version"],
    ["/rest/agile/1.0.0/issue/SECRET-1", "API version"],
    ["/rest/api/3.0/issue/SECRET-1", "API version"],
    ["/rest/api/3/issue/SECRET-1.json", ".json"],
    ["/rest/api/3/issue/SECRET-1.xml", ".json"],
    ["/rest/agile/1.0/issue/SECRET-1.json", ".json"],
  ]) {
    stack.upstream.reset();
    const r = await stack.call("jira_get", { path }, "alice");
    invalid(r, "jira_get", says, `jira_get ${path}`);
  }
  for (const path of ["/wiki/rest/api/content/123.json", "/wiki/rest/api/content/123.xml"]) {
    stack.upstream.reset();
    const r = await stack.call("conf_get", { path }, "mallory");
    invalid(r, "conf_get", ".json", `conf_get ${path}`);
  }
  stack.upstream.reset();
  let r = await stack.call("conf_get", { path: "/wiki/rest/api/content/123" }, "mallory");
  assertRefusal(r.result, "policy_denied", { rule: "no-secret-page" });
  nothingSent("the page deny itself");
  // An allowed agile path asked as `latest` is sent as the version the rule names.
  stack.upstream.reset();
  r = await stack.call("jira_get", { path: "/rest/agile/latest/board/7" }, "alice");
  assert.equal(stack.upstream.requests.length, 1, r.text);
  assert.equal(new URL(stack.upstream.requests[0].url, "http://x").pathname, "/rest/agile/1.0/board/7");
});

test("nothing refused here leaked a credential into a result or a log line", () => {
  stack.assertNoSecrets();
});
