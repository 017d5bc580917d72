// Requests to the sign-in paths that do no work for their sender hold nothing: a discovery
// document, a preflight or a method the path does not take is answered at once, with no place
// among the sign-in requests in flight and no body read. Before, a POST to
// /.well-known/oauth-authorization-server took a sign-in slot and waited 10 s for its body, and
// was never rate-limited: four addresses re-opening six each held all 24 slots without end, and
// another address's refresh grant was refused 429 on 24/24 tries over 24 s.
//
// How: startWorker with OAuth on and the production rate limit (30 per 60 s per address); four
// addresses each keep 6 POST /.well-known/oauth-authorization-server declaring 200 bytes open
// (re-opened at once when answered) for 25 s; another address sends a refresh grant (bogus, so
// 400 when served) every second.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/oauth-sign-in-metadata.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startWorker } from "./worker.mjs";
import { UNREACHED_SIGN_IN_VARS } from "./oauth-browser.mjs";

let stack;
let url;
before(async () => {
  stack = await startWorker({ kvNamespaces: ["OAUTH"], vars: UNREACHED_SIGN_IN_VARS, rateLimit: 30 });
  url = new URL(stack.url);
});
after(() => stack.close());

function send(path, address, headers, body) {
  const req = http.request({
    host: url.hostname, port: url.port, path, method: "POST", agent: false,
    headers: { "cf-connecting-ip": address, ...headers },
  });
  const done = new Promise((resolve) => {
    req.on("response", (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString() }));
    });
    req.on("error", (e) => resolve({ status: e.code ?? "error", text: "" }));
  });
  if (body === undefined) req.flushHeaders();
  else req.end(body);
  return { req, done };
}

/** A refresh grant with a bogus token from `address`: 400 when it is served. */
const refresh = (address) => send("/oauth/token", address,
  { "content-type": "application/x-www-form-urlencoded" },
  "grant_type=refresh_token&refresh_token=bogus&client_id=bogus").done;

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

test("outsiders holding discovery-document requests do not lock out another address's refresh", async (t) => {
  assert.equal((await refresh("198.51.100.1")).status, 400);
  const ATTACKERS = ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"];
  let running = true;
  const seen = { sent: 0, rateLimited: 0, statuses: {} };
  const open = new Set();
  /** One of an attacker's six lanes: a held request, re-opened as soon as it is answered. */
  async function lane(address) {
    while (running) {
      const r = send("/.well-known/oauth-authorization-server", address,
        { "content-type": "application/x-www-form-urlencoded", "content-length": "200" });
      open.add(r.req);
      seen.sent++;
      const answer = await r.done;
      open.delete(r.req);
      seen.statuses[answer.status] = (seen.statuses[answer.status] ?? 0) + 1;
      if (/from this address/.test(answer.text)) seen.rateLimited++;
      if (answer.status === 429) await pause(20);
    }
  }
  const lanes = ATTACKERS.flatMap((a) => Array.from({ length: 6 }, () => lane(a)));
  await pause(1000);
  const statuses = [];
  const end = Date.now() + 24000;
  while (Date.now() < end) {
    statuses.push((await refresh("198.51.100.1")).status);
    await pause(1000);
  }
  running = false;
  for (const req of open) req.destroy();
  await Promise.all(lanes);
  const served = statuses.filter((s) => s === 400).length;
  t.diagnostic(`refresh statuses from another address: ${JSON.stringify(statuses)} (${served}/${statuses.length} served); ` +
    `attackers sent ${seen.sent} held requests, answered ${JSON.stringify(seen.statuses)}, rate-limited ${seen.rateLimited}`);
  assert.ok(statuses.every((s) => s === 400), `another address's refresh grant was refused: ${JSON.stringify(statuses)}`);
});
