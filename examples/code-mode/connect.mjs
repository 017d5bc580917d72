// Connects the official MCP SDK client to a server by URL with a bearer token, as a code-mode
// harness does before it runs the model's program.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * A connected client for `url` authenticating with `token`. `onResult(name, args, result, ms)`,
 * when given, sees every tools/call result and its wall time (the measurement uses it; the
 * program never needs it).
 */
export async function connect(url, token, { onResult } = {}) {
  const client = new Client({ name: "code-mode-example", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  if (!onResult) return client;
  const callTool = client.callTool.bind(client);
  client.callTool = async (params, ...rest) => {
    const started = performance.now();
    const result = await callTool(params, ...rest);
    onResult(params.name, params.arguments ?? {}, result, performance.now() - started);
    return result;
  };
  return client;
}
