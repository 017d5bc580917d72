// Raw HTTP behaviour of the built worker in workerd: every status the endpoint can answer with,
// and the adapter's request/response conversion (headers, bodies, the 4 MiB body limit).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startWorker } from "./worker.mjs";

const TOKEN = "e2e-token-0123456789abcdef";
const ORIGIN = "http://localhost:6274";
let worker;

before(async () => {
  worker = await startWorker({
    vars: {
      MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }),
      MCP_ALLOWED_ORIGINS: ORIGIN,
    },
  });
});
after(() => worker?.close());

const rpc = (method, params, id = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });

function post(body, headers = {}) {
  return fetch(worker.mcpUrl, {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${TOKEN}`,
      ...headers,
    },
  });
}

async function rpcError(response) {
  const body = await response.json();
  assert.equal(body.jsonrpc, "2.0");
  assert.ok(body.error, `expected a JSON-RPC error, got ${JSON.stringify(body)}`);
  return body.error;
}

test("GET / is a plain-text description", async () => {
  const r = await fetch(`${worker.url}/`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type"), /^text\/plain/);
  assert.match(await r.text(), /MCP/);
});

test("POST /mcp answers JSON-RPC with application/json", async () => {
  const r = await post(rpc("ping"));
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type"), /^application\/json/);
  assert.deepEqual(await r.json(), { jsonrpc: "2.0", id: 1, result: {} });
});

test("GET and DELETE /mcp are 405 with Allow: POST", async () => {
  for (const method of ["GET", "DELETE"]) {
    const r = await fetch(worker.mcpUrl, { method, headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get("allow"), "POST");
    await r.arrayBuffer();
  }
});

test("other paths are 404", async () => {
  for (const p of ["/nope", "/mcp/extra", "/.well-known/oauth-protected-resource"]) {
    const r = await fetch(`${worker.url}${p}`);
    assert.equal(r.status, 404, p);
    await r.arrayBuffer();
  }
});

test("malformed JSON is -32700 with HTTP 400", async () => {
  const r = await post('{"jsonrpc":"2.0","id":1,"method":');
  assert.equal(r.status, 400);
  assert.equal((await rpcError(r)).code, -32700);
});

/**
 * POSTs `chunks` with node:http and resolves with the response as soon as it arrives. The server
 * may answer (413) and close before the upload ends; the resulting EPIPE/ECONNRESET on the
 * request side is expected then, so only an error before any response fails the call.
 */
function rawPost(url, headers, chunks) {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(url, { method: "POST", headers }, (res) => {
      answered = true;
      const body = [];
      res.on("data", (c) => body.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(body).toString("utf8") }));
      res.on("error", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(body).toString("utf8") }));
    });
    req.on("error", (e) => { if (!answered) reject(e); });
    (async () => {
      for (const chunk of chunks) {
        if (req.destroyed) return;
        if (!req.write(chunk)) await new Promise((r) => { req.once("drain", r); req.once("close", r); });
      }
      req.end();
    })();
  });
}

test("a body over 4 MiB is 413, with or without Content-Length", async () => {
  const limit = 4 * 1024 * 1024;
  const auth = { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` };
  const piece = Buffer.alloc(256 * 1024, 0x20);
  const pieces = (bytes) => Array.from({ length: Math.ceil(bytes / piece.length) }, (_, i) =>
    piece.subarray(0, Math.min(piece.length, bytes - i * piece.length)));

  // Declared length over the limit: refused without reading the body.
  const sized = await rawPost(worker.mcpUrl, { ...auth, "Content-Length": limit + 1 }, pieces(limit + 1));
  assert.equal(sized.status, 413);
  assert.ok(JSON.parse(sized.body).error, "a JSON-RPC error body");

  // Chunked upload: the adapter has to count bytes as they stream in.
  const chunked = await rawPost(worker.mcpUrl, { ...auth, "Transfer-Encoding": "chunked" }, pieces(5 * 1024 * 1024));
  assert.equal(chunked.status, 413);
});

/**
 * Sends the headers of a POST declaring `declared` body bytes and only the first 64 of them, then
 * waits up to `waitMs` for a response without sending the rest. Resolves with the status, or null
 * when none came: a server that reads the body first is still waiting for the rest.
 */
function headersOnlyPost(url, headers, declared, waitMs) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { ...headers, "Content-Length": declared } });
    const timer = setTimeout(() => { req.destroy(); resolve(null); }, waitMs);
    req.on("response", (res) => { clearTimeout(timer); res.resume(); req.destroy(); resolve(res.statusCode); });
    req.on("error", (e) => { clearTimeout(timer); if (!req.destroyed) reject(e); });
    req.write(Buffer.alloc(64, 0x20));
  });
}

test("credentials are checked before the body is read: a 401 comes while the upload is unfinished", async () => {
  const declared = 4 * 1024 * 1024;
  const json = { "Content-Type": "application/json" };
  for (const auth of [{}, { Authorization: "Bearer wrong-token-0123456789" }]) {
    const status = await headersOnlyPost(worker.mcpUrl, { ...json, ...auth }, declared, 5000);
    assert.equal(status, 401, `answered without the body (${JSON.stringify(auth)})`);
  }
  // The control: with a valid token the body is read, so no answer comes before it is complete.
  const authenticated = await headersOnlyPost(worker.mcpUrl, { ...json, Authorization: `Bearer ${TOKEN}` }, declared, 1500);
  assert.equal(authenticated, null, "an authenticated request waits for its body");
});

test("a body just under 4 MiB is read whole", async () => {
  // Whitespace padding keeps it valid JSON: the request must reach the JSON-RPC layer intact.
  const body = rpc("ping");
  const padded = body + " ".repeat(4 * 1024 * 1024 - Buffer.byteLength(body));
  const r = await post(padded);
  assert.equal(r.status, 200);
  assert.deepEqual((await r.json()).result, {});
});

test("a Content-Type other than JSON is 415", async () => {
  const r = await post(rpc("ping"), { "Content-Type": "text/plain" });
  assert.equal(r.status, 415);
  await rpcError(r);
});

test("an Origin not on the allow list is 403; an allowed one passes", async () => {
  const refused = await post(rpc("ping"), { Origin: "https://evil.example" });
  assert.equal(refused.status, 403);
  await rpcError(refused);
  const allowed = await post(rpc("ping"), { Origin: ORIGIN });
  assert.equal(allowed.status, 200);
  await allowed.arrayBuffer();
});

test("a missing or wrong bearer token is 401 with WWW-Authenticate: Bearer", async () => {
  for (const auth of [undefined, "Bearer wrong-token-0123456789", "Basic dXNlcjpwYXNz"]) {
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (auth) headers.Authorization = auth;
    const r = await fetch(worker.mcpUrl, { method: "POST", body: rpc("ping"), headers });
    assert.equal(r.status, 401, String(auth));
    assert.match(r.headers.get("www-authenticate") ?? "", /^Bearer\b/);
    await rpcError(r);
  }
});

test("a notification is 202 with an empty body", async () => {
  const r = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  assert.equal(r.status, 202);
  assert.equal(await r.text(), "");
});

test("an unsupported MCP-Protocol-Version is 400", async () => {
  const r = await post(rpc("ping"), { "MCP-Protocol-Version": "1999-01-01" });
  assert.equal(r.status, 400);
  await rpcError(r);
});

test("an unknown method is -32601", async () => {
  const r = await post(rpc("no/such/method"));
  assert.equal((await rpcError(r)).code, -32601);
});

test("unknown HTTP methods are not mistaken for GET", async () => {
  // worker::Request::method() maps unknown verbs to GET; the adapter must pass the real one.
  const r = await fetch(`${worker.url}/`, { method: "PROPFIND" });
  assert.notEqual(r.status, 200);
  await r.arrayBuffer();
});
