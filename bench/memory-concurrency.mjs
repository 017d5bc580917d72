// Memory of one isolate under concurrent large results: one 16 MiB runs page alone and one 2 MiB
// page alone (the memory per byte of body), 8 concurrent 16 MiB runs pages, and 32 concurrent 2 MiB pages, each case in a fresh workerd (Miniflare) with structured output on and
// the default memory budget (MEMORY_BUDGET_BYTES). Every call must answer, with its page or with
// the retryable busy error (`_meta.code` "server_busy"); a call refused as busy is retried after
// 250 ms, as a client would, until it is served (at most 40 tries), so the run also shows that the
// refused calls go through once room frees.
//
// Figures per case: the calls served at the first try, refused as busy at the first try, served
// in the end, lost (no 200, a transport error, any other failure); the wasm linear memory after
// the case (it never shrinks, so this is the Rust side's peak; read through the bench-only
// wrapper of bench/load/common.mjs); the JS heap's peak (Runtime.getHeapUsage over workerd's
// inspector, sampled every few milliseconds, garbage included); and their sum. For a single
// page, the bytes of memory per byte of body: the growth of wasm linear memory over the call
// (after a warm-up call) divided by the body's bytes (docs/reliability.md, Memory per byte of body).
//
//   node bench/memory-concurrency.mjs     # prints a table; exits 1 when a call is lost or wasm +
//                                         # JS heap reaches 110 MiB in any case

import http from "node:http";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { githubRun } from "../tests/e2e/fake/github.mjs";
import { mib, sampleHeapPeak, startLoadStack, toolCall, MCP_HEADERS } from "./load/common.mjs";

const MiB = 1024 * 1024;
const TARGET = 110 * MiB;
const RETRY_MS = 250;
const MAX_TRIES = 40;

/** A runs page of at most `bytes`. */
function runsBody(base, bytes) {
  const runs = [];
  let size = '{"total_count":,"workflow_runs":[]}'.length + 10;
  for (let id = 1; ; id++) {
    const run = JSON.stringify(githubRun(base, "octo-org", "big", id));
    if (size + run.length + 1 > bytes) break;
    runs.push(run);
    size += run.length + 1;
  }
  return Buffer.from(`{"total_count":${runs.length},"workflow_runs":[${runs.join(",")}]}`);
}

/**
 * POSTs `body` on a connection of its own (no keep-alive: a reused connection the server has just
 * closed fails on the client's side, which would count as lost though the worker never saw it):
 * { status, text }.
 */
function postFresh(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: MCP_HEADERS, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** One call, retried while it is refused as busy: { firstBusy, served, lost, tries, ms }. */
async function callUntilServed(mcpUrl, repo) {
  const t0 = performance.now();
  const body = toolCall("github_list_workflow_runs", { owner: "octo-org", repo, perPage: 100 });
  let firstBusy = false;
  for (let tries = 1; tries <= MAX_TRIES; tries++) {
    let reply;
    try {
      const { status, text } = await postFresh(mcpUrl, body);
      if (status !== 200) return { firstBusy, served: false, lost: `HTTP ${status}`, tries, ms: performance.now() - t0 };
      reply = JSON.parse(text);
    } catch (e) {
      return { firstBusy, served: false, lost: `${e} (${e.code ?? "no code"})`, tries, ms: performance.now() - t0 };
    }
    const result = reply.result;
    if (!result) return { firstBusy, served: false, lost: JSON.stringify(reply.error), tries, ms: performance.now() - t0 };
    if (!result.isError) return { firstBusy, served: true, lost: null, tries, ms: performance.now() - t0 };
    if (result._meta?.code !== "server_busy") {
      return { firstBusy, served: false, lost: result.content?.[0]?.text?.slice(0, 200), tries, ms: performance.now() - t0 };
    }
    if (tries === 1) firstBusy = true;
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
  return { firstBusy, served: false, lost: "still busy", tries: MAX_TRIES, ms: performance.now() - t0 };
}

async function measure({ name, repo, pageBytes, concurrent }) {
  const stack = await startLoadStack({ MCP_STRUCTURED_OUTPUT: "true" }, { inspect: true });
  try {
    const page = runsBody(stack.upstream.url, pageBytes);
    stack.upstream.route("GET", new RegExp(`^/repos/octo-org/${repo}/actions/runs$`), (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": page.length });
      res.end(page);
    });
    // Warm-up: a small call, so the baseline has the isolate's start-up allocations.
    await fetch(stack.mcpUrl, { method: "POST", headers: MCP_HEADERS, body: toolCall("circleci_get", { path: "/me" }) }).then((r) => r.text());
    const base = { wasm: await stack.wasmBytes(), heap: (await stack.jsHeap()).used };
    const heap = sampleHeapPeak(stack, base.heap);
    const t0 = performance.now();
    const calls = await Promise.all(Array.from({ length: concurrent }, () => callUntilServed(stack.mcpUrl, repo)));
    const ms = performance.now() - t0;
    const heapPeak = await heap.stop();
    const wasm = await stack.wasmBytes();
    return {
      name, pageBytes: page.length, concurrent, ms, base, wasm, heapPeak,
      firstServed: calls.filter((c) => c.served && !c.firstBusy).length,
      firstBusy: calls.filter((c) => c.firstBusy).length,
      served: calls.filter((c) => c.served).length,
      lost: calls.filter((c) => !c.served).map((c) => c.lost),
      maxTries: Math.max(...calls.map((c) => c.tries)),
    };
  } finally {
    await stack.close();
  }
}

const cases = [
  { name: "1 x 16 MiB", repo: "one16", pageBytes: 16 * MiB, concurrent: 1 },
  { name: "1 x 2 MiB", repo: "one2", pageBytes: 2 * MiB, concurrent: 1 },
  { name: "8 x 16 MiB", repo: "big16", pageBytes: 16 * MiB, concurrent: 8 },
  { name: "32 x 2 MiB", repo: "big2", pageBytes: 2 * MiB, concurrent: 32 },
];
const rows = [];
for (const c of cases) rows.push(await measure(c));

console.log(`one isolate, concurrent large pages, MiB (${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)})`);
console.log("case        page | served 1st  busy 1st  served  lost  most tries |  wasm before  after | JS heap before  peak | wasm+heap |   all ms");
let failed = false;
for (const r of rows) {
  const isolate = r.wasm + r.heapPeak;
  failed ||= r.lost.length > 0 || isolate >= TARGET;
  console.log(`${r.name.padEnd(10)} ${mib(r.pageBytes).padStart(5)} | ${String(r.firstServed).padStart(10)} ${String(r.firstBusy).padStart(9)} ${String(r.served).padStart(7)} ${String(r.lost.length).padStart(5)} ${String(r.maxTries).padStart(11)} |  ${mib(r.base.wasm).padStart(11)} ${mib(r.wasm).padStart(6)} | ${mib(r.base.heap).padStart(14)} ${mib(r.heapPeak).padStart(5)} | ${mib(isolate).padStart(9)} | ${r.ms.toFixed(0).padStart(8)}`);
  for (const why of r.lost) console.log(`  lost: ${why}`);
}
for (const single of rows.filter((r) => r.concurrent === 1)) {
  console.log(`memory per byte of body (one ${mib(single.pageBytes)} MiB page, wasm growth / body bytes): ${((single.wasm - single.base.wasm) / single.pageBytes).toFixed(2)}`);
}
console.log(failed ? `FAILED: a call was lost or wasm + JS heap reached ${TARGET / MiB} MiB` : `every call answered; wasm + JS heap under ${TARGET / MiB} MiB in every case`);
process.exitCode = failed ? 1 : 0;
