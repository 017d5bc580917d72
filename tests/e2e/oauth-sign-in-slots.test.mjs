// Sign-in requests held open do not lock signed-in clients out of their refresh grants. Anyone
// may open a request to /oauth/token and send its body slowly; before, 64 such requests from one
// outsider took every sign-in slot of the isolate and a refresh grant was refused 429 for as long
// as they were held (15/15 over 15 s). Now the token endpoint is rate-limited per address (its
// own count, apart from registrations), one address (an IPv4 address, an IPv6 /48) holds at most
// 6 sign-in requests in flight and every address together 24, and a sign-in body has 10 seconds
// to arrive: an outsider at one address holds nothing another address needs, and outsiders at
// many addresses hold the endpoints for at most the body's time.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/oauth-sign-in-slots.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startWorker } from "./worker.mjs";
import { UNREACHED_SIGN_IN_VARS } from "./oauth-browser.mjs";


let stack;
let url;
before(async () => {
  stack = await startWorker({ kvNamespaces: ["OAUTH"], vars: UNREACHED_SIGN_IN_VARS, rateLimit: 20 });
  url = new URL(stack.url);
});
after(() => stack.close());

/** A refresh grant with a bogus token from `address`: 400 when it is served. */
function refresh(address) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, path: "/oauth/token", method: "POST", agent: false,
      headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": address },
    }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
    req.on("error", reject);
    req.end("grant_type=refresh_token&refresh_token=bogus&client_id=bogus");
  });
}

/** A /oauth/token request from `address` declaring 200 bytes and sending 10, held open. */
function openSlow(address) {
  const req = http.request({
    host: url.hostname, port: url.port, path: "/oauth/token", method: "POST", agent: false,
    headers: { "content-type": "application/x-www-form-urlencoded", "content-length": "200", "cf-connecting-ip": address },
  });
  const done = new Promise((resolve) => {
    req.on("response", (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString(), at: Date.now() }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "", at: Date.now() }));
  });
  req.write("grant_type");
  return { finish: () => req.destroy(), done };
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

test("70 held /oauth/token bodies from one address do not refuse another address's refresh", async (t) => {
  assert.equal((await refresh("198.51.100.1")).status, 400);
  const open = Array.from({ length: 70 }, () => openSlow("203.0.113.7"));
  await pause(1000);
  const statuses = [];
  const end = Date.now() + 8000;
  while (Date.now() < end) {
    statuses.push((await refresh("198.51.100.1")).status);
    await pause(1000);
  }
  for (const o of open) o.finish();
  const held = await Promise.all(open.map((o) => o.done));
  const refusedAtOnce = held.filter((h) => h.status === 429).length;
  t.diagnostic(`refresh statuses meanwhile: ${JSON.stringify(statuses)}; the outsider's requests refused 429: ${refusedAtOnce}/70`);
  assert.ok(statuses.every((s) => s === 400), JSON.stringify(statuses));
  assert.ok(refusedAtOnce >= 70 - 6, `${refusedAtOnce} of the outsider's 70 requests refused`);
});

test("held sign-in bodies from many addresses are answered within 10 seconds, then refresh is served", async (t) => {
  const started = Date.now();
  const open = Array.from({ length: 40 }, (_, i) => openSlow(`2001:db8:${(i + 1).toString(16)}::1`));
  await pause(1000);
  // Every address together holds at most 24: the endpoints are full for now.
  const full = await refresh("198.51.100.2");
  let served;
  const statuses = [full.status];
  while (Date.now() - started < 20000) {
    const r = await refresh("198.51.100.2");
    statuses.push(r.status);
    if (r.status === 400) { served = Date.now() - started; break; }
    await pause(500);
  }
  for (const o of open) o.finish();
  const held = await Promise.all(open.map((o) => o.done));
  const timedOut = held.filter((h) => h.status === 400 && h.text.includes("did not arrive within 10 seconds"));
  t.diagnostic(`refresh ${JSON.stringify(statuses)}, served after ${served} ms; ${timedOut.length}/40 held bodies ` +
    `timed out at ${timedOut.map((h) => h.at - started).sort((a, b) => a - b).slice(0, 1)}..` +
    `${timedOut.map((h) => h.at - started).sort((a, b) => b - a).slice(0, 1)} ms; ${held.filter((h) => h.status === 429).length} refused 429`);
  assert.equal(full.status, 429, full.text);
  assert.equal(timedOut.length, 24);
  assert.ok(served !== undefined && served < 15000, `refresh served after ${served} ms`);
});
