// One principal's held request bodies do not take the memory budget from the other callers.
// A body reserves its declared length (5 bytes of memory a byte, plus its overhead) before a
// byte arrives and keeps it while it trickles in (up to 60 s). Before, only bodies over 1 MiB
// or without a length were counted per principal: thirteen declaring exactly 1 MiB held 68 MiB,
// and another principal's tools/list got 503 on 5/5 tries. Now one principal's bodies hold at most
// 8 MiB of request bytes together (server::inflight::BODY_BYTES_PER_PRINCIPAL; the next get
// 429), and the other principal is answered in a few milliseconds.
//
// How: the load stack (default 72 MiB budget); one token opens 13 POST /mcp declaring 1,048,576
// bytes and 40 declaring 1 byte, sending nothing but the headers; 1.5 s later another principal
// calls tools/list five times, one after the other. Then the held requests are closed.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-small-held-bodies.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { startLoadStack, rpc, MCP_HEADERS, TOKEN } from "../../bench/load/common.mjs";

const MiB = 1024 * 1024;
const OTHER = "e2e-other-principal-0123456789abcdef";
const TOKENS = JSON.stringify({ load: TOKEN, other: OTHER });

/** A POST /mcp from `token` declaring `length` bytes of body and sending none of it. */
function openHeld(mcpUrl, token, length) {
  const url = new URL(mcpUrl);
  const req = http.request({
    host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent: false,
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, "content-length": String(length) },
  });
  const done = new Promise((resolve) => {
    req.on("response", (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
  });
  req.flushHeaders();
  return { close: () => req.destroy(), done };
}

async function otherCall(mcpUrl) {
  const t0 = performance.now();
  const r = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${OTHER}` },
    body: rpc("tools/list"),
  });
  await r.text();
  return { status: r.status, ms: Math.round(performance.now() - t0) };
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

test("one principal's held 1 MiB bodies leave another principal's call answered", async (t) => {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: TOKENS });
  const held = [];
  try {
    assert.equal((await otherCall(stack.mcpUrl)).status, 200);
    const before = await stack.wasmBytes();
    for (let i = 0; i < 13; i++) held.push(openHeld(stack.mcpUrl, TOKEN, MiB));
    await pause(300);
    for (let i = 0; i < 40; i++) held.push(openHeld(stack.mcpUrl, TOKEN, 1));
    await pause(1500);
    const during = await stack.wasmBytes();
    const tries = [];
    for (let i = 0; i < 5; i++) tries.push(await otherCall(stack.mcpUrl));
    t.diagnostic(`wasm ${(before / MiB).toFixed(1)} -> ${(during / MiB).toFixed(1)} MiB; another principal's ` +
      `tools/list while one token holds 13 x 1 MiB + 40 x 1 B bodies: ${JSON.stringify(tries)}`);
    for (const r of tries) {
      assert.equal(r.status, 200, `another principal was refused: ${JSON.stringify(tries)}`);
      assert.ok(r.ms < 2000);
    }
  } finally {
    for (const h of held) h.close();
    await stack.close();
  }
});
