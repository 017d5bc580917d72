// The code-mode example (examples/code-mode/) end to end, so it cannot rot: the program runs
// against the built worker (structured output on, a 16 KiB structured bound, the example's
// policy) and the fake upstream, and its answer must equal the one computed here from the fake's
// own data. Also checks that it took the paths it exists to show: only structuredContent, nextPage,
// jq, artifact_read for oversized pages, and `_meta.code` on a refusal, then the approved retry.

import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { githubRun, failingJob, jobError, runCount } from "./fake/github.mjs";
import { startExampleServer, FILING_REASON } from "../../examples/code-mode/local.mjs";
import { connect } from "../../examples/code-mode/connect.mjs";
import { failingRunsOnMain } from "../../examples/code-mode/question.mjs";

const OWNER = "octo-org";
const REPO = "history-400";
const PAGES = 3;
const PER_PAGE = 100;
/** The fake's OPS issues that mention a workflow (tests/e2e/fake/atlassian.mjs). */
const MENTIONS = {
  CI: [],
  Nightly: [
    { key: "OPS-12", summary: "Nightly workflow: flaky lint step", status: "Done" },
    { key: "OPS-15", summary: "Nightly workflow runs out of disk space", status: "Done" },
  ],
  Release: [{ key: "OPS-7", summary: "Release workflow fails on main", status: "In Progress" }],
};

let server;
let calls;

before(async () => {
  server = await startExampleServer();
});
after(async () => {
  await server?.close();
});

/** Runs the program as alice, recording every call; returns the answer. */
async function run(options = {}) {
  calls = [];
  const client = await connect(server.mcpUrl, server.token, { onResult: (name, args, result) => calls.push({ name, args, result }) });
  try {
    return await failingRunsOnMain(client, { owner: OWNER, repo: REPO, pages: PAGES, perPage: PER_PAGE, fileMissing: true, ...options });
  } finally {
    await client.close();
  }
}

/** The answer's GitHub part, from the fake's run and job rules rather than through the server. */
function expectedFailures(base) {
  const onMain = [];
  for (let id = runCount(OWNER, REPO); id >= 1; id--) {
    const r = githubRun(base, OWNER, REPO, id);
    if (r.head_branch === "main") onMain.push(r);
  }
  const scanned = onMain.slice(0, PAGES * PER_PAGE);
  const failures = scanned.filter((r) => r.conclusion === "failure").map((r) => ({
    run: r.id, number: r.run_number, workflow: r.name, title: r.display_title, created: r.created_at, url: r.html_url,
    failed: [{ job: failingJob(r.id), step: `Run ${failingJob(r.id)}`, firstError: jobError(r.id, failingJob(r.id)) }],
  }));
  return { scanned, failures };
}

test("the answer equals the one computed from the fake's data", async () => {
  const answer = await run();
  const { scanned, failures } = expectedFailures(server.upstream.url);
  assert.equal(scanned.length, 300, "the window holds 300 runs on main");
  assert.deepEqual(answer.scanned, { pages: PAGES, runs: scanned.length });
  assert.deepEqual(answer.failures, failures);
  assert.ok(failures.length >= 50, `a non-trivial answer: ${failures.length} failures`);

  const names = [...new Set(failures.map((f) => f.workflow))].sort();
  assert.deepEqual(names, ["CI", "Nightly", "Release"]);
  assert.deepEqual(answer.workflows.map((w) => w.workflow), names);
  for (const w of answer.workflows) {
    const latest = scanned.find((r) => r.name === w.workflow && r.conclusion !== null);
    assert.deepEqual(w.latestOnMain, { run: latest.id, conclusion: latest.conclusion });
    assert.equal(w.failedRuns, failures.filter((f) => f.workflow === w.workflow).length);
    assert.deepEqual(w.jiraIssues, MENTIONS[w.workflow], `${w.workflow}: the issues that mention it`);
    assert.equal("filing" in w, w.workflow === "CI", "an issue is filed only where none mentions the workflow");
  }
  assert.equal(answer.repository, `${OWNER}/${REPO}`);
});

test("the program read structuredContent, followed nextPage, projected, and read oversized pages back", () => {
  const runsCalls = calls.filter((c) => c.name === "github_list_workflow_runs");
  assert.deepEqual(runsCalls.map((c) => c.args.page), [1, 2, 3], "pages followed through nextPage");
  assert.ok(runsCalls.every((c) => typeof c.args.jq === "string" && c.args.branch === "main"));
  const oversized = runsCalls.filter((c) => c.result.structuredContent.incomplete);
  assert.ok(oversized.length >= 1, "at least one page is over the 16 KiB bound");
  for (const c of oversized) {
    assert.equal(c.result.structuredContent.data, null);
    assert.equal(c.result.structuredContent.incomplete.reason, "size");
  }
  const reads = calls.filter((c) => c.name === "artifact_read");
  const ids = new Set(reads.map((c) => c.args.artifactId));
  assert.deepEqual([...ids].sort(), oversized.map((c) => c.result.structuredContent.incomplete.artifactId).sort(),
    "every oversized page, and only those, read back");
  for (const c of calls.filter((x) => ["github_list_workflow_runs", "github_list_workflow_jobs", "jira_get"].includes(x.name))) {
    assert.notEqual(c.result.isError, true, `${c.name} succeeded`);
    assert.ok(c.result.structuredContent, `${c.name} returned structuredContent`);
  }
  const jobs = calls.filter((c) => c.name === "github_list_workflow_jobs");
  assert.equal(jobs.length, expectedFailures(server.upstream.url).failures.length, "one jobs call per failed run");
});

test("a refused filing is reported from _meta.code; once approved, the identical retry files it", async () => {
  const first = await run();
  const ci = first.workflows.find((w) => w.workflow === "CI");
  assert.equal(ci.filing.outcome, "awaiting approval");
  assert.match(ci.filing.approvalId, /^apr_/);
  assert.equal(ci.filing.status, "pending");
  assert.deepEqual(ci.filing.approvers, ["carol"]);
  assert.equal(ci.filing.reason, FILING_REASON);
  const refused = calls.find((c) => c.name === "jira_post");
  assert.equal(refused.result._meta.code, "approval_required");
  assert.equal(server.upstream.count("POST", /^\/rest\/api\/3\/issue$/), 0, "nothing was filed while pending");

  const decided = await server.call("approval_decide", { approvalId: ci.filing.approvalId, approve: true }, "carol");
  assert.equal(decided.isError, false, decided.text);
  const retry = await run();
  const filed = retry.workflows.find((w) => w.workflow === "CI").filing;
  assert.equal(filed.outcome, "filed");
  assert.match(filed.key, /^PROJ-\d+$/);
  assert.equal(server.upstream.count("POST", /^\/rest\/api\/3\/issue$/), 1, "filed exactly once");
});
