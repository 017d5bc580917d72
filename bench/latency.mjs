// Endpoint latency of the built worker in workerd (Miniflare), measured beside a trivial worker
// that reads the body and returns a fixed JSON-RPC reply, in the same run and interleaved request
// by request, so machine noise hits both alike. The difference at the median is what the server
// adds over workerd's own request handling (target: under 2 ms).
//
//   node bench/latency.mjs [requests per method, default 2000]

import { Miniflare } from "miniflare";
import { performance } from "node:perf_hooks";
import { startWorker } from "../tests/e2e/worker.mjs";

const N = Number.parseInt(process.argv[2] ?? "2000", 10);
const WARMUP = 200;
const TOKEN = "bench-token-0123456789abcdef";

const TRIVIAL = `export default {
  async fetch(request) {
    await request.text();
    return new Response('{"jsonrpc":"2.0","id":1,"result":{}}', { headers: { "Content-Type": "application/json" } });
  },
};`;

const headers = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${TOKEN}`,
  "MCP-Protocol-Version": "2025-06-18",
};
const bodies = {
  ping: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  "tools/list": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
};

async function timed(url, body) {
  const start = performance.now();
  const r = await fetch(url, { method: "POST", body, headers });
  await r.arrayBuffer();
  const ms = performance.now() - start;
  if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}`);
  return ms;
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const server = await startWorker({ vars: { MCP_AUTH_TOKENS: JSON.stringify({ bench: TOKEN }) } });
const trivial = new Miniflare({ modules: true, script: TRIVIAL, host: "127.0.0.1", port: 0 });
const trivialUrl = (await trivial.ready).toString();

const rows = [];
try {
  for (const [method, body] of Object.entries(bodies)) {
    const ours = [];
    const base = [];
    for (let i = 0; i < WARMUP + N; i++) {
      // Alternate which goes first so neither always benefits from a warm socket or cache line.
      const pair = i % 2
        ? [await timed(server.mcpUrl, body), await timed(trivialUrl, body)]
        : [await timed(trivialUrl, body), await timed(server.mcpUrl, body)].reverse();
      if (i >= WARMUP) {
        ours.push(pair[0]);
        base.push(pair[1]);
      }
    }
    ours.sort((a, b) => a - b);
    base.sort((a, b) => a - b);
    rows.push({
      method,
      n: N,
      median: quantile(ours, 0.5),
      p99: quantile(ours, 0.99),
      trivialMedian: quantile(base, 0.5),
      trivialP99: quantile(base, 0.99),
    });
  }
} finally {
  await server.close();
  await trivial.dispose();
}

const f = (ms) => `${ms.toFixed(3)} ms`;
console.log(`latency through workerd, ${N} sequential requests per method after ${WARMUP} warm-up (keep-alive)`);
for (const r of rows) {
  const added = r.median - r.trivialMedian;
  console.log(
    `${r.method.padEnd(10)} median ${f(r.median)} p99 ${f(r.p99)} | trivial worker median ${f(r.trivialMedian)} ` +
      `p99 ${f(r.trivialP99)} | added at median ${f(added)} (ratio ${(r.median / r.trivialMedian).toFixed(2)}) ` +
      `${added < 2 ? "within" : "OVER"} the 2 ms target`,
  );
}
