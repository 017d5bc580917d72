// github_get_job_logs with costly grep patterns in workerd (decision 0096): the time and workerd
// CPU of one call on the 40 KB compile-error log (job 501, the size the issue measured
// `(?:.?){0,2000}QQ` on: 4.3-6.2 s), against the same call without grep in the same run.
//
// Each case: one warm-up call (it also fills the log cache, so every timed call replays the log
// from R2 as a repeated hostile call would), then RUNS timed calls; median wall ms and workerd
// CPU ms per call (/proc, all threads). Cases: a literal; the costliest shape that is matched
// for free (`(?:.?){0,7}QQ`, 932 bytes on wasm32); one that pays and fits (3.5 KiB); one whose
// budget runs out (22 KiB: its time is the budget's); the issue's, refused when compiled.
//
//   node bench/job-logs-grep.mjs      # BENCH_BUILD=build-main for another build directory

import os from "node:os";
import { performance } from "node:perf_hooks";
import { startLoadStack, post, toolCall, cpuMs } from "./load/common.mjs";
import { LOGS_REPO } from "../tests/e2e/fake/logs.mjs";

const RUNS = 5;
const CASES = [
  ["no grep (reference)", undefined],
  ["literal E0308", "E0308"],
  ["free worst (?:.?){0,7}QQ", "(?:.?){0,7}QQ"],
  ["charged (?:.?){0,30}QQ", "(?:.?){0,30}QQ"],
  ["over budget (?:.?){0,200}QQ", "(?:.?){0,200}QQ"],
  ["the issue's (?:.?){0,2000}QQ", "(?:.?){0,2000}QQ"],
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const stack = await startLoadStack();
try {
  console.log(`grep on the 40 KB log of job 501, ${RUNS} calls per case (${os.cpus().length} CPUs ${os.cpus()[0].model}, load ${os.loadavg()[0].toFixed(2)})`);
  console.log("case                            median ms  min-max ms      x ref  CPU ms/call  answer");
  let reference;
  for (const [label, grep] of CASES) {
    const body = toolCall("github_get_job_logs", { ...LOGS_REPO, jobId: 501, tailLines: 5, ...(grep ? { grep } : {}) });
    await post(stack.mcpUrl, body);
    const times = [];
    const cpu0 = cpuMs(stack.pid);
    let answer = "";
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const reply = await post(stack.mcpUrl, body);
      times.push(performance.now() - t0);
      const result = reply.result ?? {};
      answer = reply.error ? `JSON-RPC error ${reply.error.code}` : result.isError ? `error ${result._meta?.code ?? "(no code)"}` : "excerpt";
    }
    const cpu = (cpuMs(stack.pid) - cpu0) / RUNS;
    const m = median(times);
    reference ??= m;
    const range = `${Math.min(...times).toFixed(0)}-${Math.max(...times).toFixed(0)}`;
    console.log(`${label.padEnd(32)}${m.toFixed(1).padStart(9)}  ${range.padStart(9)}  ${(m / reference).toFixed(2).padStart(9)}  ${cpu.toFixed(0).padStart(11)}  ${answer}`);
  }
} finally {
  await stack.close();
}
