// Another principal's calls while one principal's github_get_job_logs reads the 50 MB log (job
// 504), in workerd (decision 0093): `tools/list` every 20 ms until the log call answers, then 5
// more, against 20 `tools/list` calls on the idle worker in the same run. A fresh principal per
// round, so each round downloads the log (the cache is per principal).
//
//   node bench/job-logs-neighbours.mjs            # ROUNDS=2 by default
//   node bench/job-logs-neighbours.mjs --no-r2    # without the ARTIFACTS binding: no artifact is written
//   node bench/job-logs-neighbours.mjs --wrangler-dev [--no-inspector]
//       # behind wrangler's dev server, with the inspector `wrangler dev` attaches, or without it
//
// BENCH_BUILD names another build directory (e.g. one built from main, for a before/after).

import os from "node:os";
import { performance } from "node:perf_hooks";
import { startLoadStack, rpc, toolCall, MCP_HEADERS, TOKEN } from "./load/common.mjs";
import { startWranglerDevStack } from "./load/wrangler-dev.mjs";
import { JOBS, LOGS_REPO } from "../tests/e2e/fake/logs.mjs";

const ROUNDS = Number(process.env.ROUNDS ?? 2);
const READERS = Array.from({ length: ROUNDS }, (_, i) => `bench-reader${i}-token-0123456789abcdef`);
const noR2 = process.argv.includes("--no-r2");
const tokens = { load: TOKEN, ...Object.fromEntries(READERS.map((t, i) => [`reader${i}`, t])) };
const wranglerDev = process.argv.includes("--wrangler-dev");
const inspector = !process.argv.includes("--no-inspector");
const vars = { MCP_AUTH_TOKENS: JSON.stringify(tokens) };
const stack = wranglerDev ? await startWranglerDevStack(vars, { inspector }) : await startLoadStack(vars, { noR2 });
const where = wranglerDev ? `behind wrangler's dev server, inspector ${inspector ? "attached" : "off"}` : "in workerd (Miniflare)";

/** One POST as `token`: status (or the network error) and wall ms. */
async function send(token, body) {
  const t0 = performance.now();
  try {
    const r = await fetch(stack.mcpUrl, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body });
    const text = await r.text();
    return { status: r.status, ms: performance.now() - t0, text };
  } catch (e) {
    return { status: `ERR ${e.cause?.message ?? e.message}`, ms: performance.now() - t0, text: "" };
  }
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const row = (label, calls) => {
  const ms = calls.map((c) => c.ms);
  const failed = calls.filter((c) => c.status !== 200);
  return `${label.padEnd(28)} ${String(calls.length).padStart(5)} ${quantile(ms, 0.5).toFixed(0).padStart(7)} ${quantile(ms, 0.9).toFixed(0).padStart(7)} ${Math.max(...ms).toFixed(0).padStart(7)}  ${failed.length ? failed.map((c) => c.status).join(", ") : "none"}`;
};

try {
  console.log(`tools/list of another principal beside the 50 MB job log, ${where}${noR2 ? " (no ARTIFACTS binding)" : ""} (${os.cpus().length} CPUs ${os.cpus()[0].model}, load ${os.loadavg()[0].toFixed(2)})`);
  const idle = [];
  for (let i = 0; i < 20; i++) { idle.push(await send(TOKEN, rpc("tools/list"))); await pause(20); }
  console.log("case                         calls  p50 ms  p90 ms  max ms  not 200");
  console.log(row("idle worker (reference)", idle));
  for (const reader of READERS) {
    let done = false;
    const t0 = performance.now();
    const large = send(reader, toolCall("github_get_job_logs", { ...LOGS_REPO, jobId: 504, tailLines: 10 })).finally(() => { done = true; });
    const during = [];
    while (!done) { during.push(await send(TOKEN, rpc("tools/list"))); await pause(20); }
    const a = await large;
    const after = [];
    for (let i = 0; i < 5; i++) after.push(await send(TOKEN, rpc("tools/list")));
    const ok = a.status === 200 && a.text.includes(JOBS[504].decisive);
    console.log(`-- the log call: ${a.status}, ${(performance.now() - t0).toFixed(0)} ms, ${ok ? "decisive line present" : "FAILED " + a.text.slice(0, 200)}`);
    console.log(row("  during it", during));
    console.log(row("  right after it", after));
  }
} finally {
  await stack.close();
}
