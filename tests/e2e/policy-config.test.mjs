// How the enterprise policy is configured, in workerd through the official MCP SDK client: a
// broken MCP_POLICY fails closed (every tools/call refused naming the problem, tools/list still
// works), a policy held in the POLICY KV namespace (MCP_POLICY_KV_KEY) is read at every call so
// edits and fixes apply at once, the refusal and identity `_meta` are the same with
// MCP_STRUCTURED_OUTPUT on and off, and a deployment without the POLICY binding refuses approval
// requests while allowed calls still run.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFakeUpstream } from "./fake-upstream.mjs";
import {
  startPolicyStack, assertRefusal, assertActedAs, POLICY, IDENTITY_AUTH, IDENTITY_SECRETS, mergePath, POLICY_BINDING,
  UPSTREAM_META,
} from "./policy-common.mjs";

const REPO = { owner: "octo-org", repo: "hello-world" };
const KV_KEY = "policy/v1";
let upstream;
const stacks = [];

before(async () => { upstream = await startFakeUpstream(); });
after(async () => {
  for (const s of stacks) await s.close();
  await upstream?.close();
});

/** A policy stack on the shared fake upstream, closed after the file. */
async function stackWith(options) {
  const s = await startPolicyStack({ upstream, ...options });
  stacks.push(s);
  return s;
}

/** POLICY with `change(copy)` applied to a deep copy. */
function policyWith(change) {
  const copy = structuredClone(POLICY);
  change(copy);
  return copy;
}

/** Asserts that tools/list still lists every tool for `principal`. */
async function assertListWorks(stack, principal = "alice") {
  const { tools } = await (await stack.client(principal)).listTools();
  const names = tools.map((t) => t.name);
  for (const name of ["jira_get", "bb_post", "github_list_workflow_runs", "circleci_get"]) assert.ok(names.includes(name), `${name} is listed`);
}

/** Asserts that a call is refused because the policy cannot be used, with `problem` in the reason. */
async function assertFailsClosed(stack, problem, name = "github_list_workflow_runs", args = { ...REPO, perPage: 1 }, principal = "alice") {
  const r = await stack.call(name, args, principal);
  const decision = assertRefusal(r.result, "policy_denied", { rule: null, principal, tool: name });
  assert.match(decision.reason, problem, `the reason names the problem: ${decision.reason}`);
  assert.match(r.text, problem, `the text names the problem: ${r.text}`);
  return decision;
}

test("a broken MCP_POLICY fails closed: every call refused naming the problem, tools/list works", async () => {
  const cases = [
    [policyWith((p) => { p.identities.find((i) => i.name === "gh-bot").secret = "GITHUB_MISSING_TOKEN"; }), /MCP_POLICY.*GITHUB_MISSING_TOKEN.*not set/],
    ["{\"identities\": [", /MCP_POLICY.*not valid JSON/],
  ];
  for (const [policy, problem] of cases) {
    const stack = await stackWith({ policy });
    await assertListWorks(stack);
    await assertFailsClosed(stack, problem);
    // Even a call every valid rule set would allow, an approval tool, and artifact_read.
    await assertFailsClosed(stack, problem, "circleci_get", { path: "/me" }, "mallory");
    await assertFailsClosed(stack, problem, "approval_list", {}, "carol");
    await assertFailsClosed(stack, problem, "artifact_read", { artifactId: "00000000-0000-4000-8000-000000000000" });
    assert.ok(stack.logs.some((l) => l.includes("policy_invalid")), "the broken policy is logged");
    stack.assertNoSecrets();
  }
  assert.equal(upstream.requests.length, 0, "nothing reached an upstream");
});

test("a policy in KV (MCP_POLICY_KV_KEY) is read at every call: missing, valid, edited, broken, fixed", async () => {
  const stack = await stackWith({ policy: null, vars: { MCP_POLICY_KV_KEY: KV_KEY } });
  const kv = await stack.kv();
  const put = (doc) => kv.put(KV_KEY, typeof doc === "string" ? doc : JSON.stringify(doc));

  // Missing key: fail closed, naming the key and the namespace.
  await assertFailsClosed(stack, new RegExp(`KV key "${KV_KEY}" in ${POLICY_BINDING}.*missing`));
  await assertListWorks(stack);

  // The document arrives: alice's GitHub calls act as gh-bot, mallory is refused by default deny.
  await put(POLICY);
  upstream.reset();
  const ok = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 1 }, "alice");
  assert.equal(ok.isError, false, ok.text);
  assertActedAs(ok.result, "github", "gh-bot");
  assert.equal(upstream.requests[0].headers.authorization, IDENTITY_AUTH["gh-bot"]);
  assertRefusal((await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-1" }, "mallory")).result, "policy_denied", { rule: null });

  // An edit (a deny rule for alice's GitHub calls, placed first) applies to the very next call.
  await put(policyWith((p) => p.rules.unshift({ id: "freeze", match: { principals: ["alice"], tools: ["github_*"] }, effect: "deny", reason: "Code freeze." })));
  const frozen = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 1 }, "alice");
  assertRefusal(frozen.result, "policy_denied", { rule: "freeze", reason: "Code freeze." });

  // Broken in several ways: each refusal names its problem.
  const broken = [
    ["{ not json", /KV key.*invalid.*not valid JSON/],
    [policyWith((p) => { p.rules.find((r) => r.id === "platform-jira").identities.jira = "jira-team"; }), /identity "jira-team"/],
    [policyWith((p) => { p.rules[0].match.paths = ["/a**/b"]; }), /glob.*\/a\*\*\/b/],
    [policyWith((p) => { p.identities.find((i) => i.name === "jira-platform").tokenSecret = "JIRA_UNSET_TOKEN"; }), /JIRA_UNSET_TOKEN.*not set/],
    [policyWith((p) => { p.rules[0].efect = "deny"; }), /efect/],
  ];
  for (const [doc, problem] of broken) {
    await put(doc);
    await assertFailsClosed(stack, problem);
  }
  await assertListWorks(stack);

  // Fixed: works again at once.
  await put(POLICY);
  const fixed = await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-1" }, "bob");
  assert.equal(fixed.isError, false, fixed.text);
  assertActedAs(fixed.result, "jira", "jira-platform");
  stack.assertNoSecrets();
  for (const secret of Object.values(IDENTITY_SECRETS)) {
    assert.ok(!stack.logs.join("\n").includes(secret), "no identity secret in a log line");
  }
});

test("MCP_POLICY wins over MCP_POLICY_KV_KEY when both are set", async () => {
  const stack = await stackWith({ vars: { MCP_POLICY_KV_KEY: KV_KEY } });
  // The KV key is absent; a KV-held policy would fail closed. MCP_POLICY decides instead.
  const r = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 1 }, "alice");
  assert.equal(r.isError, false, r.text);
  assertActedAs(r.result, "github", "gh-bot");
});

test("the _meta keys and values are the same with MCP_STRUCTURED_OUTPUT on and off", async () => {
  const modes = {};
  for (const flag of ["true", "false"]) modes[flag] = await stackWith({ vars: { MCP_STRUCTURED_OUTPUT: flag }, listTools: true });
  const calls = [
    ["allowed, a schema tool", "jira_get", { path: "/rest/api/3/issue/PROJ-4" }, "bob"],
    ["allowed, upstream error", "jira_get", { path: "/rest/api/3/issue/NOPE-4" }, "bob"],
    ["allowed, GitHub", "github_list_workflow_runs", { ...REPO, perPage: 2 }, "alice"],
    ["denied by rule", "bb_get", { path: "/repositories/acme/web/admin/hooks" }, "bob"],
    ["default deny", "conf_get", { path: "/wiki/api/v2/pages" }, "mallory"],
    ["approval required", "bb_post", { path: mergePath(21, ""), body: {} }, "bob"],
    ["approvers only", "approval_list", {}, "mallory"],
  ];
  for (const [label, name, args, principal] of calls) {
    const on = (await modes.true.call(name, args, principal)).result;
    const off = (await modes.false.call(name, args, principal)).result;
    assert.deepEqual(Object.keys(on._meta ?? {}).sort(), Object.keys(off._meta ?? {}).sort(), `${label}: the same _meta keys`);
    assert.ok(Object.keys(on._meta ?? {}).length > 0, `${label}: a _meta under policy`);
    assert.deepEqual(on._meta[UPSTREAM_META], off._meta[UPSTREAM_META], `${label}: the same identity`);
    assert.equal(on._meta.code, off._meta.code, label);
    if (on._meta.decision) {
      const strip = (d) => ({ ...d, approval: d.approval && { ...d.approval, id: "*", expiresAt: "*" } });
      assert.deepEqual(strip(on._meta.decision), strip(off._meta.decision), `${label}: the same decision`);
      assert.equal(on.structuredContent, undefined, `${label}: no structuredContent on a refusal`);
    }
    assert.equal(off.structuredContent, undefined, `${label}: no structuredContent with the flag off`);
    if (label === "allowed, a schema tool") assert.ok(on.structuredContent, "the flag is really on");
  }
});

test("without the APPROVALS binding, approval requests are refused, saying so, and allowed calls still run", async () => {
  const stack = await stackWith({ worker: { ledger: false } });
  const r = await stack.call("bb_post", { path: mergePath(30, ""), body: {} }, "bob");
  const decision = assertRefusal(r.result, "policy_denied", { rule: "merges-need-approval", effect: "approval_required", path: mergePath(30) });
  assert.match(decision.reason, /approval store \(the APPROVALS Durable Object\) is not configured/);
  assert.equal(upstream.count("POST", mergePath(30)), 0);
  const list = await stack.call("approval_list", {}, "carol");
  assert.equal(list.isError, true, list.text);
  assert.match(list.text, /APPROVALS Durable Object\) is not configured/);
  const ok = await stack.call("jira_get", { path: "/rest/api/3/issue/PROJ-1" }, "alice");
  assert.equal(ok.isError, false, ok.text);
  assertActedAs(ok.result, "jira", "jira-platform");
  assert.ok(stack.logs.some((l) => l.includes("approval_store_failed")));
});
