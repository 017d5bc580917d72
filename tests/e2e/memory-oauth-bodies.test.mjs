// An outsider with no account cannot fill the isolate's memory through the sign-in endpoints
// (docs/reliability.md, Request bodies).
//
// The OAuth endpoints read a body of at most 64 KiB before anything else, without
// authentication by design. A body without a Content-Length now reserves that limit before it
// is read, and an address over its rate limit is refused before its body is read. Before, 2,000
// chunked POST /oauth/register requests holding their last chunk back grew wasm linear memory
// from 1.7 to 146 MiB, the rate limit counting nothing while the bodies were held.
//
// How: OAuth configured (GitHub provider), no token at all; CONNECTIONS chunked POST
// /oauth/register requests, each sending 64,000 bytes and holding its last chunk back for a few
// seconds; wasm linear memory read while they are held, and a principal with a static token
// calls meanwhile. ATTACK_CONNECTIONS=N changes the number.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-oauth-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { startLoadStack, toolCall, MCP_HEADERS } from "../../bench/load/common.mjs";
import { UNREACHED_SIGN_IN_VARS } from "./oauth-browser.mjs";

const MiB = 1024 * 1024;
const WASM_LIMIT = 110 * MiB;
const CONNECTIONS = Number(process.env.ATTACK_CONNECTIONS ?? 2000);
const BODY_BYTES = 64_000;
const HOLD_MS = 4000;


/** A registration document of `BODY_BYTES` bytes, split before its last bytes. */
function registration() {
  const start = '{"client_name":"x","redirect_uris":["http://127.0.0.1:9/cb"],"pad":"';
  const body = start + "x".repeat(BODY_BYTES - start.length - 2) + '"}';
  return [body.slice(0, -2), body.slice(-2)];
}

/** One request on a connection of its own: a keep-alive connection workerd has just closed fails
 * on the client's side (docs/reliability.md), which is not what this test is about. */
function once(url, path, method, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method, headers, agent: false }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const wasmBytes = async (url) => JSON.parse((await once(url, "/__bench/memory", "GET", {})).text).wasmBytes;

function openChunked(url) {
  const [head, tail] = registration();
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: "/oauth/register",
    method: "POST",
    headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
    agent: false,
  });
  const done = new Promise((resolve) => {
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", (e) => resolve(e.code ?? "error"));
  });
  for (let i = 0; i < head.length; i += 16 * 1024) req.write(head.slice(i, i + 16 * 1024));
  return { finish: () => req.end(tail), done };
}

test(`${CONNECTIONS} unauthenticated chunked sign-in bodies stay within the isolate's memory`, async (t) => {
  const stack = await startLoadStack(UNREACHED_SIGN_IN_VARS);
  try {
    const url = new URL(stack.url);
    const warm = await fetch(`${stack.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "x", redirect_uris: ["http://127.0.0.1:9/cb"] }),
    });
    assert.equal(warm.status, 201, await warm.clone().text());
    const before = await wasmBytes(url);
    const open = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      open.push(openChunked(url));
      if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    const held = await wasmBytes(url);
    t.diagnostic(`wasm memory ${(before / MiB).toFixed(1)} MiB before, ${(held / MiB).toFixed(1)} MiB with ` +
      `${CONNECTIONS} bodies of ${BODY_BYTES} bytes held`);
    const t0 = performance.now();
    const other = await once(url, "/mcp", "POST", MCP_HEADERS, toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId" }))
      .catch((e) => ({ status: `failed: ${e.code ?? e}` }));
    const otherMs = performance.now() - t0;
    for (const o of open) o.finish();
    const answered = await Promise.all(open.map((o) => o.done));
    const after = await wasmBytes(url);
    const statuses = {};
    for (const a of answered) statuses[a] = (statuses[a] ?? 0) + 1;
    t.diagnostic(`wasm memory ${(after / MiB).toFixed(1)} MiB after; statuses ` +
      `${JSON.stringify(statuses)}; a static-token call answered ${other.status} in ${otherMs.toFixed(0)} ms`);
    assert.ok(Math.max(held, after) < WASM_LIMIT,
      `wasm linear memory reached ${(Math.max(held, after) / MiB).toFixed(1)} MiB (limit ${WASM_LIMIT / MiB} MiB) ` +
      `from ${CONNECTIONS} unauthenticated sign-in bodies of ${BODY_BYTES} bytes`);
    // Together they get one caller's share: a principal who signed in is answered meanwhile.
    assert.equal(other.status, 200);
    assert.ok(otherMs < 2000, `the static-token call waited ${otherMs.toFixed(0)} ms`);
  } finally {
    await stack.close();
  }
});
