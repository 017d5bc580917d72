// The CI loop an agent runs, scripted against the fake GitHub in workerd, measured two ways in
// one run: a failed run is read (the run and its failed jobs), why it failed (the failed job's log
// excerpt), its failed jobs re-run, then the wait for the new attempt
//   A. by the server: one github_get_workflow_run with waitSeconds (conditional polls, 5 s
//      doubling to 30 s);
//   B. by the model: github_list_workflow_runs (perPage 1) every POLL_MS, read each time.
// The run completes DONE_MS after the re-run in both. Reported: tool calls, model tokens read
// (o200k_base of every result's text), GitHub requests and how many were answered 304, and the
// ratios B/A. The CPU per poll is not measured here (the host tests' ten-minute wait gives the
// polls' count: tests/it/github_runs.rs).
//
//   node bench/ci-loop.mjs [--json]

import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startStack } from "../tests/e2e/tools-common.mjs";
import { ciLoopRun, CI_LOOP_BASE, CI_LOOP_REPO } from "../tests/e2e/fake/ciloop.mjs";
import { githubRun } from "../tests/e2e/fake/github.mjs";

const DONE_MS = Number(process.env.CI_LOOP_DONE_MS ?? 30_000);
const POLL_MS = Number(process.env.CI_LOOP_POLL_MS ?? 15_000);

/** A failing test job's log, runner-stamped, with the passing lines a real one has around it. */
function failingLog() {
  const stamp = "2026-01-01T00:01:00.0000000Z";
  const lines = ["##[group]Run npm test", "npm test", "##[endgroup]", "> app@1.0.0 test", "> vitest run"];
  for (let i = 1; i <= 40; i++) lines.push(` ✓ src/module${i}.test.ts (${i % 7 + 3} tests) ${10 + i} ms`);
  lines.push(" ❯ src/api.test.ts (4 tests | 1 failed) 88 ms", "   × GET /health answers 200 41 ms",
    "     → expected 500 to be 200 // Object.is equality", " Test Files  1 failed | 40 passed (41)",
    "##[error]Process completed with exit code 1.", "Cleaning up orphan processes");
  return lines.map((l) => `${stamp} ${l}\r\n`).join("");
}

/** One loop: its tool calls, tokens read and GitHub requests. */
async function loop(stack, wait) {
  stack.upstream.reset();
  const run = ciLoopRun(stack.upstream);
  Object.assign(run, { pollsAfterRerun: Infinity, msAfterRerun: DONE_MS });
  stack.upstream.route("GET", new RegExp(`^${CI_LOOP_BASE}/jobs/72/logs$`), (_req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end(failingLog());
  });
  // The repository's latest run, as GitHub lists it (its full fields), in its state now.
  stack.upstream.route("GET", new RegExp(`^${CI_LOOP_BASE}/runs$`), (req, res, _m, { json }) => {
    run.polls++;
    if (!run.completed && Date.now() >= run.completesAt) run.completed = true;
    const { body, etag } = run.body();
    const listed = { ...githubRun(stack.upstream.url, CI_LOOP_REPO.owner, CI_LOOP_REPO.repo, 249), ...body };
    run.tagged(req, res, json, { total_count: 1, workflow_runs: [listed] }, `${etag}-list`);
  });
  const figures = { calls: 0, tokens: 0 };
  const call = async (name, args) => {
    const r = await stack.call(name, args);
    if (r.isError) throw new Error(`${name}: ${r.text}`);
    figures.calls++;
    figures.tokens += countTokens(r.text);
    return r.text;
  };
  await call("github_get_workflow_run", { ...CI_LOOP_REPO, runId: 4242 });
  await call("github_get_job_logs", { ...CI_LOOP_REPO, runId: 4242 });
  await call("github_rerun_workflow_run", { ...CI_LOOP_REPO, runId: 4242 });
  const waited = Date.now();
  await wait(call);
  figures.waitedMs = Date.now() - waited;
  figures.requests = stack.upstream.requests.filter((r) => r.path.startsWith("/repos/")).length;
  figures.notModified = run.notModified;
  figures.completed = run.completed;
  return figures;
}

const byServer = (call) => call("github_get_workflow_run", { ...CI_LOOP_REPO, runId: 4242, waitSeconds: 600 });

async function byModel(call) {
  for (;;) {
    const text = await call("github_list_workflow_runs", { ...CI_LOOP_REPO, perPage: 1 });
    if (/status: completed/.test(text)) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const stack = await startStack();
try {
  const server = await loop(stack, byServer);
  const model = await loop(stack, byModel);
  const ratio = (k) => (server[k] ? (model[k] / server[k]).toFixed(2) : "n/a");
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ doneMs: DONE_MS, pollMs: POLL_MS, server, model }));
  } else {
    console.log(`run completes ${DONE_MS / 1000} s after its re-run; the model polls every ${POLL_MS / 1000} s`);
    console.log("| loop | tool calls | model tokens | GitHub requests | of them 304 | waited |");
    console.log("| --- | --- | --- | --- | --- | --- |");
    for (const [name, f] of [["server waits (waitSeconds)", server], ["model polls the list", model]]) {
      console.log(`| ${name} | ${f.calls} | ${f.tokens} | ${f.requests} | ${f.notModified} | ${(f.waitedMs / 1000).toFixed(1)} s |`);
    }
    console.log(`ratio model/server: tool calls ${ratio("calls")}, tokens ${ratio("tokens")}, requests ${ratio("requests")}`);
  }
  if (!server.completed || !model.completed) throw new Error("a loop ended before the run completed");
} finally {
  await stack.close();
}
