// The output path of a large tool result, stage by stage, in wasm under V8: the crate built for
// wasm32 with the release profile the worker ships with (examples/bench_render_wasm.rs, a bare
// module), loaded into Node, each stage run by itself on the bodies bench/tools-latency.mjs
// serves (the fake upstream's 100-run page as the `{data, nextPage}` envelope a GitHub list
// renders, and the 50-issue Jira search as is). In workerd a request's clock stands still while
// it computes, so there the stages can only be told apart by difference (decision 0065); here
// each is timed directly. Figures are the fastest of 25 batches of 4 runs (per run, in ms): on a
// shared machine the fastest is the one that other processes disturbed least.
//
//   node bench/stages.mjs

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startFakeUpstream } from "../tests/e2e/fake-upstream.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const STAGES = [
  "parse (and drop)", "clone (and drop)", "render_bounded TOON, 40,000", "render_bounded JSON, 40,000", "render TOON, whole",
  "compact length", "artifact JSON", "null_non_finite (on a clone)", "reply of the cut text", "reply of the whole text",
  "reply with structuredContent", "UTF-8 check of the body", "jq `length` (body to jaq)", "JMESPath of the jq case",
  "parse of a copy (and drop)", "the same, text released",
];

function cargoBuild(args, name) {
  const out = execFileSync("cargo", ["build", "--quiet", "--message-format=json", ...args], {
    cwd: ROOT, encoding: "utf8", maxBuffer: 256 << 20, stdio: ["ignore", "pipe", "inherit"],
  });
  for (const line of out.split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    const msg = JSON.parse(line);
    if (msg.reason === "compiler-artifact" && msg.target?.name === name) return msg.filenames.find((f) => f.endsWith(".wasm"));
  }
  throw new Error(`cargo did not report ${name}`);
}

console.error("[bench] building examples/bench_render_wasm.rs (wasm32, release profile)...");
const wasm = readFileSync(cargoBuild(["--release", "--target", "wasm32-unknown-unknown", "--example", "bench_render_wasm"], "bench_render_wasm"));
const module = new WebAssembly.Module(wasm);
// The module links the whole crate, adapter included, whose wasm-bindgen imports are never called.
const imports = {};
for (const { module: from, name } of WebAssembly.Module.imports(module)) (imports[from] ??= {})[name] = () => { throw new Error(`unexpected import ${name}`); };
const { memory, bench_input, stages_load, stages_run } = new WebAssembly.Instance(module, imports).exports;

const upstream = await startFakeUpstream();
const body = async (path) => Buffer.from(await (await fetch(`${upstream.url}${path}`)).arrayBuffer());
const bodies = [
  ["github runs, 100", await body("/repos/octo-org/hello-world/actions/runs?per_page=100"), 1],
  ["jira search, 50", await body("/rest/api/3/search/jql?jql=project+%3D+PROJ+ORDER+BY+key&maxResults=50"), 0],
];
await upstream.close();

console.log(`output path stages in wasm (V8 ${process.versions.v8}), ${os.availableParallelism()} cores, ${os.cpus()[0]?.model ?? "unknown CPU"}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`${"stage".padEnd(30)} ${bodies.map(([name, bytes]) => `${name} (${(bytes.length / 1024).toFixed(0)} KB)`.padStart(24)).join(" ")}  (ms, fastest)`);
const columns = bodies.map(([, bytes, whole]) => {
  const at = bench_input(bytes.length); // may grow the memory: take its buffer afterwards
  new Uint8Array(memory.buffer, at, bytes.length).set(bytes);
  if (stages_load(whole) !== 1) throw new Error("not JSON");
  return STAGES.map((_, stage) => {
    stages_run(stage, 5);
    const times = [];
    for (let k = 0; k < 25; k++) {
      const start = performance.now();
      stages_run(stage, 4);
      times.push((performance.now() - start) / 4);
    }
    return Math.min(...times);
  });
});
STAGES.forEach((name, stage) => console.log(`${name.padEnd(30)} ${columns.map((c) => c[stage].toFixed(3).padStart(24)).join(" ")}`));
process.exit(0);
