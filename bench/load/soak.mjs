// `make soak`: ten minutes (by default) of mixed MCP calls at a steady rate against the built worker
// in workerd, sampling its memory every 30 s: workerd's RSS and VmHWM (/proc) and the wasm linear
// memory (which only grows, so it is the Rust side's peak), and the isolate's JS heap used
// (workerd's inspector; garbage included). A leak shows as RSS or wasm memory that
// keeps climbing after the first minute.
//
// The mix, in order on every connection: tools/list, circleci_get /me (cached), a 20-run GitHub page,
// a Jira search page, artifact_read chunks, circleci_get /me fresh (cache bypassed), a jq
// projection, a Bitbucket read, a Confluence read, and one ~300 KB runs page (truncated, saved to R2).
// KV and R2 live on disk for the run (a temporary directory), so the artifacts saved along the way
// are not counted as workerd memory.
//
// The `nostore` mix leaves out every call that touches KV or R2 (cached reads, artifact_read and the
// page that saves an artifact), to tell growth in the worker from growth in Miniflare's stores.
//
//   node bench/load/soak.mjs [minutes, default 10] [requests per second, default 25] [full|nostore]
// Exits 1 on any error, when wasm memory at the end is over 1.25x its size after the first
// minute, or when the JS heap's floor doubles between the first and last thirds of the run.

import autocannon from "autocannon";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MCP_HEADERS, RUNS, isFailure, makeArtifact, mib, processMemory, rpc, startLoadStack, toolCall } from "./common.mjs";

const MINUTES = Number(process.argv[2] ?? "10");
const RATE = Number(process.argv[3] ?? "25");
const MIX = process.argv[4] ?? "full";
const SAMPLE_SECONDS = 30;
const CONNECTIONS = 8;

const persist = mkdtempSync(path.join(os.tmpdir(), "mcp-soak-"));
// Without truncation nothing is saved to R2 in the nostore mix.
const stack = await startLoadStack(MIX === "nostore" ? { MCP_TEXT_MAX_CHARS: "1000000" } : {}, { persist, inspect: true });
let failed = false;
try {
  const artifactId = MIX === "nostore" ? null : await makeArtifact(stack.mcpUrl);
  let offset = 0;
  const bodies = [
    rpc("tools/list"),
    toolCall("circleci_get", { path: "/me" }),
    toolCall("github_list_workflow_runs", { owner: "octo-org", repo: "hello-world", perPage: 20 }),
    toolCall("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ ORDER BY key", maxResults: "20" } }),
    null, // artifact_read, built per request
    toolCall("circleci_get", { path: "/me", fresh: true }),
    toolCall("github_list_workflow_runs", { owner: "octo-org", repo: "hello-world", perPage: 30, jq: "workflow_runs[*].{id: id, status: status}" }),
    toolCall("bb_get", { path: "/repositories/acme/widgets/pullrequests" }),
    toolCall("conf_get", { path: "/wiki/api/v2/spaces" }),
    toolCall("github_list_workflow_runs", RUNS),
  ];
  let failures = 0;
  let firstFailure;
  const storeFree = (body) => body && !body.includes("circleci_get") && !body.includes('"perPage":100');
  const mix = MIX === "nostore" ? bodies.filter(storeFree) : bodies;
  const requests = mix.map((body) => ({
    method: "POST",
    path: "/mcp",
    headers: MCP_HEADERS,
    ...(body ? { body } : {
      setupRequest: (req) => {
        offset = (offset + 32768) % 262144;
        return { ...req, body: toolCall("artifact_read", { artifactId, offset, maxBytes: 32768 }) };
      },
    }),
    onResponse: (status, text) => {
      if (status === 200 && isFailure(text)) {
        failures += 1;
        firstFailure ??= text.slice(0, 300);
      }
    },
  }));

  const samples = [];
  // The JS heap includes garbage not yet collected (workerd's inspector cannot force a collection).
  const sample = async (second, totals) => {
    const heap = await stack.jsHeap();
    samples.push({ second, heap: heap.used, ...processMemory(stack.pid), wasm: await stack.wasmBytes(), ...totals });
  };
  await sample(0, { requests: 0 });
  let total = { requests: 0, non2xx: 0, errors: 0 };
  const rounds = Math.max(1, Math.round((MINUTES * 60) / SAMPLE_SECONDS));
  for (let i = 1; i <= rounds; i++) {
    const r = await autocannon({ url: stack.url, connections: CONNECTIONS, overallRate: RATE, duration: SAMPLE_SECONDS, timeout: 60, requests });
    total = { requests: total.requests + r.requests.total, non2xx: total.non2xx + r.non2xx, errors: total.errors + r.errors + r.timeouts };
    stack.upstream.requests.length = 0;
    await sample(i * SAMPLE_SECONDS, { requests: total.requests, p99: r.latency.p99 });
    const s = samples.at(-1);
    console.error(`${s.second} s: ${s.requests} requests, RSS ${mib(s.rss)} MiB, VmHWM ${mib(s.hwm)} MiB, wasm ${mib(s.wasm)} MiB, JS heap ${mib(s.heap)} MiB`);
  }

  console.log(`\nsoak (${MIX} mix, ${mix.length} calls): ${MINUTES} min at ${RATE} req/s over ${CONNECTIONS} connections, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(2)} at the end`);
  console.log("| second | requests so far | p99 ms (last 30 s) | workerd RSS MiB | VmHWM MiB | wasm MiB | JS heap MiB |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  for (const s of samples) console.log(`| ${s.second} | ${s.requests} | ${s.p99 ?? ""} | ${mib(s.rss)} | ${mib(s.hwm)} | ${mib(s.wasm)} | ${mib(s.heap)} |`);
  console.log(`\nrequests ${total.requests}, non-2xx ${total.non2xx}, errors ${total.errors}, failed results ${failures}`);
  if (firstFailure) console.log(`first failed result: ${firstFailure}`);
  const warm = samples[Math.min(2, samples.length - 1)];
  const end = samples.at(-1);
  console.log(`RSS after the first minute ${mib(warm.rss)} MiB, at the end ${mib(end.rss)} MiB; wasm ${mib(warm.wasm)} -> ${mib(end.wasm)} MiB; JS heap ${mib(warm.heap)} -> ${mib(end.heap)} MiB`);
  // The pass rule looks at the worker's own memory: wasm linear memory, and the floor of the JS
  // heap (its lowest sample, so garbage does not count) in the last third against the first
  // third after warm-up. workerd's RSS also holds Miniflare's KV and R2 (SQLite-backed Durable
  // Objects in the same process), so it is reported, not judged.
  const third = Math.max(1, Math.floor((samples.length - 2) / 3));
  const floor = (xs) => Math.min(...xs.map((x) => x.heap));
  const early = floor(samples.slice(2, 2 + third));
  const late = floor(samples.slice(-third));
  console.log(`JS heap floor: ${mib(early)} MiB in the first third, ${mib(late)} MiB in the last`);
  if (total.non2xx || total.errors || failures || end.wasm > warm.wasm * 1.25 || late > early * 2) failed = true;
} finally {
  await stack.close();
  rmSync(persist, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
