// The official MCP TypeScript SDK client against the built worker in workerd, over Streamable
// HTTP: the handshake, protocol version negotiation, ping and tools/list as a real client sees them.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { startWorker } from "./worker.mjs";
import { TOOL_NAMES } from "./catalog.mjs";

const TOKEN = "e2e-token-0123456789abcdef";
/** Every tool the worker lists, whatever its settings (README, Tools). */
const TOOLS = TOOL_NAMES;
let worker;

before(async () => {
  worker = await startWorker({ vars: { MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }) } });
});
after(() => worker?.close());

async function connect(token = TOKEN) {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

test("the SDK client initializes and negotiates its latest protocol version", async () => {
  const { client, transport } = await connect();
  try {
    assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
    const info = client.getServerVersion();
    assert.equal(info.name, "devtools-mcp-edge");
    assert.ok(info.version, "serverInfo.version is set");
    assert.ok(client.getServerCapabilities().tools, "the tools capability is advertised");
    // Stateless server: no session id to carry.
    assert.equal(transport.sessionId, undefined);
  } finally {
    await client.close();
  }
});

test("ping and tools/list succeed through the SDK", async () => {
  const { client } = await connect();
  try {
    assert.deepEqual(await client.ping(), {});
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort(), "the whole catalog, so the loop below checks every tool");
    for (const tool of tools) {
      assert.equal(typeof tool.name, "string");
      assert.equal(tool.inputSchema?.type, "object", `${tool.name} has an object input schema`);
    }
  } finally {
    await client.close();
  }
});

test("calling an unknown tool is an error the SDK surfaces", async () => {
  const { client } = await connect();
  try {
    // An unroutable call is a JSON-RPC invalid-params error (not a tool result), naming the tool.
    await assert.rejects(client.callTool({ name: "no.such_tool", arguments: {} }), (e) => {
      assert.equal(e.code, -32602, e.message);
      assert.match(e.message, /Unknown tool: no\.such_tool/);
      return true;
    });
  } finally {
    await client.close();
  }
});

test("the SDK client is refused with a wrong token", async () => {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: "Bearer not-the-token-0123456789" } },
  });
  await assert.rejects(client.connect(transport), /401|Unauthorized/i);
  await client.close();
});
