// CircleCI's half of the CI loop in workerd through the official SDK client, against a fake CircleCI
// whose workflows change state: a running workflow waited on until it fails, its failed jobs, a
// re-run answering the new workflow, that one waited on until it succeeds; CircleCI's refusal of a
// re-run as a clear error sent once; the re-run under docs/policy.md's CircleCI example (the
// platform team re-runs, anyone else waits for a release manager); read-only connections without
// the re-run, and the github toolset without CircleCI's tools.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startPolicyStack, assertRefusal, POLICY_PRINCIPALS } from "./policy-common.mjs";

const FIRST = "5034460f-c7c4-4c43-9457-de07e2029e7b";
const SECOND = "a1b2c3d4-0000-4000-8000-000000000002";
let stack;
/** The fake workflows by id: status now, polls left before the final one, final status. */
let workflows;

/** The policy example of docs/policy.md, as written there. */
function documentedPolicy() {
  const doc = readFileSync(new URL("../../docs/policy.md", import.meta.url), "utf8");
  const start = doc.indexOf("<!-- circleci-loop-policy -->\n```json\n");
  assert.ok(start >= 0, "the marked example");
  const body = doc.slice(doc.indexOf("{", start));
  return body.slice(0, body.indexOf("\n```"));
}

before(async () => {
  stack = await startPolicyStack({ policy: documentedPolicy(), vars: { MCP_STRUCTURED_OUTPUT: "true" }, listTools: true });
});
after(() => stack?.close());
beforeEach(() => {
  stack.upstream.reset();
  workflows = {
    [FIRST]: { status: "running", pollsLeft: 1, final: "failed" },
  };
  routes(stack.upstream);
});

function routes(upstream) {
  upstream.route("GET", /^\/api\/v2\/workflow\/([0-9a-f-]{36})$/, (_req, res, m, { json }) => {
    const w = workflows[m[1]];
    if (!w) return json(res, 404, { message: "Workflow not found." });
    if (w.status === "running" && w.pollsLeft-- <= 0) w.status = w.final;
    json(res, 200, {
      pipeline_id: "00000000-0000-4000-8000-000000000012", id: m[1], name: "build-and-test",
      project_slug: "gh/octo-org/hello-world", status: w.status, started_by: "u", pipeline_number: 12,
      created_at: "2026-01-01T00:00:00Z", stopped_at: w.status === "running" ? null : "2026-01-01T00:05:00Z",
    });
  });
  upstream.route("GET", /^\/api\/v2\/workflow\/([0-9a-f-]{36})\/job$/, (_req, res, m, { json }) => {
    const failed = workflows[m[1]]?.status === "failed";
    json(res, 200, { items: [
      { job_number: 7, name: "build", status: "success", type: "build", id: "j7", project_slug: "gh/octo-org/hello-world" },
      { job_number: 8, name: "test", status: failed ? "failed" : "success", type: "build", id: "j8", project_slug: "gh/octo-org/hello-world" },
    ], next_page_token: null });
  });
  upstream.route("POST", /^\/api\/v2\/workflow\/([0-9a-f-]{36})\/rerun$/, (_req, res, m, { json }) => {
    const w = workflows[m[1]];
    if (!w) return json(res, 404, { message: "Workflow not found." });
    if (w.status === "running") return json(res, 400, { message: "Workflow is not in a final state" });
    workflows[SECOND] = { status: "running", pollsLeft: 1, final: "success" };
    json(res, 202, { workflow_id: SECOND });
  });
}

const reruns = () => stack.upstream.matching("POST", /\/rerun$/);

test("the loop: wait for a failure, read its failed jobs, re-run, wait for the new workflow's success", async () => {
  const first = await stack.call("circleci_get_workflow", { workflowId: FIRST, waitSeconds: 30 });
  assert.equal(first.isError, false, first.text);
  const failed = first.result.structuredContent.data;
  assert.equal(failed.workflow.status, "failed");
  assert.equal(failed.workflow.projectSlug, "gh/octo-org/hello-world");
  assert.deepEqual(failed.failedJobs, [{ jobNumber: 8, name: "test", status: "failed" }]);
  // A poll at 0 (running), the next at 5 s (failed).
  assert.equal(failed.completed, true);
  assert.equal(failed.polls, 2);
  assert.ok(failed.waitedMs >= 5_000 && failed.waitedMs < 9_000, `waitedMs ${failed.waitedMs}`);

  const rerun = await stack.call("circleci_rerun_workflow", { workflowId: FIRST });
  assert.equal(rerun.isError, false, rerun.text);
  assert.match(rerun.text, new RegExp(`^workflowId: ${SECOND}$`, "m"));
  assert.equal(rerun.result.structuredContent, undefined, "the re-run is text only");
  assert.deepEqual(reruns().map((r) => r.body), ['{"from_failed":true}']);

  const second = await stack.call("circleci_get_workflow", { workflowId: SECOND, waitSeconds: 30 });
  assert.equal(second.isError, false, second.text);
  const passed = second.result.structuredContent.data;
  assert.equal(passed.workflow.status, "success");
  assert.equal(passed.completed, true);
  assert.deepEqual(passed.failedJobs, []);
  stack.assertNoSecrets();
});

test("CircleCI's refusal is a clear error sent once; a bad id is refused before anything is sent", async () => {
  const text = await stack.callError("circleci_rerun_workflow", { workflowId: FIRST, fromFailed: false });
  assert.equal(text, `Error: CircleCI refused to re-run workflow ${FIRST} (HTTP 400): Workflow is not in a final state. Nothing was retried.`);
  assert.deepEqual(reruns().map((r) => r.body), ['{"from_failed":false}']);
  const missing = await stack.callError("circleci_get_workflow", { workflowId: "5034460f-c7c4-4c43-9457-de07e2029e7c" });
  assert.match(missing, /^Error: Resource not found\. CircleCI API: Workflow not found/);
  stack.upstream.reset();
  const bad = await stack.callError("circleci_get_workflow", { workflowId: "../me" });
  assert.match(bad, /workflowId must be a CircleCI workflow id, a UUID/);
  assert.equal(stack.upstream.requests.length, 0);
});

test("under the documented policy a re-run outside the platform team waits for a release manager, then runs once", async () => {
  workflows[FIRST] = { status: "failed", pollsLeft: 0, final: "failed" };
  const read = await stack.call("circleci_get_workflow", { workflowId: FIRST }, "mallory");
  assert.equal(read.isError, false, read.text);
  const held = await stack.call("circleci_rerun_workflow", { workflowId: FIRST }, "mallory");
  const decision = assertRefusal(held.result, "approval_required", {
    rule: "rerun-needs-approval", tool: "circleci_rerun_workflow", method: "POST", path: `/workflow/${FIRST}/rerun`,
  });
  assert.equal(reruns().length, 0, "nothing sent while the approval is pending");
  const decided = await stack.call("approval_decide", { approvalId: decision.approval.id, approve: true }, "carol");
  assert.equal(decided.isError, false, decided.text);
  const ran = await stack.call("circleci_rerun_workflow", { workflowId: FIRST }, "mallory");
  assert.equal(ran.isError, false, ran.text);
  assert.match(ran.text, new RegExp(`^workflowId: ${SECOND}$`, "m"));
  assert.equal(reruns().length, 1, "the approved re-run went out once");
});

/** tools/list at `path` under 2025-11-25, as alice: the tools. */
async function list(path) {
  const r = await fetch(`${stack.worker.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${POLICY_PRINCIPALS.alice}`, "MCP-Protocol-Version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body.result.tools;
}

test("read-only connections get no re-run; the github toolset gets neither tool", async () => {
  const circleci = await list("/mcp/x/circleci");
  const rerun = circleci.find((t) => t.name === "circleci_rerun_workflow");
  assert.deepEqual(rerun?.annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
  assert.equal(circleci.find((t) => t.name === "circleci_get_workflow")?.annotations.readOnlyHint, true);
  for (const path of ["/mcp/readonly", "/mcp/x/circleci/readonly"]) {
    const names = (await list(path)).map((t) => t.name);
    assert.ok(names.includes("circleci_get_workflow"), path);
    assert.ok(!names.includes("circleci_rerun_workflow"), `${path} lists the re-run`);
  }
  const github = (await list("/mcp/x/github")).map((t) => t.name);
  assert.ok(!github.some((n) => n.startsWith("circleci_")), github.join(", "));
});
