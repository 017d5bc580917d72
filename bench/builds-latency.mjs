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

import { Miniflare } from "miniflare";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { startWorker } from "../tests/e2e/worker.mjs";
import { startFakeUpstream } from "../tests/e2e/fake-upstream.mjs";
import { CREDENTIALS, vendorUrls } from "../tests/e2e/tools-common.mjs";

const N = Number.parseInt(process.argv[2] ?? "150", 10);
const BUILDS = process.argv.length > 3 ? process.argv.slice(3) : ["build"];
const WARMUP = 30;
const TOKEN = "bench-token-0123456789abcdef";

const TRIVIAL = `export default {
  async fetch(request) {
    const { url, headers } = await request.json();
    const upstream = await fetch(url, { headers });
    return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers: { "Content-Type": "application/json" } });
  },
};`;

const RUNS_PATH = "/repos/octo-org/hello-world/actions/runs";
const RUNS_100 = { owner: "octo-org", repo: "hello-world", perPage: 100 };
const CASES = [
  { name: "github runs, 100 (~300 KB)", tool: "github_list_workflow_runs", args: RUNS_100, upstream: `${RUNS_PATH}?per_page=100` },
  {
    name: "github runs, 100, jq",
    tool: "github_list_workflow_runs",
    args: { ...RUNS_100, jq: "workflow_runs[*].{id: id, status: status, conclusion: conclusion}" },
    upstream: `${RUNS_PATH}?per_page=100`,
  },
  {
    name: "jira_get search, 50 issues",
    tool: "jira_get",
    args: { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ ORDER BY key", maxResults: "50" } },
    upstream: "/rest/api/3/search/jql?jql=project+%3D+PROJ+ORDER+BY+key&maxResults=50",
  },
];

const mcpHeaders = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${TOKEN}`,
  "MCP-Protocol-Version": "2025-06-18",
};

async function timed(url, body, headers) {
  const start = performance.now();
  const r = await fetch(url, { method: "POST", body, headers });
  const text = await r.text();
  const ms = performance.now() - start;
  if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}: ${text.slice(0, 200)}`);
  return { ms, text };
}

const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)];

const upstream = await startFakeUpstream();
// Every case's body fetched once from the fake's generator and then served from memory.
for (const c of CASES) {
  const r = await fetch(`${upstream.url}${c.upstream}`);
  const body = Buffer.from(await r.arrayBuffer());
  const headers = { "Content-Type": "application/json; charset=utf-8", "Content-Length": body.length };
  if (r.headers.get("link")) headers.Link = r.headers.get("link");
  c.bytes = body.length;
  const path = c.upstream.split("?")[0];
  upstream.route("GET", new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`), (req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
}
const vars = { MCP_AUTH_TOKENS: JSON.stringify({ bench: TOKEN }), ...vendorUrls(upstream), ...CREDENTIALS };
const workers = [];
for (const build of BUILDS) workers.push(await startWorker({ vars, onLog: () => {}, build }));
const trivial = new Miniflare({ modules: true, script: TRIVIAL, host: "127.0.0.1", port: 0 });
const trivialUrl = (await trivial.ready).toString();

const rows = [];
try {
  for (const c of CASES) {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: c.tool, arguments: c.args } });
    const fetchBody = JSON.stringify({ url: `${upstream.url}${c.upstream}`, headers: { Accept: "application/json" } });
    const diffs = BUILDS.map(() => []);
    // Slot 0 is the trivial worker, slot k the k-th build; the order rotates by one each round.
    const slots = BUILDS.length + 1;
    for (let i = 0; i < WARMUP + N; i++) {
      const ms = new Array(slots);
      for (let j = 0; j < slots; j++) {
        const slot = (i + j) % slots;
        if (slot === 0) {
          ms[0] = (await timed(trivialUrl, fetchBody, { "Content-Type": "application/json" })).ms;
        } else {
          const { ms: t, text } = await timed(workers[slot - 1].mcpUrl, call, mcpHeaders);
          const reply = JSON.parse(text);
          if (!reply.result || reply.result.isError) throw new Error(`${BUILDS[slot - 1]}: ${c.tool} failed: ${text.slice(0, 300)}`);
          ms[slot] = t;
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
