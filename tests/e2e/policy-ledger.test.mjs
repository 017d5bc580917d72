// The approval ledger's bounds in workerd, through the built worker and its Durable Object: a
// record's size, each principal's pending bytes, the ledger's total (filled by three principals),
// approval_list paged under its byte budget with the requester's text marked, and another
// principal answered normally and promptly while the ledger is full. The ledger holds at most
// 192 KiB here (MCP_APPROVAL_LEDGER_MAX_BYTES), so a few requests of about 14 KB reach every bound.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { Miniflare } from "miniflare";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startPolicyStack, assertRefusal, mergePath, POLICY, MERGE_REASON } from "./policy-common.mjs";
import { ledgerOp, compatibility, APPROVALS_BINDING } from "./worker.mjs";

const TTL = 60;
const LEDGER_MAX_BYTES = 192 * 1024;
/** The bounds of src/ledger.rs. */
const RECORD_MAX_BYTES = 16 * 1024;
const PRINCIPAL_MAX_BYTES = 128 * 1024;
const PAGE_BYTES = 24_000;
/** A message that makes a request of about 14 KB: under the record bound, 9 pass the principal's. */
const LARGE = 14_000;

/** The test policy with mallory in `platform`, so three principals make merge requests. */
const LEDGER_POLICY = { ...POLICY, groups: { ...POLICY.groups, platform: ["alice", "bob", "mallory"] } };

let stack;

before(async () => {
  stack = await startPolicyStack({
    policy: LEDGER_POLICY,
    vars: { MCP_APPROVAL_TTL_SECONDS: String(TTL), MCP_APPROVAL_LEDGER_MAX_BYTES: String(LEDGER_MAX_BYTES) },
  });
});
after(() => stack?.close());

// Each test starts from an empty ledger: one op a TTL ahead drops every record (see
// policy-approvals.test.mjs, expireUntil).
beforeEach(async () => {
  await ledgerOp(stack.worker.mf, { op: "pending", nowMs: Date.now() + (TTL + 1) * 1000, approver: "nobody" });
});

let next = 5000;
/** A Bitbucket merge of a fresh pull request whose message is `size` characters long. */
const merge = (size) => ({ path: mergePath(next++, ""), body: { message: "m".repeat(size), close_source_branch: true } });

/** Requests a merge of a `size`-character message as `principal`: its approval id, or its refusal. */
async function request(principal, size) {
  const r = await stack.call("bb_post", merge(size), principal);
  if (r.result._meta?.code === "approval_required") return { id: r.result._meta.decision.approval.id };
  return { refused: r };
}

/** Asserts an approval_limit refusal with `limit`; returns its text. */
function assertLimit(r, limit) {
  assertRefusal(r.result, "approval_limit", { effect: "approval_required", rule: "merges-need-approval" });
  assert.equal(r.result._meta.limit, limit, `_meta.limit: ${JSON.stringify(r.result._meta)}`);
  assert.equal(r.result._meta.decision.approval, undefined, "no request was recorded");
  return r.text;
}

/** Every page of approval_list as `principal`: [{ text, page }]. */
async function pages(principal) {
  const out = [];
  let cursor;
  do {
    const r = await stack.call("approval_list", cursor ? { cursor } : {}, principal);
    assert.equal(r.isError, false, `approval_list: ${r.text.slice(0, 300)}`);
    const page = JSON.parse(r.text);
    out.push({ text: r.text, page });
    cursor = page.nextCursor;
    assert.ok(out.length <= 50, "the pages end");
  } while (cursor);
  return out;
}

test("a principal's pending requests stop at its byte bound, with a refusal that names it; others go on", async () => {
  const made = [];
  let over;
  while (!over && made.length < 20) {
    const r = await request("alice", LARGE);
    if (r.id) made.push(r.id);
    else over = r.refused;
  }
  assert.ok(over, `alice made ${made.length} requests of ${LARGE} bytes and none was refused`);
  assert.ok(made.length >= 7 && made.length * LARGE < PRINCIPAL_MAX_BYTES, `alice made ${made.length}`);
  const text = assertLimit(over, "bytes_per_principal");
  assert.match(text, new RegExp(`${PRINCIPAL_MAX_BYTES} bytes one principal may hold`));
  // Nothing was dropped to make room: every request alice made is still listed.
  const listed = (await pages("carol")).flatMap((p) => p.page.approvals.map((a) => a.id));
  assert.deepEqual(listed.filter((id) => made.includes(id)).sort(), [...made].sort());
  // Bob is not held back by alice's bytes.
  assert.ok((await request("bob", LARGE)).id, "bob's request is recorded");
  assert.equal(stack.upstream.matching("POST", "/2.0/repositories/acme/web/pullrequests/").length, 0);
});

test("a request larger than a record may be is refused, naming the limit", async () => {
  const { refused } = await request("bob", RECORD_MAX_BYTES + 100);
  assert.ok(refused, "the oversized request was not recorded");
  const text = assertLimit(refused, "record_too_large");
  assert.match(text, new RegExp(`at most ${RECORD_MAX_BYTES} bytes`));
  assert.equal((await pages("carol")).flatMap((p) => p.page.approvals).length, 0, "nothing was recorded");
  // Just under the bound is recorded.
  assert.ok((await request("bob", RECORD_MAX_BYTES - 1024)).id);
});

test("three principals fill the ledger: then every new request is refused as ledger_full, and another principal is answered promptly", async () => {
  const made = [];
  let full;
  for (let i = 0; !full && i < 60; i++) {
    const r = await request(["alice", "bob", "mallory"][i % 3], LARGE);
    if (r.id) made.push(r.id);
    else full = r.refused;
  }
  assert.ok(full, `${made.length} requests of ${LARGE} bytes and the ledger never refused one`);
  assert.ok(made.length * LARGE < LEDGER_MAX_BYTES && made.length >= 10, `${made.length} recorded`);
  const text = assertLimit(full, "ledger_full");
  assert.match(text, new RegExp(`at most ${LEDGER_MAX_BYTES}\\)`));
  // Alice, far under her own bound, is refused too: nothing is recorded past the ledger's.
  assertLimit((await request("alice", LARGE)).refused ?? assert.fail("recorded past the bound"), "ledger_full");

  // A hostile request and another principal's list at once: the list answers normally, promptly.
  const started = Date.now();
  const [hostile, list] = await Promise.all([
    stack.call("bb_post", merge(LARGE), "mallory"),
    stack.call("approval_list", {}, "carol").then((r) => ({ ...r, ms: Date.now() - started })),
  ]);
  assertLimit(hostile, "ledger_full");
  assert.equal(list.isError, false, list.text.slice(0, 300));
  assert.ok(JSON.parse(list.text).approvals.length > 0);
  assert.ok(list.ms < 5000, `carol's approval_list took ${list.ms} ms`);
  // Every request recorded is still there.
  const listed = (await pages("carol")).flatMap((p) => p.page.approvals.map((a) => a.id));
  assert.deepEqual(listed.sort(), [...made].sort());
});

test("approval_list pages under its byte budget, lists each request once, and marks the requester's text", async () => {
  const made = [];
  for (let i = 0; i < 12; i++) made.push((await request(["alice", "bob", "mallory"][i % 3], 5000)).id);
  assert.ok(made.every(Boolean), "12 requests recorded");
  const all = await pages("carol");
  assert.ok(all.length >= 3, `${all.length} pages for about 70 KB of requests`);
  for (const { text } of all) assert.ok(text.length <= PAGE_BYTES, `a page of ${text.length} bytes`);
  assert.ok(!all[0].text.includes("\n"), "compact JSON");
  const entries = all.flatMap((p) => p.page.approvals);
  assert.deepEqual(entries.map((a) => a.id).sort(), [...made].sort(), "each request once");
  for (const a of entries) {
    assert.equal(a.arguments, undefined, "the arguments appear only as the requester's text");
    assert.match(a.requesterText.notice, /requester/);
    assert.equal(a.requesterText.arguments.body.message.length, 5000);
    assert.match(a.requesterText.path, /^\/2\.0\/repositories\/acme\/web\/pullrequests\/\d+\/merge$/);
  }
  assert.equal(all.at(-1).page.nextCursor, undefined, "the last page has no nextCursor");
  // A cursor it did not give is invalid params (-32602), naming the argument.
  const bad = await stack.call("approval_list", { cursor: "not-a-cursor" }, "carol");
  assert.equal(bad.isError, true);
  assert.match(bad.text, /cursor is not a nextCursor/);
});

/**
 * A stand-in for the ledger object of the earlier storage layout (whole records under
 * `record/<id>`, no layout marker), under the worker's name and class, so that with the same
 * `persist` directory it opens the storage the worker's ledger object will: it writes the records
 * it is sent, and lists every key it holds.
 */
const OLD_LEDGER = `
export class ApprovalsObject {
  constructor(state) { this.state = state; }
  async fetch(request) {
    if (request.method === "POST") {
      for (const record of await request.json()) await this.state.storage.put("record/" + record.id, JSON.stringify(record));
    }
    return Response.json([...(await this.state.storage.list()).keys()]);
  }
}
export default { fetch: () => new Response("") };
`;

/** Runs OLD_LEDGER on `persist`; sends it `records` (none: only lists); returns its keys. */
async function oldLedger(persist, records) {
  const mf = new Miniflare({
    name: "devtools-mcp-edge", modules: true, script: OLD_LEDGER, ...compatibility(),
    durableObjects: { [APPROVALS_BINDING]: "ApprovalsObject" }, durableObjectsPersist: persist,
  });
  try {
    const ns = await mf.getDurableObjectNamespace(APPROVALS_BINDING);
    const stub = ns.get(ns.idFromName("ledger"));
    const r = await stub.fetch("https://approvals.internal/", records ? { method: "POST", body: JSON.stringify(records) } : {});
    return await r.json();
  } finally {
    await mf.dispose();
  }
}

test("records of the earlier storage layout are cleared on upgrade: an approval granted before it is not used", async () => {
  const persist = mkdtempSync(path.join(tmpdir(), "mcp-ledger-"));
  let upgraded;
  try {
    // Bob's merge of pull request 4242, approved by carol, as the earlier layout stored it.
    const now = Date.now();
    const args = { path: mergePath(4242, ""), body: { message: "old", close_source_branch: true } };
    const { createHash } = await import("node:crypto");
    const sorted = (v) => (Array.isArray(v) ? v.map(sorted) : v && typeof v === "object"
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v);
    const approved = {
      id: "apr_0123456789abcdef0123456789abcdef", requester: "bob", tool: "bb_post",
      argumentsHash: createHash("sha256").update(JSON.stringify(sorted(args))).digest("hex"), arguments: args,
      rule: "merges-need-approval", reason: MERGE_REASON, method: "POST", path: mergePath(4242), identity: "bb-release",
      approvers: ["carol", "alice"], status: "approved", createdAtMs: now, expiresAtMs: now + 3_600_000,
      decidedBy: "carol", decisionReason: null,
    };
    const pending = { ...approved, id: "apr_fedcba9876543210fedcba9876543210", status: "pending", decidedBy: null, argumentsHash: "0".repeat(64) };
    assert.deepEqual((await oldLedger(persist, [approved, pending])).sort(), [`record/${approved.id}`, `record/${pending.id}`]);

    upgraded = await startPolicyStack({ policy: LEDGER_POLICY, vars: { MCP_APPROVAL_TTL_SECONDS: String(TTL) }, worker: { persist } });
    // Not used: bob's identical call needs a new approval, and nothing reached Bitbucket.
    const r = await upgraded.call("bb_post", args, "bob");
    const decision = assertRefusal(r.result, "approval_required", { rule: "merges-need-approval" });
    assert.notEqual(decision.approval.id, approved.id);
    assert.equal(decision.approval.status, "pending");
    assert.equal(upgraded.upstream.matching("POST", mergePath(4242)).length, 0, "the old approval did not run the merge");
    // The old pending request is neither listed nor decidable.
    const listed = JSON.parse((await upgraded.call("approval_list", {}, "carol")).text).approvals.map((a) => a.id);
    assert.deepEqual(listed, [decision.approval.id]);
    const late = await upgraded.call("approval_decide", { approvalId: pending.id, approve: true }, "carol");
    assert.equal(late.isError, true);
    assert.match(late.text, /no live approval request/i);
    await upgraded.close();
    upgraded = undefined;

    // A later start finds the marker and keeps what the new layout holds.
    upgraded = await startPolicyStack({ policy: LEDGER_POLICY, vars: { MCP_APPROVAL_TTL_SECONDS: String(TTL) }, worker: { persist } });
    const again = JSON.parse((await upgraded.call("approval_list", {}, "carol")).text).approvals;
    assert.deepEqual(again.map((a) => a.id), [decision.approval.id]);
    assert.deepEqual(again[0].requesterText.arguments, args);
  } finally {
    await upgraded?.close();
  }
  try {
    // Storage holds the new layout only.
    const keys = await oldLedger(persist);
    assert.ok(!keys.some((k) => k.startsWith("record/")), `old keys left: ${keys}`);
    assert.ok(keys.includes("layout") && keys.some((k) => k.startsWith("entry/")) && keys.some((k) => k.startsWith("details/")), `${keys}`);
  } finally {
    rmSync(persist, { recursive: true, force: true });
  }
});
