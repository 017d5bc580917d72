// Upstream faults, each followed by a working call (the worker in workerd recovers, no
// poisoned connection pool, cache or isolate): connection refused, reset mid-body, a body that
// never ends (trickled, so only the timeout stops it), 500/502/503, 429 with and without
// Retry-After, malformed JSON under a JSON content type, a body over UPSTREAM_MAX_BYTES, and a
// redirect to another host (never followed, so no credential reaches it). For one read tool of
// every vendor. tools-faults.test.mjs checks the error texts of the transport faults in depth.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { startStack, vendorUrls, networkErrorText, tooLargeErrorText } from "./tools-common.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";

const TIMEOUT_MS = 1000;
const MAX_BYTES = 65536;

/** One read call per vendor and the upstream path it requests. */
const CALLS = [
  ["github_list_workflow_runs", { owner: "octo-org", repo: "hello-world", perPage: 1 }, "/repos/octo-org/hello-world/actions/runs"],
  ["circleci_get", { path: "/me", fresh: true }, "/api/v2/me"],
  ["jira_get", { path: "/rest/api/3/myself" }, "/rest/api/3/myself"],
  ["conf_get", { path: "/wiki/api/v2/spaces" }, "/wiki/api/v2/spaces"],
  ["bb_get", { path: "/user" }, "/2.0/user"],
];

/**
 * A TCP relay in front of the fake upstream that can be taken down (its port then refuses
 * connections, and open ones are cut) and brought back on the same port.
 */
async function startRelay(target) {
  const { port: targetPort } = new URL(target);
  const sockets = new Set();
  let server;
  const listen = (port) => new Promise((resolve) => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(targetPort), "127.0.0.1");
      for (const [s, other] of [[client, upstream], [upstream, client]]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        // A reset on one side is passed on as a reset, so the worker sees what the upstream did.
        s.on("error", () => other.resetAndDestroy());
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(port, "127.0.0.1", () => resolve(server.address().port));
  });
  const port = await listen(0);
  return {
    url: `http://127.0.0.1:${port}`,
    async down() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
    up: () => listen(port),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

let upstream;
let relay;
let stack;
let elsewhere;
before(async () => {
  upstream = await startFakeUpstream();
  relay = await startRelay(upstream.url);
  stack = await startStack({
    upstream,
    vars: { ...vendorUrls(relay), UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS), UPSTREAM_MAX_BYTES: String(MAX_BYTES) },
  });
  elsewhere = { requests: [] };
  elsewhere.server = http.createServer((req, res) => { elsewhere.requests.push(req.headers); res.end("{}"); });
  await new Promise((r) => elsewhere.server.listen(0, "127.0.0.2", r));
  elsewhere.url = `http://127.0.0.2:${elsewhere.server.address().port}`;
});
beforeEach(() => upstream.reset());
after(async () => {
  await stack?.close();
  await relay?.close();
  await upstream?.close();
  await new Promise((r) => elsewhere?.server.close(r));
});

/** The next call of `tool` succeeds and reaches the upstream. */
async function worksAgain(tool, args, path) {
  const before = upstream.count(null, path);
  const r = await stack.call(tool, args);
  assert.equal(r.isError, false, `${tool} after the fault: ${r.text.slice(0, 300)}`);
  assert.equal(upstream.count(null, path), before + 1, `${tool}: the next call reached the upstream`);
}

/**
 * Scripts `spec` once on each call's path, expects an error whose text is `expected(tool)` (a
 * function giving the exact text) or matches it (a pattern), then a working call.
 */
async function faultThenWork(spec, expected) {
  for (const [tool, args, path] of CALLS) {
    const fault = upstream.fault({ path, times: 1, ...spec });
    const text = await stack.callError(tool, args);
    if (typeof expected === "function") assert.equal(text, expected(tool), tool);
    else assert.match(text, expected, `${tool}: ${text}`);
    assert.equal(fault.hits, 1, `${tool}: the fault fired`);
    await worksAgain(tool, args, path);
  }
}

test("connection refused: a network error result, and calls work once the upstream is back", async () => {
  await relay.down();
  try {
    for (const [tool, args] of CALLS) {
      assert.equal(await stack.callError(tool, args), networkErrorText(tool), tool);
    }
  } finally {
    await relay.up();
  }
  for (const [tool, args, path] of CALLS) await worksAgain(tool, args, path);
});

test("a connection reset mid-body", async () => {
  await faultThenWork({ status: 200, body: JSON.stringify({ data: "x".repeat(5000) }), resetAfterBytes: 100 }, networkErrorText);
});

test("a body that never ends (trickled) times out", async () => {
  const open = new Set();
  for (const [tool, args, path] of CALLS) {
    upstream.route("GET", new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`), (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write('{"data":"');
      const timer = setInterval(() => res.write("a"), 100);
      open.add(timer);
      res.on("close", () => clearInterval(timer));
    });
    const start = Date.now();
    const text = await stack.callError(tool, args);
    const took = Date.now() - start;
    assert.match(text, /time(d)? ?out|did not (respond|answer)/i, `${tool}: ${text}`);
    assert.ok(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS * 5, `${tool} gave up after ${took} ms`);
    upstream.reset();
    await worksAgain(tool, args, path);
  }
  for (const t of open) clearInterval(t);
});

for (const status of [500, 502, 503]) {
  // The texts follow the reference servers ("GitHub server error", "Confluence service error", ...).
  test(`HTTP ${status} is a server-error result carrying the upstream's message`, async () => {
    await faultThenWork({ status, body: { message: "upstream trouble" } }, new RegExp(`(${status}|(server|service) error)[^]*upstream trouble|upstream trouble[^]*${status}`, "i"));
  });
}

test("429 with Retry-After says how long to wait; without it, still a rate-limit error", async () => {
  await faultThenWork({ status: 429, headers: { "Retry-After": "37" }, body: { message: "slow down" } }, /37/);
  await faultThenWork({ status: 429, body: { message: "slow down" } }, /429|rate|too many/i);
});

test("malformed JSON under a JSON content type: an error for GitHub and CircleCI, the text for Atlassian (reference parity), never a crash", async () => {
  const broken = '{"workflow_runs": [{"id": 1, "status": ';
  for (const [tool, args, path] of CALLS) {
    const fault = upstream.fault({ path, times: 1, status: 200, body: broken, headers: { "Content-Type": "application/json; charset=utf-8" } });
    const r = await stack.call(tool, { ...args, outputFormat: "json" });
    assert.equal(fault.hits, 1, tool);
    if (tool.startsWith("github_") || tool === "circleci_get") {
      assert.equal(r.isError, true, `${tool}: ${r.text}`);
      assert.match(r.text, /Invalid response from (GitHub|CircleCI) API: the body is declared as JSON but is not valid JSON/);
    } else {
      assert.equal(r.isError, false, `${tool}: ${r.text}`);
      assert.equal(JSON.parse(r.text), broken, `${tool}: the body is passed on as a string, not parsed into a partial value`);
    }
    await worksAgain(tool, args, path);
  }
});

test("a body over UPSTREAM_MAX_BYTES", async () => {
  await faultThenWork({ status: 200, bodyBytes: MAX_BYTES * 4 }, (tool) => tooLargeErrorText(tool, MAX_BYTES));
});

test("a redirect to another host is an error, never followed, no credential sent there", async () => {
  for (const status of [301, 302, 307, 308]) {
    await faultThenWork({ status, body: "", headers: { Location: `${elsewhere.url}/steal?x=1` } }, /redirect|30\d/i);
  }
  assert.equal(elsewhere.requests.length, 0, "nothing reached the other host");
});

test("no credential appears in any result or log line of these faults", () => {
  assert.ok(stack.assertNoSecrets().results > 60);
});
