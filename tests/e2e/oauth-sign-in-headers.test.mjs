// Sign-in requests held open with large headers do not take the memory of the callers who signed
// in. Each request reserves its overhead, twice its headers and its body's limit before its body
// is read; before, 64 held sign-in requests with 96 KB of headers each reserved enough that a
// static-token caller's 3.9 MB call was refused 503 for the whole hold (8/8). Now a sign-in
// request's headers are at most 32 KiB (past that it is refused unread) and every address
// together holds at most 24 sign-in requests: about 15 MiB of the default 72.
//
// How: OAuth configured; 64 chunked POST /oauth/token requests from 64 addresses, each with
// three 8,000-byte headers and one body byte sent, held; the static-token principal sends a
// 3.9 MB tools/call every second meanwhile. Then one request with 96 KB of headers.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/oauth-sign-in-headers.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startLoadStack, toolCall, MCP_HEADERS } from "../../bench/load/common.mjs";
import { UNREACHED_SIGN_IN_VARS } from "./oauth-browser.mjs";

const HOLD_MS = 6000;


/** A chunked /oauth/token request from `address` with `pads` 8,000-byte headers, one byte sent. */
function hold(url, address, pads) {
  const headers = { "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked", "cf-connecting-ip": address };
  for (let j = 0; j < pads; j++) headers[`x-pad-${j}`] = "a".repeat(8000);
  const req = http.request({ host: url.hostname, port: url.port, path: "/oauth/token", method: "POST", headers, agent: false });
  const done = new Promise((resolve) => {
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
    req.on("response", (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
  });
  req.write("x");
  return { req, done };
}

test("held sign-in requests with large headers do not refuse a static-token caller's large call", async (t) => {
  const stack = await startLoadStack(UNREACHED_SIGN_IN_VARS);
  const url = new URL(stack.url);
  const held = [];
  try {
    const big = toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId", pad: "y".repeat(3_900_000) });
    const call = () => fetch(stack.mcpUrl, { method: "POST", headers: MCP_HEADERS, body: big })
      .then(async (r) => { await r.arrayBuffer(); return r.status; });
    assert.equal(await call(), 200);
    for (let i = 0; i < 64; i++) held.push(hold(url, `198.18.0.${i + 1}`, 3));
    await new Promise((r) => setTimeout(r, 2000));
    const statuses = [];
    const end = Date.now() + HOLD_MS;
    while (Date.now() < end) {
      statuses.push(await call().catch((e) => String(e)));
      await new Promise((r) => setTimeout(r, 1000));
    }
    const over = hold(url, "198.18.1.1", 12);
    over.req.end();
    const refused = await over.done;
    for (const q of held) q.req.destroy();
    const answers = await Promise.all(held.map((q) => q.done));
    t.diagnostic(`static-token 3.9 MB calls while 64 sign-in requests with 24 KB headers held: ${JSON.stringify(statuses)}; ` +
      `held requests refused at once: ${answers.filter((a) => a.status === 429).length}; 96 KB of headers: ${refused.status} ${refused.text}`);
    assert.ok(statuses.every((s) => s === 200), JSON.stringify(statuses));
    assert.equal(refused.status, 400);
    assert.match(refused.text, /request headers over 32 KiB/);
  } finally {
    for (const q of held) q.req.destroy();
    await stack.close();
  }
});
