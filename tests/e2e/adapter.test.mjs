// Workers adapter behaviour that only shows in workerd: a deployment without the KV/R2 bindings
// still serves (the cache port fails with an error naming the binding, and the core carries on),
// settings reach the core from bindings, and the isolate survives across requests.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, cached } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";

const TOKEN = "e2e-adapter-token-0123456789abcdef";
const stacks = [];
after(async () => { for (const s of stacks) await s.close(); });

async function stack(options) {
  const upstream = await startFakeUpstream();
  const logs = [];
  const worker = await startWorker({
    ...options,
    onLog: (line) => logs.push(line),
    vars: {
      MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }),
      CIRCLECI_API_URL: `${upstream.url}/api/v2`,
      CIRCLECI_TOKEN: "e2e-circle-token-0123456789",
    },
  });
  const s = { upstream, worker, logs, close: async () => { await worker.close(); await upstream.close(); } };
  stacks.push(s);
  return s;
}

async function call(worker, method, params) {
  const r = await fetch(worker.mcpUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  assert.equal(r.status, 200);
  return (await r.json()).result;
}

test("without the KV binding a cached tool still answers, and the log names the binding", async () => {
  const { worker, upstream, logs } = await stack({ stores: false });
  for (let i = 0; i < 2; i++) {
    const result = await call(worker, "tools/call", { name: "circleci_get", arguments: { path: "/me" } });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.match(result.content[0].text, /octocat/);
  }
  // Nothing could be cached, so both calls reached the upstream.
  assert.equal(upstream.count("GET", "/api/v2/me"), 2);
  assert.ok(logs.some((l) => l.includes("HTTP_CACHE")), `a log line names HTTP_CACHE:\n${logs.join("\n")}`);
  // The isolate survived: a plain request still works afterwards.
  assert.deepEqual(await call(worker, "ping"), {});
});

test("with the KV binding the second call is served from KV (writes after the response land)", async () => {
  const { worker, upstream } = await stack({});
  // The write runs in ctx.waitUntil after the response (decision 0003): wait until it is in KV.
  await cached(worker.mf, () => call(worker, "tools/call", { name: "circleci_get", arguments: { path: "/me" } }));
  const second = await call(worker, "tools/call", { name: "circleci_get", arguments: { path: "/me" } });
  assert.match(second.content[0].text, /hit: true/);
  assert.equal(upstream.count("GET", "/api/v2/me"), 1);
});
