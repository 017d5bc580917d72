// Structured output through the official Python client (PyPI `mcp`, in the project-local
// virtualenv .tools/py that scripts/python.sh installs), in both modes. The client validates every
// structuredContent against the listed outputSchema with jsonschema and raises on a mismatch
// (tests/e2e/python/structured_client.py reports that as a failed call); a control shows its check
// is live. The same calls as the TypeScript spec, under the 2026-07-28 revision (the client's
// `auto` mode) and the initialize handshake (`legacy`), the oversized page read back whole by a
// Python "program", and another principal refused.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, spawn } from "node:child_process";
import path from "node:path";
import { ROOT } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { startStack, PRINCIPALS } from "./tools-common.mjs";
import {
  REPO, ONE_RUN_REPO, ONE_RUN_ID, EMPTY_204_PATH, SCHEMA_TOOLS, MIN_BOUND, MAX_BOUND, ARTIFACT_ID,
  NOT_FOUND, addStructuredRoutes, maskIds, maskClock,
} from "./structured-common.mjs";

const RUNS = "github_list_workflow_runs";
const SCRIPT = path.join(ROOT, "tests/e2e/python/structured_client.py");
const PAGE = { ...REPO, perPage: 100, outputFormat: "json" };

// scripts/python.sh exits 3 when PyPI is unreachable: the one case that skips (loudly), unless
// REQUIRE_ALL_SUITES=1 (set by .ci/run), where a suite that cannot run is a failure.
const setup = spawnSync(path.join(ROOT, "scripts/python.sh"), { encoding: "utf8" });
const python = setup.status === 0 ? setup.stdout.trim().split("\n").at(-1) : null;
const offline = setup.status === 3;
const required = process.env.REQUIRE_ALL_SUITES === "1";
const skip = offline && !required
  ? "PyPI is unreachable, so the MCP Python client is not installed: SKIPPING the Python end-to-end spec"
  : false;
if (skip) console.error(`\n!!!!!!!! ${skip} !!!!!!!!\n${setup.stderr}`);

test("scripts/python.sh installed the pinned client", { skip }, () => {
  assert.ok(!offline, `PyPI is unreachable and REQUIRE_ALL_SUITES=1: the Python spec cannot run\n${setup.stderr}`);
  assert.equal(setup.status, 0, `scripts/python.sh failed:\n${setup.stderr}`);
  assert.ok(python?.endsWith("/.tools/py/bin/python"), python);
});

/** Runs the Python client with `plan`; resolves to its report. */
function runPython(plan) {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`the Python client exited with ${code}:\n${err.slice(-4000)}`));
      try { resolve(JSON.parse(out)); } catch (e) { reject(new Error(`unreadable report: ${e.message}\n${out.slice(0, 500)}\n${err.slice(-2000)}`)); }
    });
    child.stdin.end(JSON.stringify(plan));
  });
}

const CALLS = [
  { name: RUNS, arguments: { ...REPO, actor: "nobody", outputFormat: "json" } },
  { name: RUNS, arguments: { ...ONE_RUN_REPO, jq: "workflow_runs[*].id" } },
  { name: RUNS, arguments: { ...REPO, perPage: 3, jq: "workflow_runs[*].id" } },
  { name: "github_list_workflow_jobs", arguments: { ...REPO, runId: 249, outputFormat: "json" } },
  { name: "circleci_get", arguments: { path: "/project/gh/octo-org/hello-world/pipeline", outputFormat: "json" } },
  { name: "jira_get", arguments: { path: "/rest/api/3/issue/PROJ-7", outputFormat: "json" } },
  { name: "bb_get", arguments: { path: "/repositories/acme/widgets/diff/main..topic-3" } },
  { name: "jira_get", arguments: { path: EMPTY_204_PATH } },
  { name: "jira_get", arguments: { path: "/rest/api/3/issue/NOPE-1" } },
  { name: "bb_post", arguments: { path: "/repositories/acme/widgets/pullrequests", body: { title: "Add CI", source: { branch: { name: "ci" } } } } },
];

let upstream;
let on;
let off;
let small;
let big;

before(async () => {
  if (!python) return;
  upstream = await startFakeUpstream();
  addStructuredRoutes(upstream);
  const flag = { MCP_STRUCTURED_OUTPUT: "true" };
  [on, off, small, big] = await Promise.all([
    startStack({ upstream, vars: flag }),
    startStack({ upstream }),
    startStack({ upstream, vars: { ...flag, MCP_STRUCTURED_MAX_BYTES: String(MIN_BOUND) } }),
    startStack({ upstream, listTools: true, vars: { ...flag, MCP_STRUCTURED_MAX_BYTES: String(MAX_BOUND) } }),
  ]);
});

after(async () => {
  for (const s of [on, off, small, big]) await s?.close();
  await upstream?.close();
});

const plan = (stack, calls, { mode = "auto", principal = "alice" } = {}) =>
  ({ url: stack.worker.mcpUrl, token: PRINCIPALS[principal], mode, calls });

function checkFlagOn(report, label) {
  const withSchema = Object.entries(report.tools).filter(([, s]) => s).map(([n]) => n).sort();
  assert.deepEqual(withSchema, [...SCHEMA_TOOLS].sort(), `${label}: the schema tools advertise outputSchema`);
  assert.equal(report.validationControl.rejected, true, `${label}: the client's jsonschema check is live`);
  report.calls.forEach((c, i) => assert.equal(c.ok, true, `${label} call ${i} (${CALLS[i].name}): ${c.error}`));
  const sc = report.calls.map((c) => c.structuredContent);
  assert.deepEqual(sc[0], { data: { total_count: 0, workflow_runs: [] }, nextPage: null });
  assert.deepEqual(sc[1], { data: [ONE_RUN_ID], nextPage: null });
  assert.deepEqual(sc[2], { data: [250, 249, 248], nextPage: 2 });
  assert.deepEqual(JSON.parse(report.calls[3].texts[0]), sc[3]);
  assert.deepEqual(Object.keys(sc[4]), ["data", "cache"]);
  assert.deepEqual(JSON.parse(report.calls[4].texts[0]), sc[4]);
  assert.deepEqual(sc[5].data, JSON.parse(report.calls[5].texts[0]));
  assert.equal(typeof sc[6].data, "string");
  assert.equal(JSON.stringify(sc[6].data), report.calls[6].texts[0]);
  assert.deepEqual(sc[7], { data: {} });
  assert.equal(report.calls[8].isError, true);
  assert.equal(report.calls[8].hasStructured, false, "an error has no structuredContent");
  assert.equal(report.calls[9].isError, false);
  assert.equal(report.calls[9].hasStructured, false, "a write verb answers text only");
}

test("flag on, 2026-07-28 and the initialize handshake: every example validates in the Python client", { skip }, async () => {
  const [modern, legacy] = await Promise.all([runPython(plan(on, CALLS)), runPython(plan(on, CALLS, { mode: "legacy" }))]);
  assert.equal(modern.protocolVersion, "2026-07-28");
  assert.notEqual(legacy.protocolVersion, "2026-07-28");
  checkFlagOn(modern, "auto");
  checkFlagOn(legacy, "legacy");
});

test("flag off: no outputSchema, no structuredContent, the same texts", { skip }, async () => {
  const [onReport, offReport] = await Promise.all([runPython(plan(on, CALLS)), runPython(plan(off, CALLS))]);
  assert.deepEqual(Object.values(offReport.tools).filter(Boolean), []);
  assert.equal(offReport.validationControl.checked, false);
  offReport.calls.forEach((c, i) => {
    assert.equal(c.ok, true, `call ${i}: ${c.error}`);
    assert.equal(c.hasStructured, false, `call ${i} (${CALLS[i].name}) has no structuredContent`);
    assert.equal(c.isError, onReport.calls[i].isError);
    assert.deepEqual(c.texts.map((t) => maskClock(maskIds(t))), onReport.calls[i].texts.map((t) => maskClock(maskIds(t))),
      `call ${i} (${CALLS[i].name}): the text does not depend on the flag`);
  });
});

test("the oversized page: a Python program reads it back whole through artifact_read, equal to the inline value; bob is refused", { skip }, async () => {
  const ref = (await big.call(RUNS, PAGE)).result.structuredContent;
  assert.equal(ref.incomplete, undefined);
  const report = await runPython(plan(small, [{ name: RUNS, arguments: PAGE, readArtifact: true, chunkBytes: 40000 }]));
  const [call] = report.calls;
  assert.equal(call.ok, true, call.error);
  const sc = call.structuredContent;
  assert.equal(sc.data, null);
  assert.equal(sc.nextPage, 2);
  assert.equal(sc.incomplete.reason, "size");
  assert.equal(sc.incomplete.limitBytes, MIN_BOUND);
  assert.match(sc.incomplete.artifactId, ARTIFACT_ID);
  assert.ok(call.texts[0].includes(sc.incomplete.artifactId), "the truncated text names the artifact");
  assert.equal(call.artifact.ok, true, call.artifact.error);
  assert.ok(call.artifact.reads >= 7, `${call.artifact.reads} reads of 40000 bytes`);
  assert.equal(call.artifact.totalBytes, sc.incomplete.bytes);
  assert.equal(call.artifact.text, JSON.stringify(ref), "byte for byte what structuredContent would have been");

  const bob = await runPython(plan(small, [{ name: "artifact_read", arguments: { artifactId: sc.incomplete.artifactId } }], { principal: "bob" }));
  assert.equal(bob.calls[0].ok, true, bob.calls[0].error);
  assert.equal(bob.calls[0].isError, true);
  // A recent id that is not bob's is not found at once, as any unknown id is.
  assert.equal(bob.calls[0].texts.join(""), NOT_FOUND);
});
