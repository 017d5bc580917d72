// github_get_job_logs in workerd (decision 0046): the tokens a model reads for four typical
// failures against the last 500 lines of the same logs (what the peers return by default), and
// the time and peak memory of a 50 MB log.
//
// Tokens are o200k_base (gpt-tokenizer) of the result's text with default arguments (TOON,
// tailLines 30), against the last 500 lines of the raw log as the log host serves it; the
// targets are at most one fifth and under 500 tokens (decision 0105), with the decisive line
// present. The logs are the fake upstream's (tests/e2e/fake/logs.mjs): a Rust compile error, a
// failing Jest test, an OOM-killed test process, a Playwright run cancelled at its time limit.
//
// Memory: one fresh workerd (Miniflare) for the 50 MB log; the wasm linear memory after the call
// (it never shrinks, so it is the Rust side's peak), the isolate's JS heap sampled over the
// inspector during the call, and the workerd process's VmHWM growth (which also holds
// Miniflare's R2 simulator receiving the artifact: an upper bound). Target: wasm + JS heap peak
// under 64 MiB.
//
//   node bench/job-logs.mjs     # prints both tables; exits 1 when a target is missed

import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { startLoadStack, post, toolCall, processMemory, mib, sampleHeapPeak } from "./load/common.mjs";
import { JOBS, LOGS_REPO, githubLogText, SOAK_BYTES } from "../tests/e2e/fake/logs.mjs";

const TOOL = "github_get_job_logs";
const PEER_LINES = 500;
const TOKEN_TARGET = 500;
const MEMORY_TARGET = 64 * 1024 * 1024;

function text(reply) {
  if (reply.error || reply.result?.isError) throw new Error(JSON.stringify(reply).slice(0, 400));
  return reply.result.content.map((b) => b.text ?? "").join("");
}

let failed = false;
const stack = await startLoadStack({}, { inspect: true });
try {
  console.log(`job logs: tokens (o200k_base) of the answer vs the last ${PEER_LINES} lines (${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)})`);
  console.log("failure                      log lines  ours  last 500 lines  ratio  decisive line in ours");
  for (const id of [501, 502, 503, 508]) {
    const ours = text(await post(stack.mcpUrl, toolCall(TOOL, { ...LOGS_REPO, jobId: id })));
    const lines = githubLogText(id).split("\r\n").filter((l, i, all) => i < all.length - 1 || l);
    const peer = lines.slice(-PEER_LINES).join("\n");
    const [a, b] = [countTokens(ours), countTokens(peer)];
    const decisive = ours.includes(JOBS[id].decisive);
    failed ||= !decisive || a * 5 > b || a >= TOKEN_TARGET;
    const label = `${id} ${JOBS[id].name}: ${JOBS[id].decisive}`.slice(0, 28).padEnd(28);
    console.log(`${label} ${String(lines.length).padStart(9)} ${String(a).padStart(5)} ${String(b).padStart(15)} ${(a / b).toFixed(3).padStart(6)}  ${decisive ? "yes" : "NO"}`);
  }

  // A warm-up call, then the 50 MB log with the heap sampled meanwhile.
  text(await post(stack.mcpUrl, toolCall(TOOL, { ...LOGS_REPO, jobId: 501 })));
  const base = { ...processMemory(stack.pid), wasm: await stack.wasmBytes(), heap: (await stack.jsHeap()).used };
  const heap = sampleHeapPeak(stack, base.heap);
  const t0 = performance.now();
  const answer = text(await post(stack.mcpUrl, toolCall(TOOL, { ...LOGS_REPO, jobId: 504, outputFormat: "json" })));
  const ms = performance.now() - t0;
  const heapPeak = await heap.stop();
  const after = { ...processMemory(stack.pid), wasm: await stack.wasmBytes() };
  const job = JSON.parse(answer).jobs[0];
  const bytes = job.log?.bytes ?? 0;
  const decisive = answer.includes(JOBS[504].decisive);
  const isolate = after.wasm + heapPeak;
  failed ||= !decisive || isolate >= MEMORY_TARGET || !job.logArtifactId || bytes < SOAK_BYTES * 0.9;
  console.log("");
  console.log("log            MB   lines  call ms  MB/s | wasm before after | JS heap before peak | wasm+heap peak | process RSS before HWM after | decisive, artifact");
  console.log(`${"504 soak".padEnd(10)} ${(bytes / 1e6).toFixed(1).padStart(6)} ${String(job.log?.lines).padStart(7)} ${ms.toFixed(0).padStart(8)} ${(bytes / 1e6 / (ms / 1000)).toFixed(1).padStart(5)} |     ${mib(base.wasm).padStart(6)} ${mib(after.wasm).padStart(5)} |        ${mib(base.heap).padStart(6)} ${mib(heapPeak).padStart(4)} | ${mib(isolate).padStart(14)} | ${mib(base.rss).padStart(18)} ${mib(after.hwm).padStart(9)} | ${decisive ? "yes" : "NO"}, ${job.logArtifactId ? "saved" : "MISSING"}`);
  console.log(isolate < MEMORY_TARGET ? "the 50 MB log stays under 64 MiB (wasm + JS heap)" : "OVER 64 MiB (wasm + JS heap)");
} finally {
  await stack.close();
}
process.exitCode = failed ? 1 : 0;
