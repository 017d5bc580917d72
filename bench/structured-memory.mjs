// Peak memory of the worker in workerd for the two large cases held to the 128 MB limit: a
// structured value of 16 MiB (MCP_STRUCTURED_MAX_BYTES at its maximum, so the value goes inline in
// structuredContent) and a 30 MB upstream body (over the bound: data null, the value saved to R2 as
// an artifact), each also with the flag off (no structuredContent; the truncated text's artifact is
// saved all the same), an 8 MiB value to show how the peak scales, and the largest body a 32 MiB
// UPSTREAM_MAX_BYTES admits (set here: the default is 16 MiB). Workers allow an isolate 128 MB (JavaScript heap and
// WebAssembly memory together).
//
// Each case gets a fresh workerd process (Miniflare), so every peak is that case's own. Three
// figures per case:
// - wasm: the size of the module's linear memory after the call. It only ever grows, so this is
//   the Rust side's peak. The built worker runs under a small wrapper module (bench only) that
//   keeps a reference to the memory when the module is instantiated and answers
//   GET /__bench/memory with its size; everything else goes to the worker unchanged.
// - JS heap: the isolate's V8 heap (Runtime.getHeapUsage over workerd's inspector), the largest of
//   samples taken every few milliseconds during the call (an estimate: the inspector answers only
//   between the worker's own steps).
// - process: VmHWM of the workerd process (/proc/<pid>/status; the Miniflare child named
//   workerd) after the call minus VmRSS before it. The process also runs Miniflare's own
//   services (its entry proxy, the R2 simulator that stores the artifact, the network stack), so
//   this is an upper bound on what the isolate used.
// Baselines are taken after a warm-up (tools/list and a small call).
//
// The call goes through the official SDK client after listTools, so the 16 MiB value is also
// validated against the outputSchema (on the Node side).
//
//   node bench/structured-memory.mjs            # prints a table; exits 1 when wasm + JS heap pass 128 MiB

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Miniflare } from "miniflare";
import WebSocket from "ws";
import { readFileSync, readdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { performance } from "node:perf_hooks";
import os from "node:os";
import { ROOT, compatibility } from "../tests/e2e/worker.mjs";
import { startFakeUpstream } from "../tests/e2e/fake-upstream.mjs";
import { githubRun } from "../tests/e2e/fake/github.mjs";
import { CREDENTIALS, vendorUrls } from "../tests/e2e/tools-common.mjs";

const TOKEN = "bench-token-0123456789abcdef";
const MAX_BOUND = 16 * 1024 * 1024;
const UPSTREAM_MAX_BYTES = 32 * 1024 * 1024;
const LIMIT = 128 * 1024 * 1024;
const MiB = 1024 * 1024;

/** A runs page whose structuredContent envelope `{"data":…,"nextPage":null}` is at most `bytes`. */
function runsBody(base, bytes) {
  const envelope = '{"data":,"nextPage":null}'.length;
  const head = '{"total_count":,"workflow_runs":[]}'.length + 10;
  const runs = [];
  let size = envelope + head;
  for (let id = 1; ; id++) {
    const run = JSON.stringify(githubRun(base, "octo-org", "big", id));
    if (size + run.length + 1 > bytes) break;
    runs.push(run);
    size += run.length + 1;
  }
  return `{"total_count":${runs.length},"workflow_runs":[${runs.join(",")}]}`;
}

/** The pids of workerd processes that are children of this process. */
function workerdPids() {
  const pids = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      if (/^Name:\s+workerd/m.test(status) && ppid === process.pid) pids.push(Number(name));
    } catch { /* the process ended meanwhile */ }
  }
  return pids;
}

function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)[1]) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

const BUILD = path.join(ROOT, "build");

// Runs first (imported before index.js): remembers the linear memory of every wasm instance.
const PATCH = `
const Instance = WebAssembly.Instance;
globalThis.__benchMemories = [];
WebAssembly.Instance = function (module, imports) {
  const instance = new Instance(module, imports);
  for (const value of Object.values(instance.exports)) {
    if (value instanceof WebAssembly.Memory) globalThis.__benchMemories.push(value);
  }
  return instance;
};
WebAssembly.Instance.prototype = Instance.prototype;
`;
const WRAPPER = `
import "./bench-patch.mjs";
import Worker from "./index.js";
export default class extends Worker {
  async fetch(request) {
    if (new URL(request.url).pathname === "/__bench/memory") {
      return Response.json({ wasmBytes: globalThis.__benchMemories.reduce((n, m) => n + m.buffer.byteLength, 0) });
    }
    return super.fetch(request);
  }
}
`;

/** A port nothing listens on right now (the inspector needs a fixed one). */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startBenchWorker(vars) {
  const inspectorPort = await freePort();
  const mf = new Miniflare({
    modules: [
      { type: "ESModule", path: path.join(BUILD, "bench-wrapper.mjs"), contents: WRAPPER },
      { type: "ESModule", path: path.join(BUILD, "bench-patch.mjs"), contents: PATCH },
      { type: "ESModule", path: path.join(BUILD, "index.js"), contents: readFileSync(path.join(BUILD, "index.js")) },
      { type: "CompiledWasm", path: path.join(BUILD, "index_bg.wasm"), contents: readFileSync(path.join(BUILD, "index_bg.wasm")) },
    ],
    ...compatibility(),
    kvNamespaces: ["HTTP_CACHE"],
    r2Buckets: ["ARTIFACTS"],
    bindings: vars,
    host: "127.0.0.1",
    inspectorPort,
    handleStructuredLogs: () => {},
  });
  const url = (await mf.ready).toString().replace(/\/$/, "");
  return { mf, url, mcpUrl: `${url}/mcp`, inspectorPort };
}

/** The isolate's JS heap over the inspector: sample() -> usedSize; close(). */
async function heapProbe(inspectorPort) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t) => /devtools|bench|user/i.test(`${t.title} ${t.url}`)) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
  let id = 0;
  const pending = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  });
  const send = (method) => new Promise((resolve) => { pending.set(++id, resolve); ws.send(JSON.stringify({ id, method })); });
  return { sample: async () => (await send("Runtime.getHeapUsage"))?.usedSize ?? 0, close: () => ws.close() };
}

const wasmBytes = async (worker) => (await (await fetch(`${worker.url}/__bench/memory`)).json()).wasmBytes;

async function measure(upstream, { name, path: repo, bodyBytes, flag }) {
  const before = new Set(workerdPids());
  const worker = await startBenchWorker({
    MCP_AUTH_TOKENS: JSON.stringify({ bench: TOKEN }), ...vendorUrls(upstream), ...CREDENTIALS,
    MCP_STRUCTURED_OUTPUT: String(flag), MCP_STRUCTURED_MAX_BYTES: String(MAX_BOUND),
    UPSTREAM_MAX_BYTES: String(UPSTREAM_MAX_BYTES),
  });
  try {
    const [pid] = workerdPids().filter((p) => !before.has(p));
    if (!pid) throw new Error("no workerd child process found");
    const client = new Client({ name: "structured-memory", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }));
    await client.listTools();
    await client.callTool({ name: "github_list_workflow_runs", arguments: { owner: "octo-org", repo: "hello-world", perPage: 100 } });
    const heap = await heapProbe(worker.inspectorPort);
    const base = { ...memory(pid), wasm: await wasmBytes(worker), heap: await heap.sample() };
    let heapPeak = base.heap;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        heapPeak = Math.max(heapPeak, await heap.sample());
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const t0 = performance.now();
    const result = await client.callTool({ name: "github_list_workflow_runs", arguments: { owner: "octo-org", repo, outputFormat: "json" } });
    const ms = performance.now() - t0;
    sampling = false;
    await sampler;
    const after = { ...memory(pid), wasm: await wasmBytes(worker) };
    heap.close();
    await client.close();
    if (result.isError) throw new Error(`${name}: ${result.content[0].text.slice(0, 300)}`);
    const sc = result.structuredContent;
    const named = /artifact `([0-9a-f-]{36})`/.exec(result.content[0].text)?.[1];
    const artifactId = sc?.incomplete?.artifactId ?? named;
    let outcome = sc ? (sc.incomplete ? "data null" : "inline") : "text only";
    if (sc?.incomplete && sc.incomplete.artifactId !== named) throw new Error(`${name}: the text and incomplete name different artifacts`);
    if (artifactId) {
      const bucket = await worker.mf.getR2Bucket("ARTIFACTS");
      const object = (await bucket.list()).objects.find((o) => o.key.endsWith(`/${artifactId}`));
      if (!object) throw new Error(`${name}: artifact ${artifactId} is not in the bucket`);
      if (sc?.incomplete && object.size !== sc.incomplete.bytes) throw new Error(`${name}: the artifact is not ${sc.incomplete.bytes} bytes`);
      outcome += `, artifact ${(object.size / MiB).toFixed(1)} MiB`;
    }
    const valueBytes = sc && !sc.incomplete ? Buffer.byteLength(JSON.stringify(sc)) : sc?.incomplete?.bytes ?? 0;
    return { name, bodyBytes, valueBytes, outcome, ms, base, after, heapPeak, processDelta: after.hwm - base.rss };
  } finally {
    await worker.mf.dispose();
  }
}

const upstream = await startFakeUpstream();
const bodies = {
  big8: runsBody(upstream.url, 8 * MiB),
  big16: runsBody(upstream.url, MAX_BOUND),
  big30: runsBody(upstream.url, 30_000_000),
  // The largest body a 32 MiB UPSTREAM_MAX_BYTES lets through.
  big32: runsBody(upstream.url, UPSTREAM_MAX_BYTES),
};
for (const [repo, body] of Object.entries(bodies)) {
  const bytes = Buffer.from(body);
  upstream.route("GET", new RegExp(`^/repos/octo-org/${repo}/actions/runs$`), (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": bytes.length });
    res.end(bytes);
  });
}

// The two large cases, each also with the flag off, 8 MiB to show how the peak scales, and the
// default body bound.
const cases = [];
for (const [label, repo] of [["8 MiB value", "big8"], ["16 MiB value", "big16"], ["30 MB body", "big30"], ["32 MiB body", "big32"]]) {
  for (const flag of [true, false]) {
    cases.push({ name: `${label}, flag ${flag ? "on" : "off"}`, path: repo, bodyBytes: Buffer.byteLength(bodies[repo]), flag });
  }
}
const rows = [];
try {
  for (const c of cases) rows.push(await measure(upstream, c));
} finally {
  await upstream.close();
}

const mib = (n) => (n / MiB).toFixed(1).padStart(6);
console.log(`workerd memory per case, MiB (${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)})`);
console.log("case                              body  value | wasm before  after | JS heap before  peak | wasm+heap peak | process RSS before  HWM after  delta |  call ms  result");
let over = false;
for (const r of rows) {
  const isolate = r.after.wasm + r.heapPeak;
  over ||= isolate >= LIMIT;
  console.log(`${r.name.padEnd(31)} ${mib(r.bodyBytes)} ${mib(r.valueBytes)} |     ${mib(r.base.wasm)} ${mib(r.after.wasm)} |        ${mib(r.base.heap)} ${mib(r.heapPeak)} |         ${mib(isolate)} |             ${mib(r.base.rss)}     ${mib(r.after.hwm)} ${mib(r.processDelta)} | ${r.ms.toFixed(0).padStart(8)}  ${r.outcome}`);
}
console.log(over ? "OVER the 128 MiB Workers limit (wasm + JS heap)" : "every case stays under the 128 MiB Workers limit (wasm + JS heap)");
process.exitCode = over ? 1 : 0;
