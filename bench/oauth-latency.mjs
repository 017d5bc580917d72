// Added latency of OAuth: `tools/list` through the built worker in workerd (Miniflare) with an
// access token OAuth issued, beside the same `tools/list` with a static token, on one worker.
// Requests alternate between the two, one at a time, so machine noise hits both alike; the
// median of the per-pair differences is what authenticating an issued token costs: two reads of
// the OAUTH KV namespace (the token, then its grant), two SHA-256s and the AES-GCM opening of
// what the grant carries (the person's GitHub token), against a constant-time table lookup.
// Miniflare's KV is local (SQLite), so this is the server's own cost; a deployed worker adds the
// latency of two KV reads, which Cloudflare serves from the location's cache once warm.
//
// The sign-in happens once, through the fake upstream's GitHub-shaped identity provider.
//
//   node bench/oauth-latency.mjs [iterations, default 300]

import os from "node:os";
import { performance } from "node:perf_hooks";
import { startWorker } from "../tests/e2e/worker.mjs";
import { startFakeUpstream } from "../tests/e2e/fake-upstream.mjs";
import { signInForTokens } from "../tests/e2e/oauth-browser.mjs";

const N = Number.parseInt(process.argv[2] ?? "300", 10);
const WARMUP = 30;
const STATIC_TOKEN = "bench-static-token-0123456789abcdef";

const upstream = await startFakeUpstream();
const worker = await startWorker({
  kvNamespaces: ["OAUTH"],
  vars: {
    MCP_AUTH_TOKENS: JSON.stringify({ bench: STATIC_TOKEN }),
    MCP_OAUTH_ISSUER: "http://127.0.0.1:1",
    MCP_OAUTH_ENCRYPTION_KEY: "bench-oauth-key-0123456789abcdef0123456789",
    MCP_OAUTH_PROVIDER: "github",
    MCP_OAUTH_GITHUB_URL: upstream.url,
    GITHUB_API_URL: upstream.url,
    MCP_OAUTH_CLIENT_ID: "Iv1.bench",
    MCP_OAUTH_CLIENT_SECRET: "bench-client-secret",
    MCP_OAUTH_ALLOWED_USERS: upstream.idp.login,
  },
  onLog: () => {},
});

const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
const headers = (token) => ({
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${token}`,
  "MCP-Protocol-Version": "2025-06-18",
});

async function timed(token) {
  const start = performance.now();
  const r = await fetch(worker.mcpUrl, { method: "POST", body, headers: headers(token) });
  const text = await r.text();
  const ms = performance.now() - start;
  if (r.status !== 200 || !JSON.parse(text).result?.tools?.length) throw new Error(`HTTP ${r.status}: ${text.slice(0, 200)}`);
  return ms;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

let row;
try {
  await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
  const { tokens } = await signInForTokens(worker.url, upstream.url);
  const issued = tokens.access_token;
  const [stat, oauth, diffs] = [[], [], []];
  for (let i = 0; i < WARMUP + N; i++) {
    let a;
    let b;
    if (i % 2) {
      a = await timed(issued);
      b = await timed(STATIC_TOKEN);
    } else {
      b = await timed(STATIC_TOKEN);
      a = await timed(issued);
    }
    if (i >= WARMUP) {
      oauth.push(a);
      stat.push(b);
      diffs.push(a - b);
    }
  }
  for (const list of [stat, oauth, diffs]) list.sort((x, y) => x - y);
  row = {
    staticMed: quantile(stat, 0.5), staticP99: quantile(stat, 0.99),
    oauthMed: quantile(oauth, 0.5), oauthP99: quantile(oauth, 0.99),
    added: quantile(diffs, 0.5), addedP90: quantile(diffs, 0.9), addedP99: quantile(diffs, 0.99),
  };
} finally {
  await worker.close();
  await upstream.close();
}

const f = (ms) => ms.toFixed(2).padStart(7);
console.log(`OAuth-authenticated tools/list in workerd: ${N} sequential pairs after ${WARMUP} warm-up, interleaved with a static-token tools/list`);
const load = os.loadavg().map((l) => l.toFixed(2)).join(" ");
console.log(`machine: ${os.availableParallelism()} cores (nproc), ${os.cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}, load average ${load}`);
console.log(`${"".padEnd(12)} ${"median".padStart(7)} ${"p99".padStart(7)}  (ms)`);
console.log(`${"static".padEnd(12)} ${f(row.staticMed)} ${f(row.staticP99)}`);
console.log(`${"oauth".padEnd(12)} ${f(row.oauthMed)} ${f(row.oauthP99)}`);
console.log(`added by OAuth (per-pair difference): ${row.added.toFixed(2)} ms median, ${row.addedP90.toFixed(2)} ms p90, ${row.addedP99.toFixed(2)} ms p99`);
