// Shared set-up of the load and soak runs (bench/load/*.mjs): the built worker in workerd
// (Miniflare) on 127.0.0.1 beside the fake upstream, wrapped so the run can read the size of its
// wasm linear memory, plus what /proc says about the workerd process (CPU time, RSS, VmHWM) and
// the MCP request bodies the scenarios send.
//
// Bench-only: the wrapper module answers GET /__bench/memory and passes everything else to the
// worker unchanged; it is never part of a deployment.

import { Miniflare } from "miniflare";
import { spawn } from "node:child_process";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import WebSocket from "ws";
import { ROOT, compatibility, ledgerOp } from "../../tests/e2e/worker.mjs";
import { startFakeUpstream } from "../../tests/e2e/fake-upstream.mjs";
import { CREDENTIALS, vendorUrls } from "../../tests/e2e/tools-common.mjs";

/** The bearer token of the load principal. */
export const TOKEN = "load-token-0123456789abcdef0123";
const BUILD = path.join(ROOT, process.env.BENCH_BUILD ?? "build");

/** Headers of a stateless MCP POST. */
export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${TOKEN}`,
  "mcp-protocol-version": "2025-06-18",
};

/** The JSON-RPC body of `method` with `params`. */
export function rpc(method, params = {}, id = 1) {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** The JSON-RPC body of a tools/call. */
export function toolCall(name, args) {
  return rpc("tools/call", { name, arguments: args });
}

/** The repository whose runs page is ~300 KB at perPage 100. */
export const RUNS = { owner: "octo-org", repo: "hello-world", perPage: 100 };

// Runs before index.js: remembers the linear memory of every wasm instance.
const PATCH = `
const Instance = WebAssembly.Instance;
globalThis.__loadMemories = [];
WebAssembly.Instance = function (module, imports) {
  const instance = new Instance(module, imports);
  for (const value of Object.values(instance.exports)) {
    if (value instanceof WebAssembly.Memory) globalThis.__loadMemories.push(value);
  }
  return instance;
};
WebAssembly.Instance.prototype = Instance.prototype;
`;
const WRAPPER = `
import "./load-patch.mjs";
import Worker from "./index.js";
export { ApprovalsObject } from "./index.js";
export default class extends Worker {
  async fetch(request) {
    if (new URL(request.url).pathname === "/__bench/memory") {
      return Response.json({ wasmBytes: globalThis.__loadMemories.reduce((n, m) => n + m.buffer.byteLength, 0) });
    }
    return super.fetch(request);
  }
}
`;

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

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User + system CPU time of `pid` so far, in milliseconds (/proc/<pid>/stat, all threads). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name may hold spaces; the fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** RSS and VmHWM (peak RSS) of `pid`, in bytes. */
export function processMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/**
 * The fake upstream in a child process of its own, so it does not share a thread with the load
 * generator: { url, close() }. It records requests in its memory; fine for minutes, not days.
 */
async function startUpstreamProcess() {
  const child = spawn(process.execPath, [path.join(ROOT, "tests/e2e/fake-upstream.mjs"), "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/[^ ]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`the fake upstream exited (${code})`)));
  });
  return {
    url,
    close: () => new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill();
    }),
  };
}

/**
 * Starts the fake upstream and the worker pointed at it (credentials, one principal, KV and R2 in
 * memory, logs dropped). `persist`, when given, is a directory that holds the KV and R2 data on
 * disk instead, so a long run's stored artifacts do not count as workerd memory. `separate: true`
 * runs the fake upstream in a child process (its `requests` and `count` are then unavailable).
 * `noR2: true` leaves the `ARTIFACTS` bucket unbound (artifact writes then fail, as without it).
 * `ledger: true` binds the approval ledger (the `APPROVALS` Durable Object, in the same isolate)
 * and adds `ledgerOp(op)`, which sends one ledger op (src/ledger.rs) straight to it.
 * Returns { upstream, url, mcpUrl, pid, wasmBytes(), close() }.
 */
export async function startLoadStack(vars = {}, { persist, separate = false, inspect = false, ledger = false, noR2 = false } = {}) {
  const upstream = separate ? await startUpstreamProcess() : await startFakeUpstream();
  const before = new Set(workerdPids());
  const inspectorPort = inspect ? 20000 + Math.floor(Math.random() * 20000) : null;
  const mf = new Miniflare({
    modules: [
      { type: "ESModule", path: path.join(BUILD, "load-wrapper.mjs"), contents: WRAPPER },
      { type: "ESModule", path: path.join(BUILD, "load-patch.mjs"), contents: PATCH },
      { type: "ESModule", path: path.join(BUILD, "index.js"), contents: readFileSync(path.join(BUILD, "index.js")) },
      { type: "CompiledWasm", path: path.join(BUILD, "index_bg.wasm"), contents: readFileSync(path.join(BUILD, "index_bg.wasm")) },
    ],
    ...compatibility(),
    kvNamespaces: ["HTTP_CACHE", "POLICY"],
    r2Buckets: noR2 ? [] : ["ARTIFACTS"],
    ...(ledger ? { durableObjects: { APPROVALS: "ApprovalsObject" } } : {}),
    ...(persist ? { kvPersist: path.join(persist, "kv"), r2Persist: path.join(persist, "r2") } : {}),
    bindings: { MCP_AUTH_TOKENS: JSON.stringify({ load: TOKEN }), ...vendorUrls(upstream), ...CREDENTIALS, ...vars },
    host: "127.0.0.1",
    ...(inspectorPort ? { inspectorPort } : {}),
    handleStructuredLogs: () => {},
  });
  const url = (await mf.ready).toString().replace(/\/$/, "");
  let heap = null;
  const [pid] = workerdPids().filter((p) => !before.has(p));
  if (!pid) {
    await mf.dispose();
    await upstream.close();
    throw new Error("no workerd child process found");
  }
  return {
    upstream,
    url,
    mcpUrl: `${url}/mcp`,
    pid,
    /** With `inspect`: the isolate's JS heap in bytes ({ used, total }), garbage included. */
    async jsHeap() {
      heap ??= await heapProbe(inspectorPort);
      return heap.sample();
    },
    async wasmBytes() {
      return (await (await fetch(`${url}/__bench/memory`)).json()).wasmBytes;
    },
    ledgerOp: (op) => ledgerOp(mf, op),
    async close() {
      heap?.close();
      await mf.dispose();
      await upstream.close();
    },
  };
}

/**
 * The worker isolate's heap over workerd's inspector: sample() reads Runtime.getHeapUsage;
 * close(). workerd's inspector does not answer HeapProfiler.collectGarbage, so the figure includes
 * garbage not yet collected; a leak shows as a floor that keeps rising.
 */
async function heapProbe(inspectorPort) {
  if (!inspectorPort) throw new Error("the stack was started without inspect");
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t) => /devtools|load|user/i.test(`${t.title} ${t.url}`)) ?? targets[0];
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
  return {
    async sample() {
      const usage = await send("Runtime.getHeapUsage");
      return { used: usage?.usedSize ?? NaN, total: usage?.totalSize ?? NaN };
    },
    close: () => ws.close(),
  };
}

/**
 * Samples the JS heap of a stack started with `inspect` every few milliseconds from `from` bytes
 * on; `stop()` ends the sampling and resolves to the peak seen.
 */
export function sampleHeapPeak(stack, from) {
  let peak = from;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await stack.jsHeap()).used);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await sampler;
      return peak;
    },
  };
}

/** POSTs one MCP body and returns the parsed JSON-RPC reply; throws on a status not in `statuses`. */
export async function post(mcpUrl, body, statuses = [200]) {
  const r = await fetch(mcpUrl, { method: "POST", headers: MCP_HEADERS, body });
  const text = await r.text();
  if (!statuses.includes(r.status)) throw new Error(`HTTP ${r.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/**
 * POSTs one MCP body as the bearer `token` on a connection of its own (a reused keep-alive
 * connection can be one workerd has just closed): { status, text, ms }.
 */
export function postAs(mcpUrl, body, token) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(mcpUrl, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8"), ms: performance.now() - t0 }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** True when a tools/call or tools/list reply reports a failure (JSON-RPC error or isError). */
export function isFailure(text) {
  return /^\{"jsonrpc":"2\.0","id":[^,]*,"error"/.test(text) || text.includes('"isError":true');
}

/** Saves an artifact (the truncated 300 KB page) and returns its id. */
export async function makeArtifact(mcpUrl) {
  const reply = await post(mcpUrl, toolCall("github_list_workflow_runs", RUNS));
  const text = reply.result?.content?.map((b) => b.text ?? "").join("") ?? "";
  const id = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/.exec(text)?.[0];
  if (!id) throw new Error(`the 300 KB page saved no artifact: ${text.slice(-400)}`);
  return id;
}

/** Mebibytes with one decimal. */
export const mib = (bytes) => (bytes / 1048576).toFixed(1);
