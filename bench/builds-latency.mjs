// Added latency of two or more builds of the worker side by side, in one run: the same three calls
// as bench/tools-latency.mjs's headline cases (the 300 KB runs page with and without jq, a 50-issue
// jira_get search), each build's call interleaved with a trivial fetch-and-return worker and the
// builds taking turns, the order rotating every round, so that load on a shared machine hits every
// build alike. For comparing build settings (opt-level, wasm-opt flags) where two separate runs
// would differ by more than the settings do.
//
//   node bench/builds-latency.mjs [iterations per case] [build dir ...]
//
// Build directories are relative to the repository (default: `build`); each holds index.js and
// index_bg.wasm as `make build` writes them. The table gives each build's added median and its
// ratio to the first build's.

import os from "node:os";
import { startWorker } from "../tests/e2e/worker.mjs";
import { MCP_HEADERS, callBody, frozenUpstream, headlineCases, settle, startTrivial, timed, toolResult } from "./lib/tool-calls.mjs";

const N = Number.parseInt(process.argv[2] ?? "150", 10);
const BUILDS = process.argv.length > 3 ? process.argv.slice(3) : ["build"];
const WARMUP = 30;
const CASES = headlineCases();

const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)];

const { upstream, settings } = await frozenUpstream(CASES);
const workers = [];
for (const build of BUILDS) workers.push(await startWorker({ vars: settings, onLog: () => {}, build }));
const trivial = await startTrivial(upstream);

const rows = [];
try {
  for (const c of CASES) {
    const call = callBody(c);
    const fetchBody = trivial.fetchBody(c);
    const diffs = BUILDS.map(() => []);
    // Slot 0 is the trivial worker, slot k the k-th build; the order rotates by one each round.
    const slots = BUILDS.length + 1;
    for (let i = 0; i < WARMUP + N; i++) {
      const ms = new Array(slots);
      for (let j = 0; j < slots; j++) {
        const slot = (i + j) % slots;
        if (slot === 0) {
          ms[0] = (await timed(trivial.url, fetchBody, { "Content-Type": "application/json" })).ms;
        } else {
          const { ms: t, text } = await timed(workers[slot - 1].mcpUrl, call, MCP_HEADERS);
          toolResult(text, `${BUILDS[slot - 1]}: ${c.tool}`);
          ms[slot] = t;
          await settle();
        }
      }
      if (i >= WARMUP) BUILDS.forEach((_, k) => diffs[k].push(ms[k + 1] - ms[0]));
    }
    rows.push({ name: c.name, kb: (c.bytes / 1024).toFixed(0), added: diffs.map(median) });
  }
} finally {
  for (const w of workers) await w.close();
  await trivial.dispose();
  await upstream.close();
}

console.log(`added latency per build in workerd: ${N} rounds per case after ${WARMUP} warm-up, builds and a trivial fetch-and-return worker in turn`);
const load = os.loadavg().map((l) => l.toFixed(2)).join(" ");
console.log(`machine: ${os.availableParallelism()} cores (nproc), ${os.cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}, load average ${load}`);
console.log("");
const width = Math.max(12, ...BUILDS.map((b) => b.length));
console.log(`${"case".padEnd(28)} ${"body KB".padStart(7)} | ${BUILDS.map((b) => b.padStart(width)).join(" ")}  (added ms at the median; ratio to ${BUILDS[0]})`);
for (const r of rows) {
  const cells = r.added.map((ms) => `${ms.toFixed(2)} (${(ms / r.added[0]).toFixed(2)})`.padStart(width));
  console.log(`${r.name.padEnd(28)} ${r.kb.padStart(7)} | ${cells.join(" ")}`);
}
