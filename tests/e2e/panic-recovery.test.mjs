// A panic inside a tool call fails that request only: the next requests are served. Runs the test
// build of `make build-probe` (build-probe/: the release build plus the panic_probe tool, whose call
// panics), and checks that the release build (build/) has no such tool.
//
// worker-build 0.8.7 builds with wasm-bindgen's reset-state support (decision 0057): after a
// panic (a Wasm trap, as panic=abort gives) the module instance is marked broken and the next
// request makes a fresh one, so the isolate keeps serving; what lived in Wasm memory (the server
// built per isolate) is rebuilt on that request.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./worker.mjs";

const TOKEN = "e2e-panic-token-0123456789abcdef";
const workers = [];
after(async () => { for (const w of workers) await w.close(); });

async function start(build, logs) {
  const worker = await startWorker({ build, onLog: (line) => logs.push(line), vars: { MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }) } });
  workers.push(worker);
  return worker;
}

/** One JSON-RPC request; returns { status, body } (body parsed when it is JSON, else the text). */
async function rpc(worker, method, params = {}) {
  const r = await fetch(worker.mcpUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const text = await r.text();
  let body = text;
  try { body = JSON.parse(text); } catch { /* the runtime's own error page */ }
  return { status: r.status, body };
}

test("after a panic inside a tool call, the next requests are served", async () => {
  const logs = [];
  const worker = await start("build-probe", logs);
  const listed = await rpc(worker, "tools/list");
  assert.equal(listed.status, 200);
  assert.ok(listed.body.result.tools.some((t) => t.name === "panic_probe"), "the probe build has the probe");
  for (let round = 0; round < 3; round++) {
    const panicked = await rpc(worker, "tools/call", { name: "panic_probe", arguments: {} });
    assert.ok(panicked.status >= 500 || panicked.body?.error, `round ${round}: the panicking call fails: ${panicked.status} ${JSON.stringify(panicked.body).slice(0, 200)}`);
    assert.equal(panicked.body?.result, undefined, "no result for the panicking call");
    // The very next requests are answered normally.
    const ping = await rpc(worker, "ping");
    assert.equal(ping.status, 200, `round ${round}: ping after the panic: ${JSON.stringify(ping.body).slice(0, 200)}`);
    assert.deepEqual(ping.body.result, {});
    const tools = await rpc(worker, "tools/list");
    assert.equal(tools.status, 200);
    assert.ok(tools.body.result.tools.length > 10, "the whole tool list again");
  }
  assert.ok(logs.some((l) => l.includes("panic_probe: a panic inside a tool call")), `the panic is logged:\n${logs.slice(-10).join("\n")}`);
});

test("the release build has no panic_probe", async () => {
  const worker = await start("build", []);
  const listed = await rpc(worker, "tools/list");
  assert.equal(listed.status, 200);
  assert.ok(!listed.body.result.tools.some((t) => t.name === "panic_probe"));
  const call = await rpc(worker, "tools/call", { name: "panic_probe", arguments: {} });
  assert.equal(call.status, 200);
  assert.ok(call.body.error || call.body.result?.isError, `an unknown tool: ${JSON.stringify(call.body)}`);
});
