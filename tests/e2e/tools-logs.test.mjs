// github_get_job_logs and circleci_get_job_logs in workerd through the official MCP client, against the fake upstream's
// realistic logs (tests/e2e/fake/logs.mjs): GitHub's redirect to a second loopback host (the
// blob store), each option, url inputs, the complete log read back through artifact_read, a
// redirect to a host off the allow-list (refused, nothing sent there) and an expired signed URL.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";
import { CIRCLE_JOB, JOBS, LOGS_REPO, githubLogText } from "./fake/logs.mjs";

const TOOL = "github_get_job_logs";
let stack;
before(async () => { stack = await startStack(); });
after(() => stack?.close());

const job = (id, extra = {}) => stack.callJson(TOOL, { ...LOGS_REPO, jobId: id, ...extra });
const texts = (lines) => lines.map((l) => l.text);

async function readArtifact(id) {
  const parts = [];
  for (let offset = 0; ;) {
    const r = await stack.call("artifact_read", { artifactId: id, offset, maxBytes: 1_048_576 });
    const chunk = JSON.parse(r.text);
    parts.push(Buffer.from(chunk.data, "base64"));
    if (chunk.eof) return Buffer.concat(parts);
    offset = chunk.nextOffset;
  }
}

test("a compile error: the failed step's tail holds the decisive line, the annotation says where", async () => {
  const { jobs, moreJobs } = await job(501);
  assert.equal(moreJobs, 0);
  const [build] = jobs;
  assert.equal(build.conclusion, "failure");
  assert.deepEqual(build.annotations, [{ path: "src/parser.rs", line: 214, level: "failure", message: "mismatched types: expected `u32`, found `u64`" }]);
  assert.equal(build.log.steps.length, 1);
  const [step] = build.log.steps;
  assert.equal(step.name, "Build");
  // The last 30 lines: the 14 `Compiling` lines among them collapsed into one entry that names
  // their range and shows the last, the blank line before the last three left out (decision 0105).
  const last = step.lastLine;
  assert.deepEqual(step.tail[0], { line: last - 29, text: `[14 lines ${last - 29}-${last - 16}]    Compiling imgtool v0.4.0 (/home/runner/work/logs/logs)` });
  const numbers = [last - 29, ...Array.from({ length: 12 }, (_, i) => last - 15 + i), last - 2, last - 1, last];
  assert.deepEqual(step.tail.map((l) => l.line), numbers);
  assert.ok(texts(step.tail).includes(JOBS[501].decisive), texts(step.tail).join("\n"));
  // Stamps, colours and carriage returns are gone; non-ASCII survives.
  for (const l of step.tail) assert.doesNotMatch(l.text, /\u001b|\r|^2026-/);
  assert.deepEqual(texts(build.log.errors), ["##[error]Process completed with exit code 101."]);
  // The blob store got the request, without the GitHub credential.
  const blob = stack.upstream.logHosts.blobs.requests.at(-1);
  assert.match(blob.url, /^\/job-logs\/501\?/);
  assert.equal(blob.headers.authorization, undefined);
  // The complete log, byte for byte.
  assert.deepEqual(await readArtifact(build.logArtifactId), Buffer.from(githubLogText(501)));
  stack.assertNoSecrets();
});

test("a failing test and an OOM-killed test process", async () => {
  for (const id of [502, 503]) {
    const [j] = (await job(id)).jobs;
    const tail = texts(j.log.steps[0].tail);
    assert.ok(tail.some((t) => t.includes(JOBS[id].decisive)), `${id}: ${tail.join("\n")}`);
  }
});

test("a Playwright run cancelled at its time limit: the passing tests before it collapse, the decisive lines stay", async () => {
  const [j] = (await job(508)).jobs;
  assert.equal(j.conclusion, "cancelled");
  const [step] = j.log.steps;
  assert.equal(step.conclusion, "cancelled");
  const last = step.lastLine;
  assert.deepEqual(step.tail.map((l) => l.line), [last - 29, last - 2, last - 1, last]);
  assert.match(step.tail[0].text, new RegExp(`^\\[27 lines ${last - 29}-${last - 3}\\]   ✓  39 \\[chromium\\] › tests/profile\\.spec\\.ts:40:5 › profile › changes the language \\(mobile\\) \\(1\\.8s\\)$`));
  assert.equal(step.tail[1].text, "  ✓  40 [chromium] › tests/profile.spec.ts:54:5 › profile › deletes the account (mobile) (2.2s)");
  assert.ok(step.tail[2].text.includes(JOBS[508].decisive));
  assert.equal(step.tail[3].text, "##[error]The operation was canceled.");
  // grep lines are never collapsed: the run's lines are there as they were written.
  const grep = await job(508, { grep: "✓  3[0-9] ", context: 0, tailLines: 0 });
  assert.equal(grep.jobs[0].log.grep.lines.length, 10);
  assert.equal(grep.jobs[0].log.grep.lines[0].text, "  ✓  30 [chromium] › tests/checkout.spec.ts:26:5 › checkout › validates the postcode (mobile) (991ms)");
});

test("options: tailLines, grep with context, steps all, jq, TOON", async () => {
  const [j] = (await job(501, { tailLines: 2, grep: "E0308|could not compile", context: 1, steps: "all" })).jobs;
  assert.deepEqual(j.log.steps.map((s) => s.name), ["Set up job", "Run actions/checkout@v4", "Build", "Post Run actions/checkout@v4", "Complete job"]);
  assert.ok(j.log.steps.every((s) => s.tail.length <= 2));
  assert.equal(j.log.grep.matches, 3);
  assert.deepEqual(j.log.grep.lines.filter((l) => l.match).map((l) => l.text),
    ["error[E0308]: mismatched types", "For more information about this error, try `rustc --explain E0308`.", "error: could not compile `imgtool` (lib) due to 1 previous error"]);
  assert.ok(j.log.grep.lines.some((l) => !l.match), "context lines are there");
  const projected = await stack.callJson(TOOL, { ...LOGS_REPO, jobId: 502, jq: "jobs[0].log.steps[0].tail[-1].text" });
  assert.equal(projected, "##[error]Process completed with exit code 1.");
  const toon = await stack.call(TOOL, { ...LOGS_REPO, jobId: 501, tailLines: 3 });
  assert.equal(toon.isError, false);
  assert.match(toon.text, /tail\[3\]\{line,text\}:/);
});

test("url inputs: a run's failed jobs, and one job", async () => {
  const run = await stack.callJson(TOOL, { url: "https://github.com/octo-org/logs/actions/runs/900", tailLines: 1 });
  assert.deepEqual(run.jobs.map((j) => j.name), ["build", "test"]);
  const all = await stack.callJson(TOOL, { url: "https://github.com/octo-org/logs/actions/runs/900", failedOnly: false, tailLines: 1 });
  assert.deepEqual(all.jobs.map((j) => j.name), ["build", "test", "lint"]);
  const one = await stack.callJson(TOOL, { url: "https://github.com/octo-org/logs/actions/runs/900/job/503" });
  assert.equal(one.jobs[0].name, "integration");
});

test("a redirect off the allow-list is refused and nothing is sent there", async () => {
  const [j] = (await job(505)).jobs;
  assert.match(j.logError, /127\.0\.0\.3:\d+, which is not in LOG_REDIRECT_HOSTS; nothing was sent there/);
  assert.doesNotMatch(j.logError, /SIGNATURE|sig=/);
  assert.equal(j.logArtifactId, null);
  assert.equal(stack.upstream.logHosts.elsewhere.requests.length, 0);
});

test("an expired signed URL says so", async () => {
  const [j] = (await job(506)).jobs;
  assert.match(j.logError, /signed URL on 127\.0\.0\.2:\d+ was refused \(HTTP 403\): it has expired/);
  assert.equal(j.logArtifactId, null);
});

test("bad arguments are explained", async () => {
  assert.match(await stack.callError(TOOL, { ...LOGS_REPO, jobId: 501, grep: "(a" }), /not a valid regular expression/);
  assert.match(await stack.callError(TOOL, { ...LOGS_REPO }), /exactly one of jobId, runId and url/);
  assert.match(await stack.callError(TOOL, { url: "https://github.com/octo-org/logs/pull/3" }), /run or job URL/);
  assert.match(await stack.callError(TOOL, { ...LOGS_REPO, jobId: 999 }), /Not Found/);
  stack.assertNoSecrets();
});

test("circleci: the failed step's tail, the failed tests, options and the job URL", async () => {
  const byUrl = await stack.callJson("circleci_get_job_logs", { url: "https://app.circleci.com/pipelines/github/octo-org/logs/77/workflows/5f1c/jobs/601" });
  const bySlug = await stack.callJson("circleci_get_job_logs", { projectSlug: CIRCLE_JOB.slug, jobNumber: CIRCLE_JOB.number });
  for (const { jobs } of [byUrl, bySlug]) {
    const [j] = jobs;
    assert.equal(j.name, "unit-tests");
    assert.equal(j.conclusion, "failed");
    assert.deepEqual(j.failedTests.map((t) => `${t.classname} ${t.name}`), ["ApiClient retries on 503"]);
    assert.equal(j.log.steps.length, 1);
    assert.equal(j.log.steps[0].conclusion, "failed (exit code 1)");
    assert.ok(texts(j.log.steps[0].tail).some((t) => t.includes(CIRCLE_JOB.decisive)), texts(j.log.steps[0].tail).join("\n"));
    const all = (await readArtifact(j.logArtifactId)).toString("utf8");
    assert.ok(all.startsWith("Starting container cimg/node:20.11") && all.endsWith("Exited with code exit status 1\r\n"));
  }
  const grep = await stack.callJson("circleci_get_job_logs", { ...{ projectSlug: CIRCLE_JOB.slug, jobNumber: 601 }, grep: "Exited with code", context: 0, steps: "all", tailLines: 1 });
  assert.equal(grep.jobs[0].log.grep.matches, 1);
  assert.equal(grep.jobs[0].log.steps.length, 3);
  // The output host never saw the CircleCI token.
  for (const r of stack.upstream.logHosts.blobs.requests.filter((r) => r.url.startsWith("/circle-output/"))) {
    assert.equal(r.headers["circle-token"], undefined);
  }
  assert.match(await stack.callError("circleci_get_job_logs", { projectSlug: "gh/octo-org/logs" }), /give projectSlug and jobNumber, or a job url/);
  stack.assertNoSecrets();
});
