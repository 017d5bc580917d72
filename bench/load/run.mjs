// `make load`: throughput, latency and CPU per request of the built worker in workerd under rising
// concurrency (1, 8, 32, 128 connections), with autocannon on 127.0.0.1 against the fake upstream.
//
// Scenarios: tools/list; circleci_get /me served from the KV cache (warmed first); the ~300 KB
// github_list_workflow_runs page (perPage 100: fetched, parsed, rendered as TOON, truncated, and
// saved whole to R2 as an artifact on every call); artifact_read of 64 KiB chunks of one artifact,
// cycling through its offsets.
//
// Errors: non-2xx replies, transport errors and timeouts as autocannon counts them, plus 200
// replies that carry a JSON-RPC error or a failed tool result (`isError`), counted from the body.
// CPU per request: user + system time of the workerd process over the level (/proc/<pid>/stat)
// divided by the requests it completed; that is the whole process (HTTP, KV/R2 simulation in
// Miniflare's Durable Objects, the isolate's JS and wasm), an upper bound on what Workers bills as
// the worker's CPU time. Every level also records workerd's RSS and the wasm linear memory.
//
//   node bench/load/run.mjs [seconds per level, default 10] [levels, default 1,8,32,128]
// Exits 1 when any level had an error.

import autocannon from "autocannon";
import os from "node:os";
import { MCP_HEADERS, RUNS, cpuMs, isFailure, makeArtifact, mib, post, processMemory, rpc, startLoadStack, toolCall } from "./common.mjs";

const SECONDS = Number.parseInt(process.argv[2] ?? "10", 10);
const LEVELS = (process.argv[3] ?? "1,8,32,128").split(",").map(Number);
const CHUNK = 65536;

/** Runs autocannon for one scenario at one level; returns the row of figures. */
async function level(stack, scenario, connections) {
  let failures = 0;
  let firstFailure;
  const requests = [{
    method: "POST",
    path: "/mcp",
    headers: MCP_HEADERS,
    ...(scenario.setupRequest ? { setupRequest: scenario.setupRequest } : { body: scenario.body }),
    onResponse: (status, body) => {
      if (status === 200 && isFailure(body)) {
        failures += 1;
        firstFailure ??= body.slice(0, 300);
      }
    },
  }];
  const cpuBefore = cpuMs(stack.pid);
  const errorKinds = {};
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon({ url: stack.url, connections, duration: SECONDS, timeout: 60, requests }, (e, r) => (e ? reject(e) : resolve(r)));
    instance.on("reqError", (e) => { const k = e.code ?? e.message; errorKinds[k] = (errorKinds[k] ?? 0) + 1; });
  });
  const cpu = cpuMs(stack.pid) - cpuBefore;
  const done = result.requests.total;
  const mem = processMemory(stack.pid);
  return {
    scenario: scenario.name,
    connections,
    requests: done,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    failures,
    firstFailure,
    errorKinds,
    cpuPerRequest: done > 0 ? cpu / done : NaN,
    rss: mem.rss,
    wasm: await stack.wasmBytes(),
  };
}

const stack = await startLoadStack({}, { separate: true });
let failed = false;
try {
  // Warm the cache entry and make the artifact the chunk scenario reads.
  const me = toolCall("circleci_get", { path: "/me" });
  if (isFailure(JSON.stringify(await post(stack.mcpUrl, me)))) throw new Error("circleci_get /me failed");
  const artifactId = await makeArtifact(stack.mcpUrl);
  const first = await post(stack.mcpUrl, toolCall("artifact_read", { artifactId, maxBytes: CHUNK }));
  const totalBytes = JSON.parse(first.result.content[0].text).totalBytes;
  let next = 0;
  const scenarios = [
    { name: "tools/list", body: rpc("tools/list") },
    { name: "circleci_get (cached)", body: me },
    { name: "github runs page (300 KB)", body: toolCall("github_list_workflow_runs", RUNS) },
    {
      name: "artifact_read 64 KiB",
      setupRequest: (req) => {
        const offset = next;
        next = next + CHUNK >= totalBytes ? 0 : next + CHUNK;
        return { ...req, body: toolCall("artifact_read", { artifactId, offset, maxBytes: CHUNK }) };
      },
    },
  ];
  const rows = [];
  for (const scenario of scenarios) {
    for (const connections of LEVELS) {
      const row = await level(stack, scenario, connections);
      rows.push(row);
      console.error(`${row.scenario} x${connections}: ${row.requests} requests, ${row.rps.toFixed(1)}/s`);
    }
  }

  console.log(`\nworkerd under load: ${SECONDS} s per level, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${os.loadavg()[0].toFixed(2)} at the end`);
  console.log("| scenario | conns | requests | req/s | p50 ms | p99 ms | non-2xx | errors | failed results | CPU ms/req | workerd RSS MiB | wasm MiB |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.scenario} | ${r.connections} | ${r.requests} | ${r.rps.toFixed(1)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${r.failures} | ${r.cpuPerRequest.toFixed(2)} | ${mib(r.rss)} | ${mib(r.wasm)} |`);
    if (r.non2xx || r.errors || r.failures) failed = true;
    if (Object.keys(r.errorKinds).length) console.log(`  transport errors (${r.scenario} x${r.connections}): ${JSON.stringify(r.errorKinds)}`);
    if (r.firstFailure) console.log(`  first failed result (${r.scenario} x${r.connections}): ${r.firstFailure}`);
  }
} finally {
  await stack.close();
}
process.exit(failed ? 1 : 0);
