// MCP 2026-07-28 as published, over raw HTTP against the built worker in workerd: the
// per-request _meta (required fields, optional clientInfo and logLevel), header/_meta
// agreement, unsupported revisions, server/discover's shape, the POST body rules and the
// deterministic tools/list order.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startWorker } from "./worker.mjs";

const TOKEN = "e2e-token-0123456789abcdef";
const V = "2026-07-28";
const CLIENT_INFO = { name: "e2e-raw", version: "1.0.0" };
let worker;

before(async () => {
  worker = await startWorker({ vars: { MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }) } });
});
after(() => worker?.close());

const meta = (extra = {}) => ({
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
  ...extra,
});

/** The _meta of a request, without the keys named. */
function metaWithout(...keys) {
  const m = meta();
  for (const k of keys) delete m[k];
  return m;
}

/** POSTs one JSON-RPC body; `headers` replaces the 2026-07-28 defaults (null removes one). */
async function post(body, headers = {}) {
  const all = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    Authorization: `Bearer ${TOKEN}`,
    "MCP-Protocol-Version": V,
    ...(body.method ? { "Mcp-Method": body.method } : {}),
    ...(body.method === "tools/call" ? { "Mcp-Name": body.params?.name } : {}),
    ...headers,
  };
  for (const [k, v] of Object.entries(all)) if (v === null) delete all[k];
  const r = await fetch(worker.mcpUrl, { method: "POST", body: JSON.stringify(body), headers: all });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null, text };
}

const request = (method, params, id = 7) => ({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });

test("a request missing a required _meta field is 400 with -32602 and its id", async () => {
  const cases = {
    "no _meta": {},
    "no protocolVersion": { _meta: metaWithout("io.modelcontextprotocol/protocolVersion") },
    "no clientCapabilities": { _meta: metaWithout("io.modelcontextprotocol/clientCapabilities") },
    "clientInfo without version": { _meta: meta({ "io.modelcontextprotocol/clientInfo": { name: "x" } }) },
    "logLevel not a level": { _meta: meta({ "io.modelcontextprotocol/logLevel": "verbose" }) },
  };
  for (const [name, params] of Object.entries(cases)) {
    for (const method of ["server/discover", "tools/list"]) {
      const r = await post(request(method, params, 11));
      assert.equal(r.status, 400, `${name}, ${method}: ${r.text}`);
      assert.equal(r.body.error.code, -32602, name);
      assert.equal(r.body.id, 11, name);
    }
  }
});

test("clientInfo is optional: requests without it are served", async () => {
  const _meta = metaWithout("io.modelcontextprotocol/clientInfo");
  const discover = await post(request("server/discover", { _meta }));
  assert.equal(discover.status, 200, discover.text);
  assert.equal(discover.body.result.resultType, "complete");
  const list = await post(request("tools/list", { _meta }));
  assert.equal(list.status, 200, list.text);
  assert.ok(list.body.result.tools.length > 0);
  // A tool call runs too (here the argument check answers, so no upstream is needed).
  const call = await post(request("tools/call", { name: "artifact_read", arguments: {}, _meta }));
  assert.equal(call.status, 200, call.text);
  assert.equal(call.body.result.isError, true);
  assert.equal(call.body.result.resultType, "complete");
  const leveled = await post(request("tools/list", { _meta: meta({ "io.modelcontextprotocol/logLevel": "warning" }) }));
  assert.equal(leveled.status, 200, leveled.text);
});

test("header and _meta disagreeing is HeaderMismatch, whatever _meta names", async () => {
  for (const named of ["v999.0.0", "2025-11-25"]) {
    const r = await post(request("server/discover", { _meta: meta({ "io.modelcontextprotocol/protocolVersion": named }) }, 21));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, -32020, named);
    assert.equal(r.body.id, 21);
  }
  const noHeader = await post(request("server/discover", { _meta: meta({ "io.modelcontextprotocol/protocolVersion": "v999.0.0" }) }), { "MCP-Protocol-Version": null });
  assert.deepEqual([noHeader.status, noHeader.body.error.code], [400, -32020], noHeader.text);
});

test("a revision this server does not speak, in header and _meta alike, is -32022 listing the supported ones", async () => {
  const r = await post(request("server/discover", { _meta: meta({ "io.modelcontextprotocol/protocolVersion": "v999.0.0" }) }, 31), { "MCP-Protocol-Version": "v999.0.0" });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error.code, -32022);
  assert.equal(r.body.id, 31);
  assert.equal(r.body.error.data.requested, "v999.0.0");
  assert.deepEqual(r.body.error.data.supported, [V, "2025-11-25", "2025-06-18", "2025-03-26"]);
});

test("server/discover has the published shape, also when probed without a header", async () => {
  const stateless = await post(request("server/discover", { _meta: meta() }));
  const probe = await post(request("server/discover"), { "MCP-Protocol-Version": null, "Mcp-Method": null });
  for (const { status, body, text } of [stateless, probe]) {
    assert.equal(status, 200, text);
    const result = body.result;
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.supportedVersions, [V, "2025-11-25", "2025-06-18", "2025-03-26"]);
    assert.deepEqual(result.capabilities, { tools: { listChanged: false } });
    assert.equal(result._meta["io.modelcontextprotocol/serverInfo"].name, "devtools-mcp-edge");
    assert.equal(result.serverInfo, undefined, "identity lives in _meta only");
    assert.equal(result.ttlMs, 300000);
    assert.equal(result.cacheScope, "private");
  }
});

test("a JSON-RPC response is not a 2026-07-28 POST body; older revisions acknowledge it", async () => {
  const response = { jsonrpc: "2.0", id: 5, result: {} };
  const refused = await post(response);
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.body.error.code, -32600);
  const legacy = await post(response, { "MCP-Protocol-Version": "2025-11-25" });
  assert.deepEqual([legacy.status, legacy.text], [202, ""]);
});

/** POSTs with node:http, which sends header bytes fetch would refuse. */
function rawPost(body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(worker.mcpUrl, { method: "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => { text += c; });
      res.on("end", () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("Mcp-Name must be visible ASCII or the base64 form", async () => {
  const body = request("tools/call", { name: "artifact_read", arguments: {}, _meta: meta() });
  const headers = {
    "Content-Type": "application/json",
    Authorization: `Bearer ${TOKEN}`,
    "MCP-Protocol-Version": V,
    "Mcp-Method": "tools/call",
  };
  const latin1 = await rawPost(JSON.stringify(body), { ...headers, "Mcp-Name": "artifact_r\xe9ad" });
  assert.deepEqual([latin1.status, latin1.body.error?.code], [400, -32020], JSON.stringify(latin1.body));
  const encoded = Buffer.from("artifact_read").toString("base64");
  const ok = await rawPost(JSON.stringify(body), { ...headers, "Mcp-Name": `=?base64?${encoded}?=` });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
});

test("tools/list returns the same tools in the same order every time", async () => {
  const names = async () => (await post(request("tools/list", { _meta: meta() }))).body.result.tools.map((t) => t.name);
  const first = await names();
  assert.ok(first.length > 5);
  for (let i = 0; i < 3; i++) assert.deepEqual(await names(), first);
});
