// The approval flow of enterprise policy in workerd, with two (and more) principals through the
// official MCP SDK client: approval_required refusals with their pending approval, approvers
// listing and deciding, the approved call running exactly once with the rule's identity, replays,
// different arguments, self-approval, non-approvers, denial, expiry, the per-requester cap, and
// many identical calls racing from two isolates for one approval. The approval TTL is set to its
// minimum (60 s); expiry is reached by moving the ledger's clock on instead of waiting a minute
// (see expireUntil()).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  startPolicyStack, assertRefusal, assertActedAs, assertApproval, mergePath, IDENTITY_AUTH, MERGE_REASON, POLICY_PRINCIPALS,
} from "./policy-common.mjs";
import { ledgerOp } from "./worker.mjs";

const TTL = 60;
let stack;
let merges = 0;

before(async () => {
  stack = await startPolicyStack({ vars: { MCP_APPROVAL_TTL_SECONDS: String(TTL) }, worker: { twin: true } });
  // Bitbucket's merge endpoint, which the built-in fake lacks; counts what actually merged.
  stack.upstream.route("POST", /^\/2\.0\/repositories\/acme\/web\/pullrequests\/(\d+)\/merge$/, (req, res, m, { json }) => {
    merges++;
    json(res, 200, { id: Number(m[1]), state: "MERGED", merge_commit: { hash: "abc123" } });
  });
});
after(() => stack?.close());

/** The Bitbucket merge of pull request `n`, as the tool's arguments. */
const merge = (n, extra = {}) => ({ path: mergePath(n, ""), body: { merge_strategy: "squash", close_source_branch: true }, ...extra });

/** Upstream merge requests seen for pull request `n`. */
const mergeRequests = (n) => stack.upstream.matching("POST", mergePath(n));

/** Requests a merge as `principal`; asserts the approval_required refusal and returns its decision. */
async function requestMerge(n, principal, args = merge(n)) {
  const r = await stack.call("bb_post", args, principal);
  const decision = assertRefusal(r.result, "approval_required", {
    effect: "approval_required", rule: "merges-need-approval", reason: MERGE_REASON, principal, tool: "bb_post",
    method: "POST", path: mergePath(n),
  });
  assert.ok(Array.isArray(decision.approvers) && decision.approvers.includes("carol"), `approvers: ${JSON.stringify(decision.approvers)}`);
  assert.ok(r.text.includes(decision.approval.id), "the text names the approval id, so the model can pass it on");
  return decision;
}

/** approval_list as `principal`: the pending requests it may decide. */
async function listFor(principal) {
  const r = await stack.call("approval_list", {}, principal);
  assert.equal(r.isError, false, `approval_list as ${principal}: ${r.text}`);
  const parsed = r.result.structuredContent ?? JSON.parse(r.text);
  const items = Array.isArray(parsed) ? parsed : parsed.approvals ?? parsed.requests;
  assert.ok(Array.isArray(items), `approval_list gives a list: ${r.text.slice(0, 300)}`);
  return items;
}

/** approval_decide as `principal`. */
const decide = (principal, approvalId, approve, reason) =>
  stack.call("approval_decide", { approvalId, approve, ...(reason ? { reason } : {}) }, principal);

/**
 * Lets `seconds` pass for the approval ledger: one op carrying that later time makes it drop every
 * record expired by then (src/ledger.rs purges on every op), exactly as it does once that time
 * has really come. The worker's own ops then find those approvals gone.
 */
async function expireUntil(seconds) {
  await ledgerOp(stack.worker.mf, { op: "pending", nowMs: Date.now() + seconds * 1000, approver: "nobody" });
}

test("the round trip: request, list, approve, one identical call runs with the rule's identity, a replay is refused", async () => {
  const mergesBefore = merges;
  const first = await requestMerge(7, "bob");
  assertApproval(first.approval, "pending", TTL);
  assert.equal(mergeRequests(7).length, 0, "nothing reached Bitbucket");

  // The identical call while pending answers with the same request, not a new one.
  const again = await requestMerge(7, "bob");
  assert.equal(again.approval.id, first.approval.id);

  const listed = (await listFor("carol")).find((a) => a.id === first.approval.id);
  assert.ok(listed, "carol sees bob's request");
  assert.equal(listed.requester, "bob");
  assert.equal(listed.tool, "bb_post");
  assert.equal(listed.requesterText.path, mergePath(7));
  assert.equal(listed.rule, "merges-need-approval");
  assert.deepEqual(listed.requesterText.arguments, merge(7), "approvers see the arguments they approve, as the requester's text");

  const approved = await decide("carol", first.approval.id, true, "release window open");
  assert.equal(approved.isError, false, approved.text);
  assert.ok(!(await listFor("carol")).some((a) => a.id === first.approval.id), "a decided request leaves the list");

  // The identical call, keys in another order: runs once, as bb-release.
  const { path, body } = merge(7);
  const run = await stack.call("bb_post", { body: { close_source_branch: true, merge_strategy: "squash" }, path }, "bob");
  assert.equal(run.isError, false, run.text);
  assertActedAs(run.result, "bitbucket", "bb-release");
  const [req] = mergeRequests(7);
  assert.equal(req.headers.authorization, IDENTITY_AUTH["bb-release"]);
  assert.deepEqual(JSON.parse(req.body), body);
  assert.equal(merges, mergesBefore + 1);

  // The approval is spent: the same call again is a new pending request.
  const replay = await requestMerge(7, "bob");
  assertApproval(replay.approval, "pending", TTL);
  assert.notEqual(replay.approval.id, first.approval.id);
  assert.equal(mergeRequests(7).length, 1, "the replay never reached Bitbucket");
  assert.equal(merges, mergesBefore + 1);

  const events = stack.events("approval").filter((e) => e.approvalId === first.approval.id).map((e) => [e.action, e.by]);
  assert.deepEqual(events, [["requested", "bob"], ["approved", "carol"], ["consumed", "bob"]]);
  stack.assertNoSecrets();
});

test("an approval covers only the identical call: other arguments, tool or principal need their own", async () => {
  const { approval } = await requestMerge(8, "bob");
  assert.equal((await decide("carol", approval.id, true)).isError, false);
  // Another pull request, another strategy, an extra argument: not covered.
  for (const args of [merge(9), merge(8, { body: { merge_strategy: "merge_commit", close_source_branch: true } }), merge(8, { outputFormat: "json" })]) {
    const other = await stack.call("bb_post", args, "bob");
    const decision = assertRefusal(other.result, "approval_required");
    assert.notEqual(decision.approval.id, approval.id, `not covered: ${JSON.stringify(args)}`);
    assert.equal(decision.approval.status, "pending");
  }
  // Alice (also in platform) making bob's exact call gets her own request.
  const alice = await requestMerge(8, "alice");
  assert.notEqual(alice.approval.id, approval.id);
  assert.equal(mergeRequests(8).length + mergeRequests(9).length, 0);
  // Bob's approval is still there for bob's identical call.
  const run = await stack.call("bb_post", merge(8), "bob");
  assert.equal(run.isError, false, run.text);
  assertActedAs(run.result, "bitbucket", "bb-release");
  assert.equal(mergeRequests(8).length, 1);
});

test("self-approval is refused, even for a principal the rule names as approver", async () => {
  const { approval } = await requestMerge(10, "alice");
  assert.ok(!(await listFor("alice")).some((a) => a.id === approval.id), "alice's own request is not in her list");
  const self = await decide("alice", approval.id, true);
  assert.equal(self.isError, true, self.text);
  assert.match(self.text, /own/i);
  // Still pending: the call stays refused, and carol can still decide it.
  const still = await requestMerge(10, "alice");
  assert.equal(still.approval.id, approval.id);
  assert.equal(still.approval.status, "pending");
  assert.ok((await listFor("carol")).some((a) => a.id === approval.id));
  assert.equal(mergeRequests(10).length, 0);
  // Alice may decide others' requests: she approves bob's.
  const bobs = await requestMerge(11, "bob");
  assert.ok((await listFor("alice")).some((a) => a.id === bobs.approval.id), "alice sees bob's request");
  assert.equal((await decide("alice", bobs.approval.id, true)).isError, false);
  assert.equal((await stack.call("bb_post", merge(11), "bob")).isError, false);
});

test("non-approvers can neither list nor decide", async () => {
  const { approval } = await requestMerge(12, "alice");
  for (const principal of ["bob", "mallory"]) {
    const list = await stack.call("approval_list", {}, principal);
    assertRefusal(list.result, "policy_denied", { rule: null, principal, tool: "approval_list", method: null, path: null });
    const dec = await decide(principal, approval.id, true);
    assertRefusal(dec.result, "policy_denied", { rule: null, principal, tool: "approval_decide" });
  }
  const still = await requestMerge(12, "alice");
  assert.equal(still.approval.status, "pending", "the refused decisions changed nothing");
});

test("a denied request stays denied for the requester until it expires, and cannot be decided again", async () => {
  const { approval } = await requestMerge(13, "bob");
  const denied = await decide("carol", approval.id, false, "freeze week");
  assert.equal(denied.isError, false, denied.text);
  const r = await stack.call("bb_post", merge(13), "bob");
  const decision = assertRefusal(r.result, "approval_required", { rule: "merges-need-approval" });
  assert.equal(decision.approval.id, approval.id);
  assert.equal(decision.approval.status, "denied");
  assert.match(r.text, /denied/);
  const twice = await decide("alice", approval.id, true);
  assert.equal(twice.isError, true, "a decided request cannot be decided again");
  assert.equal(mergeRequests(13).length, 0);
  const events = stack.events("approval").filter((e) => e.approvalId === approval.id).map((e) => e.action);
  assert.deepEqual(events, ["requested", "denied"]);
});

test("expired approvals are refused: an approved one is not used, a pending one cannot be decided", async () => {
  // Approved, then the TTL passes before bob repeats the call.
  const { approval } = await requestMerge(14, "bob");
  assert.equal((await decide("carol", approval.id, true)).isError, false);
  await expireUntil(TTL + 1);
  const late = await requestMerge(14, "bob");
  assert.notEqual(late.approval.id, approval.id, "the expired approval is not used; a new request starts");
  assert.equal(late.approval.status, "pending");
  assert.equal(mergeRequests(14).length, 0);

  // Pending, then the TTL passes: approvers no longer see it and cannot decide it.
  await expireUntil(TTL + 1);
  assert.ok(!(await listFor("carol")).some((a) => a.id === late.approval.id), "an expired request is not listed");
  const decideLate = await decide("carol", late.approval.id, true);
  assert.equal(decideLate.isError, true, decideLate.text);
  assert.match(decideLate.text, /expired|no live/i);
  assert.equal(mergeRequests(14).length, 0);
});

/** An MCP client for `principal` on the worker's twin (another isolate, the same ledger). */
async function twinClient(principal) {
  const client = new Client({ name: `e2e-twin-${principal}`, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.worker.mcpUrl), {
    fetch: (url, init) => stack.worker.twinFetch(String(url), init),
    requestInit: { headers: { Authorization: `Bearer ${POLICY_PRINCIPALS[principal]}` } },
  }));
  return client;
}

test("many identical calls racing from two isolates for one approval: it is consumed exactly once", async () => {
  const RACERS = 16;
  const twin = await twinClient("bob");
  try {
    for (let round = 0; round < 3; round++) {
      const n = 900 + round;
      const { approval } = await requestMerge(n, "bob");
      // The twin sees the same request: one ledger for every isolate.
      const seen = await twin.callTool({ name: "bb_post", arguments: merge(n) });
      assert.equal(seen._meta?.decision?.approval?.id, approval.id, "the other isolate answers with the same request");
      const approved = await decide("carol", approval.id, true);
      assert.equal(approved.isError, false, approved.text);
      const mergesBefore = merges;
      const racers = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0
        ? stack.call("bb_post", merge(n), "bob").then((r) => r.result)
        : twin.callTool({ name: "bb_post", arguments: merge(n) }))));
      const ran = racers.filter((r) => !r.isError);
      assert.equal(ran.length, 1, `round ${round}: ${ran.length} of ${RACERS} racing calls ran`);
      assert.equal(merges, mergesBefore + 1, `round ${round}: Bitbucket merged once`);
      assert.equal(mergeRequests(n).length, 1, `round ${round}: Bitbucket saw one merge`);
      const refused = racers.filter((r) => r.isError);
      for (const r of refused) assert.equal(r._meta?.code, "approval_required", "the others are refused like a replay");
      // The losers share one new request, as identical calls do.
      assert.equal(new Set(refused.map((r) => r._meta.decision.approval.id)).size, 1, `round ${round}: one new request`);
      assert.notEqual(refused[0]._meta.decision.approval.id, approval.id);
    }
  } finally {
    await twin.close();
  }
});

test("pending requests are capped per requester, with a refusal that says so", async () => {
  const CAP = 20;
  // The earlier tests left requests by alice; let them expire first.
  await expireUntil(TTL + 1);
  for (let i = 0; i < CAP; i++) await requestMerge(2000 + i, "alice");
  const over = await stack.call("bb_post", merge(2999), "alice");
  const decision = assertRefusal(over.result, "approval_limit", { effect: "approval_required", rule: "merges-need-approval" });
  assert.equal(over.result._meta.limit, "pending_per_principal");
  assert.equal(decision.approval, undefined, "no request was recorded");
  assert.match(over.text, new RegExp(`already have ${CAP} pending approval requests`));
  // bob is not held back by alice's requests.
  await requestMerge(2999, "bob");
  assert.equal(mergeRequests(2999).length, 0);
});
