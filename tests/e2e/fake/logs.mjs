// Job logs of the fake upstream: GitHub jobs of the repository octo-org/logs whose logs are
// realistic (step groups, ANSI colours, CRLF, non-ASCII, runner stamps), their check-run
// annotations, and the log redirect to a second loopback host (the "blob store", 127.0.0.2),
// plus a third host (127.0.0.3) no allow-list names. The log texts are shared with the bench.
//
//   501 build        a Rust compile error          (decisive: error[E0308]: mismatched types)
//   502 test         a failing Jest test           (decisive: ● ApiClient › retries on 503)
//   503 integration  a test process OOM-killed     (decisive: signal: 9, SIGKILL: kill)
//   504 soak         a 50 MB log ending in a panic (decisive: panicked at src/storage/compaction.rs)
//   505              redirects to the third host (off every allow-list)
//   506              its signed URL has expired (the blob store answers 403)
//   507 lint         succeeded
//   508 e2e          a Playwright run the runner cancelled at the job's time limit, after
//                    passing tests (decisive: has exceeded the maximum execution time)
// Run 900 has jobs 501, 502 (failed) and 507.

import http from "node:http";
import { json } from "./util.mjs";
import { githubJobLog } from "./github.mjs";

export const LOGS_REPO = { owner: "octo-org", repo: "logs" };
const T0 = Date.UTC(2026, 0, 1, 10, 0, 0) / 1000;
const ESC = "\u001b";
const green = (s) => `${ESC}[1m${ESC}[32m${s}${ESC}[0m`;
const red = (s) => `${ESC}[1m${ESC}[31m${s}${ESC}[0m`;

const iso = (seconds) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
const stamp = (seconds, n) => new Date(Math.floor(seconds) * 1000).toISOString().replace(".000Z", `.${String(n % 10_000_000).padStart(7, "0")}Z`);

function setUp() {
  return ["Current runner version: '2.321.0'", "##[group]Operating System", "Ubuntu", "24.04.1", "LTS", "##[endgroup]",
    "##[group]Runner Image", "Image: ubuntu-24.04", "Version: 20260101.1.0", "##[endgroup]",
    "##[group]GITHUB_TOKEN Permissions", "Contents: read", "Metadata: read", "##[endgroup]",
    "Secret source: Actions", "Prepare workflow directory", "Prepare all required actions",
    "Getting action download info", "Download action repository 'actions/checkout@v4' (SHA:11bd71901bbe5b1630ceea73d27597364c9af683)",
    "Complete job name: {name}"];
}

function checkout() {
  const out = ["##[group]Run actions/checkout@v4", "with:", "  repository: octo-org/logs", "  fetch-depth: 1", "##[endgroup]",
    "Syncing repository: octo-org/logs", "##[group]Getting Git version info", "Working directory is '/home/runner/work/logs/logs'",
    "[command]/usr/bin/git version", "git version 2.47.1", "##[endgroup]"];
  for (let i = 0; i < 25; i++) out.push(`[command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader step-${i}`);
  out.push("Checked out 'refs/heads/main' at 3f2a9c1 « Grüße aus Köln — 日本語のコミット »");
  return out;
}

const post = () => ["Post job cleanup.", "[command]/usr/bin/git version", "git version 2.47.1", "Temporarily overriding HOME='/home/runner/work/_temp/x' before making global git config changes",
  "[command]/usr/bin/git config --local --name-only --get-regexp core\\.sshCommand"];
const complete = () => ["Cleaning up orphan processes"];

function compileError() {
  const out = ["##[group]Run cargo build --locked", "cargo build --locked", "shell: /usr/bin/bash -e {0}", "env:", "  CARGO_TERM_COLOR: always", "##[endgroup]"];
  for (let i = 0; i < 420; i++) out.push(`${green("   Compiling")} dependency-${i} v${1 + (i % 4)}.${i % 10}.${i % 7}`);
  out.push(`${green("   Compiling")} imgtool v0.4.0 (/home/runner/work/logs/logs)`);
  out.push(
    `${red("error[E0308]")}${ESC}[1m: mismatched types${ESC}[0m`,
    "   --> src/parser.rs:214:22",
    "    |",
    "214 |     let width: u32 = header.width;",
    "    |                ---   ^^^^^^^^^^^^ expected `u32`, found `u64`",
    "    |                |",
    "    |                expected due to this",
    "    |",
    "help: you can convert a `u64` to a `u32` and panic if the converted value doesn't fit",
    "    |",
    "214 |     let width: u32 = header.width.try_into().unwrap();",
    "    |                                  ++++++++++++++++++++",
    "",
    "For more information about this error, try `rustc --explain E0308`.",
    `${red("error")}: could not compile \`imgtool\` (lib) due to 1 previous error`,
    "##[error]Process completed with exit code 101.",
  );
  return out;
}

function failingTest() {
  const out = ["##[group]Run npm test", "npm test", "shell: /usr/bin/bash -e {0}", "##[endgroup]", "", "> app@1.0.0 test", "> jest --ci", ""];
  const pass = (i) => `${ESC}[0m${ESC}[7m${ESC}[1m${ESC}[32m PASS ${ESC}[39m${ESC}[22m${ESC}[27m${ESC}[0m src/module${i}/feature${i}.test.ts (${(i % 9) + 1}.${i % 10} s)`;
  const failure = [
    `${ESC}[1m${ESC}[31m  ● ${ESC}[22m${ESC}[1mApiClient › retries on 503${ESC}[39m${ESC}[22m`,
    "",
    "    expect(received).toBe(expected) // Object.is equality",
    "",
    "    Expected: 3",
    "    Received: 1",
    "",
    "      42 |     await client.get(\"/orders\");",
    "      43 |     expect(fetchMock).toHaveBeenCalled();",
    "    > 44 |     expect(calls).toBe(3);",
    "         |                   ^",
    "      45 |   });",
    "",
    "      at Object.<anonymous> (src/api/client.test.ts:44:19)",
  ];
  for (let i = 0; i < 380; i++) {
    out.push(pass(i));
    if (i === 200) out.push(`${ESC}[0m${ESC}[7m${ESC}[1m${ESC}[31m FAIL ${ESC}[39m${ESC}[22m${ESC}[27m${ESC}[0m src/api/client.test.ts (8.1 s)`, ...failure);
    if (i % 40 === 0) out.push(`  console.log`, `    récupération des données… ✓ ${i}`);
  }
  out.push(`${ESC}[1mSummary of all failing tests${ESC}[22m`, `${ESC}[31m FAIL ${ESC}[39m src/api/client.test.ts`, ...failure, "",
    `${ESC}[1mTest Suites: ${ESC}[22m${ESC}[1m${ESC}[31m1 failed${ESC}[39m${ESC}[22m, ${ESC}[1m${ESC}[32m380 passed${ESC}[39m${ESC}[22m, 381 total`,
    "Tests:       1 failed, 2412 passed, 2413 total", "Snapshots:   0 total", "Time:        212.4 s", "Ran all test suites.",
    "##[error]Process completed with exit code 1.");
  return out;
}

function oomKilled() {
  const out = ["##[group]Run cargo test --workspace --release", "cargo test --workspace --release", "shell: /usr/bin/bash -e {0}", "##[endgroup]"];
  for (let i = 0; i < 200; i++) out.push(`${green("   Compiling")} crate-${i} v0.${i % 9}.0`);
  out.push(`${green("    Finished")} \`release\` profile [optimized] target(s) in 4m 12s`, `${green("     Running")} tests/integration.rs (target/release/deps/integration-5f0c2e1a)`, "", "running 412 tests");
  for (let i = 0; i < 400; i++) out.push(`test import::case_${String(i).padStart(3, "0")} ... ${green("ok")}`);
  out.push("test import::large_archive_roundtrip has been running for over 60 seconds",
    `${red("error")}: test failed, to rerun pass \`--test integration\``, "", "Caused by:",
    "  process didn't exit successfully: `/home/runner/work/logs/logs/target/release/deps/integration-5f0c2e1a` (signal: 9, SIGKILL: kill)",
    "##[error]Process completed with exit code 101.");
  return out;
}

/** Playwright's list reporter: passing tests, then the runner cancels the job at its limit. */
function playwrightKilled() {
  const out = ["##[group]Run npx playwright test", "npx playwright test", "shell: /usr/bin/bash -e {0}", "env:", "  CI: true", "##[endgroup]", "",
    "Running 96 tests using 2 workers", ""];
  const specs = [["auth", ["signs in with a password", "signs out", "keeps the session after a reload", "refuses a wrong password"]],
    ["cart", ["adds an item", "removes an item", "applies a coupon", "keeps the cart across tabs"]],
    ["checkout", ["asks for an address", "validates the postcode", "shows the order summary", "pays with a saved card"]],
    ["search", ["finds a product by name", "filters by price", "sorts by rating", "paginates results"]],
    ["profile", ["edits the display name", "uploads an avatar", "changes the language", "deletes the account"]]];
  for (let i = 0; i < 40; i++) {
    const [spec, titles] = specs[Math.floor(i / 4) % specs.length];
    const title = titles[i % 4];
    const ms = 400 + ((i * 379) % 2600);
    const took = ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
    out.push(`  ${green("✓")}  ${String(i + 1).padStart(2)} [chromium] › tests/${spec}.spec.ts:${12 + (i % 4) * 14}:5 › ${spec} › ${title}${i >= 20 ? " (mobile)" : ""} ${ESC}[2m(${took})${ESC}[22m`);
  }
  out.push("##[error]The job running on runner GitHub Actions 12 has exceeded the maximum execution time of 20 minutes.",
    "##[error]The operation was canceled.");
  return out;
}

/** The lines of the 50 MB log's failing step, generated as it streams. */
function* soakLines(targetBytes) {
  yield* ["##[group]Run cargo test --workspace -- --include-ignored", "cargo test --workspace -- --include-ignored", "##[endgroup]"];
  let bytes = 0;
  for (let i = 0; bytes < targetBytes; i++) {
    const line = `test storage::scenario_${i % 997}::case_${i} ... ${green("ok")} (${(i * 7) % 1000} ms, ÄÖÜ-safe)`;
    bytes += line.length + 38;
    yield line;
  }
  yield* ["thread 'storage::compaction::large_segments' panicked at src/storage/compaction.rs:88:9:",
    "assertion `left == right` failed: segment 41 lost 3 rows", "  left: 1048573", " right: 1048576",
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", "",
    "test result: FAILED. 612402 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1893.22s",
    "##[error]Process completed with exit code 101."];
}

/** Size of the large log's failing step, in bytes (about 50 MB in all). */
export const SOAK_BYTES = 51_800_000;

function stepsOf(key) {
  const id = Number(key);
  const job = JOBS[id];
  const failing = job.conclusion !== "success";
  const body = { 501: compileError, 502: failingTest, 503: oomKilled, 508: playwrightKilled, 507: () => ["##[group]Run npm run lint", "##[endgroup]", "✔ no problems"] }[id] ?? compileError;
  const main = { name: job.step, lines: id === 504 ? soakLines(SOAK_BYTES) : body(), seconds: id === 504 ? 1900 : 240 };
  return [
    { name: "Set up job", lines: setUp().map((l) => l.replace("{name}", job.name)), seconds: 2 },
    { name: "Run actions/checkout@v4", lines: checkout(), seconds: 3 },
    { ...main, conclusion: failing ? job.conclusion : "success" },
    { name: "Upload report", lines: [], seconds: 0, conclusion: failing ? "skipped" : "success" },
    { name: "Post Run actions/checkout@v4", lines: post(), seconds: 1 },
    { name: "Complete job", lines: complete(), seconds: 1 },
  ].map((s, i, all) => ({ number: i + 1, conclusion: "success", ...s, start: T0 + all.slice(0, i).reduce((t, x) => t + x.seconds + 1, 0) }));
}

/** The jobs of octo-org/logs. */
export const JOBS = {
  501: { name: "build", step: "Build", conclusion: "failure", decisive: "error[E0308]: mismatched types",
    annotations: [{ path: "src/parser.rs", start_line: 214, end_line: 214, annotation_level: "failure", title: "rustc", message: "mismatched types: expected `u32`, found `u64`" }] },
  502: { name: "test", step: "Unit tests", conclusion: "failure", decisive: "● ApiClient › retries on 503", annotations: [] },
  503: { name: "integration", step: "Integration tests", conclusion: "failure", decisive: "(signal: 9, SIGKILL: kill)", annotations: [] },
  504: { name: "soak", step: "Soak tests", conclusion: "failure", decisive: "panicked at src/storage/compaction.rs:88:9", annotations: [] },
  505: { name: "elsewhere", step: "Build", conclusion: "failure", annotations: [] },
  506: { name: "expired", step: "Build", conclusion: "failure", annotations: [] },
  507: { name: "lint", step: "Lint", conclusion: "success", annotations: [] },
  508: { name: "e2e", step: "E2E tests", conclusion: "cancelled", decisive: "has exceeded the maximum execution time of 20 minutes",
    annotations: [{ path: ".github", start_line: 1, end_line: 1, annotation_level: "failure", title: "", message: "The job running on runner GitHub Actions 12 has exceeded the maximum execution time of 20 minutes." }] },
};

/** Job `id` as GitHub's API describes it. */
export function githubJob(base, id) {
  const job = JOBS[id];
  const steps = stepsOf(id);
  return {
    id: Number(id), run_id: 900, run_url: `${base}/repos/octo-org/logs/actions/runs/900`, node_id: `CR_${id}`, head_sha: "3f2a9c1",
    url: `${base}/repos/octo-org/logs/actions/jobs/${id}`, html_url: `https://github.com/octo-org/logs/actions/runs/900/job/${id}`,
    status: "completed", conclusion: job.conclusion, started_at: iso(T0), completed_at: iso(steps.at(-1).start + 1), name: job.name,
    steps: steps.map((s) => ({ name: s.name, status: "completed", conclusion: s.conclusion, number: s.number,
      started_at: iso(s.start), completed_at: iso(s.start + s.seconds) })),
    check_run_url: `${base}/repos/octo-org/logs/check-runs/${id}`, labels: ["ubuntu-latest"], runner_name: "GitHub Actions 12",
  };
}

/** The log of job `id` as the blob store serves it: stamped lines, CRLF, as pieces of text. */
export function* githubLog(key) {
  const id = Number(key);
  let n = 0;
  for (const step of stepsOf(id)) {
    const lines = id === 504 && step.name === JOBS[id].step ? step.lines : [...step.lines];
    let i = 0;
    const total = id === 504 && step.name === JOBS[id].step ? 600_000 : Math.max(lines.length, 1);
    for (const line of lines) {
      const at = step.start + Math.floor((i * step.seconds) / total);
      i += 1;
      n += 7919;
      yield `${stamp(at, n)} ${line}\r\n`;
    }
  }
}

/** The whole log of job `id` as one string (small logs only). */
export function githubLogText(id) {
  return [...githubLog(id)].join("");
}

/** Streams `pieces` into `res` in 64 KiB writes, waiting for the socket to drain. */
function stream(res, pieces) {
  res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
  let buffer = [];
  let size = 0;
  // Not for...of: leaving that loop to wait for "drain" would close the generator.
  const pump = () => {
    for (let next = pieces.next(); !next.done; next = pieces.next()) {
      const piece = next.value;
      buffer.push(piece);
      size += piece.length;
      if (size >= 64 * 1024) {
        const ok = res.write(buffer.join(""));
        buffer = [];
        size = 0;
        if (!ok) return void res.once("drain", pump);
      }
    }
    res.end(buffer.join(""));
  };
  pump();
}

/** CircleCI job 601 of gh/octo-org/logs: step outputs as CircleCI's JSON lists of messages. */
export const CIRCLE_JOB = { slug: "gh/octo-org/logs", number: 601, decisive: "● ApiClient › retries on 503" };

function circleOutput(step) {
  if (step === 1) return [{ type: "out", time: "2026-01-01T10:00:01Z", message: "Starting container cimg/node:20.11\r\nWarning: No authentication provided, using CircleCI credentials for pulls from Docker Hub.\r\n" }];
  if (step === 2) return [{ type: "out", time: "2026-01-01T10:00:05Z", message: checkout().join("\r\n") + "\r\n" }];
  const lines = failingTest().slice(4);
  return [
    { type: "out", time: "2026-01-01T10:00:09Z", message: lines.slice(0, 200).join("\r\n") + "\r\n" },
    { type: "out", time: "2026-01-01T10:03:09Z", message: lines.slice(200, -1).join("\r\n") + "\r\n" },
    { type: "err", time: "2026-01-01T10:03:10Z", message: "\r\nExited with code exit status 1\r\n" },
  ];
}

function circleDetails(base, blobs) {
  const action = (n, name, status, exit) => ({
    name, index: 0, step: n, status, failed: status === "failed" ? true : null, exit_code: exit, has_output: true,
    output_url: `${blobs.url}/circle-output/601/${n}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=FAKE`,
    start_time: "2026-01-01T10:00:00.000Z", type: "test",
  });
  return {
    build_num: 601, lifecycle: "finished", outcome: "failed", status: "failed", vcs_type: "github",
    build_url: "https://circleci.com/gh/octo-org/logs/601", workflows: { job_name: "unit-tests", workflow_name: "ci" },
    steps: [
      { name: "Spin up environment", actions: [action(1, "Spin up environment", "success", null)] },
      { name: "Checkout code", actions: [action(2, "Checkout code", "success", 0)] },
      { name: "npm test", actions: [action(3, "npm test", "failed", 1)] },
    ],
  };
}

/** A small server on a loopback address that records its requests. */
async function host(address, handler) {
  const requests = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    requests.push({ url: req.url, headers: req.headers });
    handler(req, res);
  });
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, address, resolve));
  const authority = `${address}:${server.address().port}`;
  return {
    authority, url: `http://${authority}`, requests,
    async close() { for (const s of sockets) s.destroy(); await new Promise((r) => server.close(r)); },
  };
}

/**
 * The blob store (127.0.0.2) and the host no allow-list names (127.0.0.3); `ctx.url` (the fake's
 * base, set once it listens) is used in the generic jobs' logs.
 */
export async function startLogHosts(ctx) {
  const blobs = await host("127.0.0.2", (req, res) => {
    const any = /^\/job-logs\/([^/]+)\/([^/]+)\/(\d+)\?/.exec(req.url);
    if (any) {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      return res.end(githubJobLog(ctx.url, any[1], any[2], Number(any[3])));
    }
    const c = /^\/circle-output\/601\/([123])\?/.exec(req.url);
    if (c) return json(res, 200, circleOutput(Number(c[1])));
    const m = /^\/job-logs\/(\d+)\?/.exec(req.url);
    if (!m || !JOBS[m[1]]) return json(res, 404, { message: "BlobNotFound" });
    if (m[1] === "506") {
      res.writeHead(403, { "Content-Type": "application/xml" });
      return res.end("<Error><Code>AuthenticationFailed</Code><Message>Signed expiry time has passed</Message></Error>");
    }
    stream(res, githubLog(m[1]));
  });
  const elsewhere = await host("127.0.0.3", (req, res) => json(res, 200, { stolen: true }));
  return { blobs, elsewhere, async close() { await blobs.close(); await elsewhere.close(); } };
}

/** The GitHub routes of octo-org/logs; `ctx.url` is the fake's base, `ctx.logHosts` its hosts. */
export function logRoutes(ctx) {
  const repo = "/repos/octo-org/logs";
  return [
    ["GET", /^\/repos\/octo-org\/logs\/actions\/jobs\/(\d+)$/, (req, res, m) => {
      if (!JOBS[m[1]]) return json(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest/actions/workflow-jobs" });
      json(res, 200, githubJob(ctx.url, m[1]));
    }],
    ["GET", /^\/repos\/octo-org\/logs\/actions\/runs\/900\/jobs$/, (req, res) => {
      const jobs = [501, 502, 507].map((id) => githubJob(ctx.url, id));
      json(res, 200, { total_count: jobs.length, jobs });
    }],
    ["GET", /^\/repos\/octo-org\/logs\/check-runs\/(\d+)\/annotations$/, (req, res, m) => {
      json(res, 200, (JOBS[m[1]]?.annotations ?? []).map((a) => ({ ...a, blob_href: `https://github.com${repo}/blob/3f2a9c1/${a.path}`, raw_details: null })));
    }],
    ["GET", /^\/api\/v1\.1\/project\/gh\/octo-org\/logs\/601$/, (req, res) => json(res, 200, circleDetails(ctx.url, ctx.logHosts.blobs))],
    ["GET", /^\/api\/v2\/project\/gh\/octo-org\/logs\/601\/tests$/, (req, res) => json(res, 200, {
      items: [
        { message: "expect(received).toBe(expected)\n\nExpected: 3\nReceived: 1", source: "jest", run_time: 0.21, file: "src/api/client.test.ts", result: "failure", name: "retries on 503", classname: "ApiClient" },
        { message: "", source: "jest", run_time: 0.02, file: "src/a.test.ts", result: "success", name: "formats", classname: "fmt" },
      ],
      next_page_token: null,
    })],
    ["GET", /^\/repos\/octo-org\/logs\/actions\/jobs\/(\d+)\/logs$/, (req, res, m) => {
      const signed = `job-logs/${m[1]}?sv=2025-01-05&se=2026-01-01T10%3A05%3A00Z&sp=r&sig=FAKE%2BSIGNATURE%3D`;
      const where = m[1] === "505" ? ctx.logHosts.elsewhere : ctx.logHosts.blobs;
      res.writeHead(302, { Location: `${where.url}/${signed}` });
      res.end();
    }],
  ];
}
