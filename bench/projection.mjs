// Projection benchmark, in two parts.
//
// host: builds and runs examples/bench_projection.rs (release), which times JMESPath and jq
// projection of a 16 MB list response and runaway jq programs against the budget.
//
// workerd: what a hostile call costs the built worker (make build) in workerd (Miniflare), as a
// real tools/call over the fake upstream: the doubling programs at 40 levels (jq `[., .]` and
// JMESPath `[@, @]` steps, each also ending in `tojson` / `to_string(@)`) as the `jq` argument on
// two pages (Jira's /myself, ~0.5 KB, and the ~300 KB GitHub runs page), and a 300,000-entry
// `queryParams`. Each is set against two references measured in the same run: a trivial call (the
// same call with a trivial projection; a 10-entry `queryParams`, sent) and one with the same
// output (the page without a projection, which `_jqError` returns beside the error; one entry past
// the maximum, refused the same way). Targets: a doubling answers `_jqError` within 50 ms and the
// isolate stays under 32 MiB; the 300,000-entry map is refused within 50 ms.
//
// The builtins group: programs whose builtins did unbounded work or built values far larger in
// memory than in print (decision 0094: `explode`, `splits`, `range`, `jn`, `indices`, `contains`
// on 400 KB strings, a run-time regex compiled huge), on /myself against its trivial projection.
// Targets: each answers (its `_jqError`, or for `contains` its value) within 3 s, the worst case
// of a program's fuel, and the isolate stays under 64 MiB (the 72 MiB budget less its base).
//
// Each case gets a fresh workerd, one warm-up call (the trivial projection), then ROUNDS timed
// calls (wall-clock from the request's start to the reply's end; the request body is built
// beforehand). Memory is the isolate's: wasm linear memory after the calls (it never shrinks, so
// it is the Rust side's peak) plus the largest JS heap sampled over the inspector meanwhile (an
// estimate: the inspector answers between the worker's steps), as bench/job-logs.mjs reads them.
// CPU is the workerd process's user + system time over the timed calls, per call (it also holds
// Miniflare's proxy and the loopback HTTP: an upper bound).
//
//   node bench/projection.mjs [host|workerd] [rounds, default 7] [group]   # both parts and every
//                                                                         # group by default; exits
//                                                                         # 1 when a target is missed

import { execFileSync } from "node:child_process";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { startLoadStack, post, toolCall, cpuMs, mib, RUNS } from "./load/common.mjs";

const PART = process.argv[2] ?? "both";
const ROUNDS = Number.parseInt(process.argv[3] ?? "7", 10);
const GROUP = process.argv[4];
const TIME_TARGET_MS = 50;
const MEMORY_TARGET = 32 * 1024 * 1024;
const MAX_QUERY_PARAMS = 1000; // src/tools/args.rs

if (PART === "both" || PART === "host") {
  execFileSync("cargo", ["run", "--quiet", "--release", "--example", "bench_projection"], { stdio: "inherit" });
}

/** `n` doublings: jq `[., .]` or JMESPath `[@, @]` steps joined by pipes. */
const doublings = (step, n) => Array(n).fill(step).join(" | ");

/** `n` integer-like names, highest first (the order that made map insertion quadratic). */
function params(n) {
  const out = {};
  for (let i = n - 1; i >= 0; i--) out[String(i)] = "v";
  return out;
}

/** The reply's text; `expect` says what it must show: a `_jqError`, an error, or success. */
function check(reply, expect) {
  // Invalid arguments are a JSON-RPC error; a failed call an error result.
  const failed = reply.error !== undefined || reply.result.isError === true;
  const text = reply.error?.message ?? reply.result.content.map((b) => b.text ?? "").join("");
  if (expect === "jqError") {
    // A large page's text is cut (its artifact holds the rest), so the error is found, not parsed.
    const error = /"_jqError":\s*("(?:[^"\\]|\\.)*")/.exec(text)?.[1];
    if (failed || !error || !/stopped|too large/.test(error)) throw new Error(`no budget _jqError: ${text.slice(0, 300)}`);
    return JSON.parse(error);
  }
  if (expect === "refused") {
    // Past the body's bound on JSON values the refusal comes before parsing, naming the cap.
    const refusal = /queryParams has .* entries; at most \d+ are allowed|more than \d+ JSON values.*queryParams/s;
    if (!failed || !refusal.test(text)) throw new Error(`not refused: ${text.slice(0, 300)}`);
    return text;
  }
  if (failed) throw new Error(`failed: ${text.slice(0, 300)}`);
  return text;
}

/** One case in a fresh workerd: { ms (sorted), cpu per call, wasm, heapPeak, note }. */
async function measure({ tool, args, expect }, warmUp) {
  const stack = await startLoadStack({}, { inspect: true });
  try {
    check(await post(stack.mcpUrl, toolCall(tool, warmUp)), "ok");
    const body = toolCall(tool, args);
    let heapPeak = (await stack.jsHeap()).used;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        heapPeak = Math.max(heapPeak, (await stack.jsHeap()).used);
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const ms = [];
    let note = "";
    const cpu0 = cpuMs(stack.pid);
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      // A refusal before parsing is a 400 with a JSON-RPC error body.
      const reply = await post(stack.mcpUrl, body, expect === "refused" ? [200, 400] : [200]);
      ms.push(performance.now() - t0);
      note = check(reply, expect);
    }
    const cpu = (cpuMs(stack.pid) - cpu0) / ROUNDS;
    sampling = false;
    await sampler;
    return { ms: ms.sort((a, b) => a - b), cpu, wasm: await stack.wasmBytes(), heapPeak, note };
  } finally {
    await stack.close();
  }
}

async function workerd() {
  const myself = { path: "/rest/api/3/myself", outputFormat: "json" };
  const runs = { ...RUNS, outputFormat: "json" };
  const pages = [
    { page: "jira /myself", tool: "jira_get", args: myself, trivial: ".accountId" },
    { page: "github runs 300 KB", tool: "github_list_workflow_runs", args: runs, trivial: ".total_count" },
  ];
  const programs = [
    doublings("[., .]", 40),
    `${doublings("[., .]", 40)} | tojson`,
    doublings("[@, @]", 40),
    `${doublings("[@, @]", 40)} | to_string(@)`,
  ];
  const label = (jq) => `${jq.startsWith("[.") ? "jq [.,.]" : "JMESPath [@,@]"} x40${/tojson|to_string/.test(jq) ? ` | ${jq.split(" | ").at(-1)}` : ""}`;
  const cases = [];
  for (const p of pages) {
    const warmUp = { ...p.args, jq: p.trivial };
    cases.push({ group: p.page, name: `trivial: jq ${p.trivial}`, tool: p.tool, args: warmUp, expect: "ok", warmUp, reference: "trivial" });
    cases.push({ group: p.page, name: "same output: no jq", tool: p.tool, args: p.args, expect: "ok", warmUp, reference: "same" });
    for (const jq of programs) cases.push({ group: p.page, name: label(jq), tool: p.tool, args: { ...p.args, jq }, expect: "jqError", warmUp, target: true });
  }
  const qp = { path: "/rest/api/3/myself" };
  const small = { ...qp, queryParams: params(10) };
  cases.push({ group: "queryParams", name: "trivial: 10 entries (sent)", tool: "jira_get", args: small, expect: "ok", warmUp: small, reference: "trivial" });
  cases.push({ group: "queryParams", name: `same output: ${MAX_QUERY_PARAMS + 1} (refused)`, tool: "jira_get", args: { ...qp, queryParams: params(MAX_QUERY_PARAMS + 1) }, expect: "refused", warmUp: small, reference: "same" });
  cases.push({ group: "queryParams", name: "300,000 entries (refused)", tool: "jira_get", args: { ...qp, queryParams: params(300_000) }, expect: "refused", warmUp: small, target: true, timeOnly: true });
  const trivial = { ...myself, jq: ".accountId" };
  cases.push({ group: "builtins", name: "trivial: jq .accountId", tool: "jira_get", args: trivial, expect: "ok", warmUp: trivial, reference: "trivial" });
  cases.push({ group: "builtins", name: "same output: no jq", tool: "jira_get", args: myself, expect: "ok", warmUp: trivial, reference: "same" });
  for (const [name, jq, expect] of [
    ["explode 11 MB", '"a" * 11000000 | explode | length', "jqError"],
    ["splits(\"\") 16 MB", '"ab" * 8000000 | [splits("")] | length', "jqError"],
    ["[range(3000000)]", "[range(3000000)]", "jqError"],
    ["jn(1e9; 1.5)", "jn(1000000000; 1.5)", "jqError"],
    ["indices 400 KB", '"a" * 400000 | indices("a" * 200000) | length', "jqError"],
    ["contains 400 KB", '"a" * 400000 | contains("a" * 200000 + "b")', "ok"],
    ["regex {0,10000} on 100 KB", '"ab" * 50000 | test("(?:a|b){0,10000}c")', "jqError"],
  ]) {
    cases.push({ group: "builtins", name, tool: "jira_get", args: { ...myself, jq }, expect, warmUp: trivial, target: true, timeTarget: 3000, memoryTarget: 64 * 1024 * 1024 });
  }

  const load = [os.loadavg()[0]];
  const rows = [];
  for (const c of cases.filter((x) => !GROUP || x.group === GROUP)) {
    rows.push({ ...c, ...(await measure(c, c.warmUp)) });
    load.push(os.loadavg()[0]);
  }

  console.log("");
  console.log(`workerd: hostile arguments of a real tools/call, ${ROUNDS} calls per case after a warm-up, fresh workerd per case`);
  console.log(`machine: ${os.availableParallelism()} CPUs, ${os.cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}, load average (1 min) ${Math.min(...load).toFixed(2)}-${Math.max(...load).toFixed(2)} during the run`);
  console.log("");
  console.log(`${"page".padEnd(18)} ${"case".padEnd(34)} | ${"ms min".padStart(7)} ${"median".padStart(7)} ${"max".padStart(7)} ${"x triv".padStart(6)} ${"x same".padStart(6)} | ${"CPU ms".padStart(7)} | ${"wasm".padStart(5)} ${"heap pk".padStart(7)} ${"MiB".padStart(5)} ${"x triv".padStart(6)} | target`);
  const median = (r) => r.ms[Math.floor(r.ms.length / 2)];
  const isolate = (r) => r.wasm + r.heapPeak;
  let missed = false;
  for (const r of rows) {
    const triv = rows.find((x) => x.group === r.group && x.reference === "trivial");
    const same = rows.find((x) => x.group === r.group && x.reference === "same");
    let verdict = "";
    if (r.target) {
      const timeTarget = r.timeTarget ?? TIME_TARGET_MS;
      const memoryTarget = r.memoryTarget ?? MEMORY_TARGET;
      const timeOk = median(r) < timeTarget;
      const memOk = r.timeOnly || isolate(r) < memoryTarget;
      missed ||= !timeOk || !memOk;
      verdict = `${timeOk ? "met" : "MISSED"} (< ${timeTarget} ms)${r.timeOnly ? "" : `, ${memOk ? "met" : "MISSED"} (< ${mib(memoryTarget)} MiB)`}`;
    }
    const ratio = (a, b) => (a / b).toFixed(2).padStart(6);
    console.log(`${r.group.padEnd(18)} ${r.name.padEnd(34)} | ${r.ms[0].toFixed(1).padStart(7)} ${median(r).toFixed(1).padStart(7)} ${r.ms.at(-1).toFixed(1).padStart(7)} ${ratio(median(r), median(triv))} ${ratio(median(r), median(same))} | ${r.cpu.toFixed(1).padStart(7)} | ${mib(r.wasm).padStart(5)} ${mib(r.heapPeak).padStart(7)} ${mib(isolate(r)).padStart(5)} ${ratio(isolate(r), isolate(triv))} | ${verdict}`);
  }
  console.log("");
  for (const r of rows.filter((x) => x.expect !== "ok")) console.log(`${r.group} / ${r.name}: ${r.note.slice(0, 110)}`);
  console.log(missed ? "a target was MISSED" : "every target met");
  process.exitCode = missed ? 1 : 0;
}

if (PART === "both" || PART === "workerd") await workerd();
