// The tool list sized to the connection, against the built worker in workerd: toolsets and
// read-only mode chosen by URL path and by header, under 2025-11-25 (the MCP SDK client's
// handshake) and 2026-07-28 (raw stateless requests), an unknown toolset refused with 400, and
// a call to a tool outside the connection's toolsets refused with a clear error.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startWorker } from "./worker.mjs";
import { toolsetNames } from "./catalog.mjs";

const TOKEN = "e2e-token-0123456789abcdef";
const V = "2026-07-28";
const GITHUB = toolsetNames("github");
let worker;
let everything;

before(async () => {
  worker = await startWorker({ vars: { MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }) } });
  everything = (await sdkList("/mcp")).map((t) => t.name);
});
after(() => worker?.close());

/** tools/list through the official SDK client (2025-11-25 handshake) connected to `path`. */
async function sdkList(path, headers = {}) {
  const client = new Client({ name: "e2e-toolsets", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${worker.url}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, ...headers } },
  });
  await client.connect(transport);
  try {
    assert.equal(transport.protocolVersion, "2025-11-25");
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/** One raw 2026-07-28 request to `path`; returns { status, body }. */
async function stateless(path, method, params = {}, headers = {}) {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "e2e-toolsets", version: "1.0.0" },
      },
    },
  };
  const r = await fetch(`${worker.url}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${TOKEN}`,
      "MCP-Protocol-Version": V,
      "Mcp-Method": method,
      ...(method === "tools/call" ? { "Mcp-Name": params.name } : {}),
      ...headers,
    },
  });
  return { status: r.status, body: await r.json() };
}

const names = (tools) => tools.map((t) => t.name);

test("/mcp lists every tool; /mcp/x/github lists the GitHub tools and artifact_read (2025-11-25)", async () => {
  assert.ok(everything.length > 20, `${everything.length} tools`);
  const github = await sdkList("/mcp/x/github");
  assert.deepEqual(names(github), GITHUB);
  for (const tool of github) {
    assert.ok(tool.title, `${tool.name} keeps its title`);
    for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) {
      assert.equal(typeof tool.annotations?.[hint], "boolean", `${tool.name} keeps ${hint}`);
    }
  }
});

test("the same choices over 2026-07-28: path, header, read-only", async () => {
  const list = async (path, headers) => {
    const { status, body } = await stateless(path, "tools/list", {}, headers);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.result.resultType, "complete");
    assert.equal(body.result.cacheScope, "private");
    return names(body.result.tools);
  };
  assert.deepEqual(await list("/mcp"), everything, "the same list as the 2025-11-25 client got");
  assert.deepEqual(await list("/mcp/x/github"), GITHUB);
  assert.deepEqual(await list("/mcp", { "X-MCP-Toolsets": "github" }), GITHUB);
  assert.deepEqual(await list("/mcp/x/jira/readonly"), ["jira_get", "artifact_read"]);
  assert.deepEqual(await list("/mcp/x/jira", { "X-MCP-Readonly": "true" }), ["jira_get", "artifact_read"]);
  const readOnly = await list("/mcp/readonly");
  assert.ok(readOnly.includes("bb_get") && !readOnly.includes("bb_post") && !readOnly.includes("approval_decide"));
});

test("headers choose toolsets and read-only mode for the SDK client, and narrow a path", async () => {
  assert.deepEqual(names(await sdkList("/mcp", { "X-MCP-Toolsets": "circleci" })), [
    "circleci_get",
    "circleci_get_job_logs",
    "circleci_get_workflow",
    "circleci_rerun_workflow",
    "artifact_read",
  ]);
  const narrowed = await sdkList("/mcp/x/github,bitbucket", { "X-MCP-Toolsets": "bitbucket,jira", "X-MCP-Readonly": "1" });
  assert.deepEqual(names(narrowed), ["bb_get", "artifact_read"]);
  const { tools } = { tools: await sdkList("/mcp/readonly") };
  assert.ok(tools.every((t) => t.annotations.readOnlyHint === true), "read-only mode lists only read-only tools");
});

test("an unknown toolset is a clear 400, by path and by header", async () => {
  for (const [path, headers, expected] of [
    ["/mcp/x/github,gitlab", {}, 'the URL path names an unknown toolset "gitlab"'],
    ["/mcp", { "X-MCP-Toolsets": "wiki" }, 'X-MCP-Toolsets names an unknown toolset "wiki"'],
    ["/mcp", { "X-MCP-Readonly": "maybe" }, "X-MCP-Readonly must be true or false"],
  ]) {
    const { status, body } = await stateless(path, "tools/list", {}, headers);
    assert.equal(status, 400, `${path} ${JSON.stringify(headers)}`);
    assert.ok(body.error.message.includes(expected), body.error.message);
    assert.deepEqual(body.error.data.toolsets, ["github", "circleci", "jira", "confluence", "bitbucket"]);
  }
  const client = new Client({ name: "e2e-toolsets", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${worker.url}/mcp/x/gitlab`), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  await assert.rejects(client.connect(transport), /400|unknown toolset/);
});

test("a call to a tool outside the connection's toolsets is refused and says how to get it", async () => {
  const { status, body } = await stateless("/mcp/x/github", "tools/call", { name: "jira_get", arguments: { path: "/rest/api/3/myself" } });
  assert.equal(status, 200);
  assert.equal(body.error.code, -32602);
  assert.equal(
    body.error.message,
    "Tool jira_get is not offered on this connection (toolsets github): it belongs to toolset jira; connect to /mcp/x/jira or add jira to X-MCP-Toolsets to use it.",
  );
  assert.deepEqual(body.error.data, { tool: "jira_get", toolset: "jira", connection: { toolsets: ["github"], readOnly: false } });

  const readOnly = await stateless("/mcp/readonly", "tools/call", { name: "bb_post", arguments: { path: "/x", body: {} } });
  assert.ok(readOnly.body.error.message.includes("it can change data, and this connection is read-only"), readOnly.body.error.message);

  // Through the SDK client as well: the refusal reaches the caller as an MCP error.
  const client = new Client({ name: "e2e-toolsets", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${worker.url}/mcp/x/github`), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  }));
  try {
    await assert.rejects(client.callTool({ name: "conf_get", arguments: { path: "/wiki/api/v2/spaces" } }), /not offered on this connection/);
    // A tool the connection offers runs: artifact_read answers for an id that cannot exist.
    const offered = await client.callTool({ name: "artifact_read", arguments: { artifactId: "00000000-0000-4000-8000-000000000000" } });
    assert.equal(offered.isError, true);
    assert.match(offered.content[0].text, /not found/i);
  } finally {
    await client.close();
  }
});
