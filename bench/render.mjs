// Render throughput (MB/s of input JSON) of our TOON and JSON renderers beside the references,
// in one run, on a 1 MB and a 16 MB real-shaped document (tests/oracle/render_corpus.mjs):
//   - reference on Node: @toon-format/toon 2.0.1 encode(v, { indent: 2 }) and
//     JSON.stringify(v, null, 2);
//   - host build: examples/bench_render.rs, native, opt-level 3 (see docs/rendering.md);
//   - wasm build in workerd: examples/bench_render_wasm.rs, the release profile the worker ships
//     with, loaded into a Miniflare worker beside the same references running in that worker.
// Parsing is excluded everywhere: each side parses once, then renders repeatedly. The machine is
// shared, so the engines are measured in interleaved rounds, each engine rendering for about
// 100 ms per round, so that load hits all alike. Each figure is the fastest render (Node, host)
// or the fastest batch's mean (workerd, whose clock stands still while it computes).
// Targets: host >= 3x the Node reference, wasm in workerd >= 1x the Node reference.
//
//   node bench/render.mjs [--quick]     (--quick: the 1 MB document only)

import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { encode } from "@toon-format/toon";
import { realShapedDocument } from "../tests/oracle/render_corpus.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const QUICK = process.argv.includes("--quick");
const MIN_MS = 1000;
const MB = 1e6;

const dir = join(tmpdir(), "devtools-mcp-edge-render-bench");
mkdirSync(dir, { recursive: true });
const docs = [["1 MB", 1 << 20, 1], ...(QUICK ? [] : [["16 MB", 16 << 20, 16]])].map(([label, size, seed]) => {
  const path = join(dir, `doc-${seed}.json`);
  writeFileSync(path, realShapedDocument(seed, size));
  return { label, path, bytes: readFileSync(path) };
});

/** Cargo's JSON messages -> the path of the artifact built for `name`. */
function cargoBuild(args, name, env = {}) {
  const out = execFileSync("cargo", ["build", "--quiet", "--message-format=json", ...args], {
    cwd: ROOT, encoding: "utf8", maxBuffer: 256 << 20, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"],
  });
  for (const line of out.split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    const msg = JSON.parse(line);
    if (msg.reason === "compiler-artifact" && msg.target?.name === name) return msg.executable ?? msg.filenames.find((f) => f.endsWith(".wasm"));
  }
  throw new Error(`cargo did not report ${name}`);
}

const results = []; // { doc, format, engine, mbps }
const record = (doc, format, engine, msPerRender) => results.push({ doc: doc.label, format, engine, mbps: doc.bytes.length / MB / (msPerRender / 1000) });

// Host build, native. The worker's release profile optimises for size (opt-level "s"); a native
// build has no reason to, so this one overrides it, in its own target dir to leave others' alone.
console.error("[bench] building the host benchmark (release, opt-level 3)...");
const hostBin = cargoBuild(["--release", "--example", "bench_render"], "bench_render", {
  CARGO_PROFILE_RELEASE_OPT_LEVEL: "3",
  CARGO_TARGET_DIR: join(ROOT, "target", "bench-host"),
});
const host = spawn(hostBin, ["--serve", ...docs.map((d) => d.path)], { stdio: ["pipe", "pipe", "inherit"] });
const hostReplies = createInterface({ input: host.stdout })[Symbol.asyncIterator]();
/** The fastest of `runs` renders by the host build, timed by itself, in ms. */
async function hostRender(docIndex, format, runs = 1) {
  host.stdin.write(`${docIndex} ${format} ${runs}\n`);
  const { value, done } = await hostReplies.next();
  if (done) throw new Error("bench_render --serve exited");
  return Number(value.split(" ")[0]);
}

// Wasm build in workerd.
console.error("[bench] building the wasm benchmark module (release profile)...");
const wasmPath = cargoBuild(["--release", "--target", "wasm32-unknown-unknown", "--example", "bench_render_wasm"], "bench_render_wasm");
const wasmBytes = readFileSync(wasmPath);
// The module links the whole crate, adapter included, whose wasm-bindgen imports the benchmark
// never calls: each is bound to a function that throws.
const importNames = WebAssembly.Module.imports(new WebAssembly.Module(wasmBytes)).map(({ module, name }) => [module, name]);

const WORKER = `
import wasm from "./bench.wasm";
import { encode } from "./toon.mjs";
const IMPORTS = ${JSON.stringify(importNames)};
const imports = {};
for (const [module, name] of IMPORTS) (imports[module] ??= {})[name] = () => { throw new Error("unexpected import " + name); };
const instance = new WebAssembly.Instance(wasm, imports);
const { memory, bench_input, bench_load, bench_render } = instance.exports;
let value;
export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/load") {
      const bytes = new Uint8Array(await request.arrayBuffer());
      const at = bench_input(bytes.length); // may grow the memory: take its buffer afterwards
      new Uint8Array(memory.buffer, at, bytes.length).set(bytes);
      if (bench_load() !== 1) return new Response("not JSON", { status: 400 });
      value = JSON.parse(new TextDecoder().decode(bytes));
      return new Response("loaded");
    }
    const runs = Number(url.searchParams.get("runs"));
    const toon = url.searchParams.get("format") === "toon";
    let len = 0;
    if (url.searchParams.get("engine") === "wasm") {
      len = bench_render(toon ? 0 : 1, runs);
    } else {
      for (let i = 0; i < runs; i++) len = (toon ? encode(value, { indent: 2 }) : JSON.stringify(value, null, 2)).length;
    }
    return new Response(String(len));
  },
};`;

const mf = new Miniflare({
  modules: [
    { type: "ESModule", path: "worker.mjs", contents: WORKER },
    { type: "ESModule", path: "toon.mjs", contents: readFileSync(join(ROOT, "node_modules/@toon-format/toon/dist/index.mjs"), "utf8") },
    { type: "CompiledWasm", path: "bench.wasm", contents: wasmBytes },
  ],
  compatibilityDate: "2025-09-01",
});

/** Wall time of one request; a worker's own clock does not advance while it computes. */
async function request(path, body) {
  const start = performance.now();
  const r = await mf.dispatchFetch(`http://bench${path}`, body ? { method: "POST", body } : {});
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status} ${text}`);
  return performance.now() - start;
}

/** Time per render of a batch in the worker: the batch's wall time minus an empty request's. */
async function workerRender(engine, format, runs) {
  const q = `engine=${engine}&format=${format}`;
  const total = await request(`/render?${q}&runs=${runs}`);
  const base = await request(`/render?${q}&runs=0`);
  return Math.max(total - base, 0.001) / runs;
}

/** The fastest of `runs` renders by the reference on Node, in ms. */
function nodeRender(value, format, runs = 1) {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    if (format === "toon") encode(value, { indent: 2 });
    else JSON.stringify(value, null, 2);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

try {
  for (const [docIndex, doc] of docs.entries()) {
    const value = JSON.parse(doc.bytes.toString("utf8"));
    await request("/load", doc.bytes);
    for (const format of ["toon", "json"]) {
      // Warm up every engine, and size each one's batch per round to about 100 ms.
      const batch = (ms) => Math.max(1, Math.round(100 / Math.max(ms, 0.01)));
      nodeRender(value, format);
      const runs = { node: batch(nodeRender(value, format)), host: batch(await hostRender(docIndex, format, 3)) };
      for (const engine of ["wasm", "js"]) {
        await workerRender(engine, format, 1);
        runs[engine] = batch(await workerRender(engine, format, 1));
      }
      const best = { node: Infinity, host: Infinity, wasm: Infinity, js: Infinity };
      const start = performance.now();
      for (let round = 0; round < 5 || performance.now() - start < 3 * MIN_MS; round++) {
        best.node = Math.min(best.node, nodeRender(value, format, runs.node));
        best.host = Math.min(best.host, await hostRender(docIndex, format, runs.host));
        best.wasm = Math.min(best.wasm, await workerRender("wasm", format, runs.wasm));
        best.js = Math.min(best.js, await workerRender("js", format, runs.js));
      }
      record(doc, format, "reference (Node)", best.node);
      record(doc, format, "reference in workerd", best.js);
      record(doc, format, "ours, host", best.host);
      record(doc, format, "ours, wasm in workerd", best.wasm);
    }
  }
} finally {
  host.stdin.end();
  await mf.dispose();
}

// Report.
const find = (doc, format, engine) => results.find((r) => r.doc === doc && r.format === format && r.engine === engine)?.mbps;
console.log("\nRender throughput, MB/s of input JSON (parse excluded)\n");
console.log("document  format  engine                   MB/s     x reference (Node)");
let ok = true;
for (const doc of docs) {
  for (const format of ["toon", "json"]) {
    const ref = find(doc.label, format, "reference (Node)");
    for (const engine of ["reference (Node)", "reference in workerd", "ours, host", "ours, wasm in workerd"]) {
      const mbps = find(doc.label, format, engine);
      const ratio = mbps / ref;
      const target = engine === "ours, host" ? 3 : engine === "ours, wasm in workerd" ? 1 : null;
      const verdict = target === null ? "" : ratio >= target ? `  (target >= ${target}x: met)` : `  (target >= ${target}x: MISSED)`;
      if (target !== null && ratio < target) ok = false;
      console.log(`${doc.label.padEnd(9)} ${format.padEnd(7)} ${engine.padEnd(24)} ${mbps.toFixed(1).padStart(7)}  ${ratio.toFixed(2).padStart(6)}x${verdict}`);
    }
  }
}
console.log(ok ? "\nall render throughput targets met" : "\nsome render throughput targets MISSED");
