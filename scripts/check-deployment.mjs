#!/usr/bin/env node
// Checks a deployed (or local) devtools-mcp-edge worker in one command, with the official MCP
// TypeScript SDK client:
//
//   node scripts/check-deployment.mjs https://devtools-mcp-edge.<account>.workers.dev/mcp "$TOKEN"
//   node scripts/check-deployment.mjs URL TOKEN --tool circleci_get --args '{"path":"/me"}'
//
// 1. a request without a token is refused with 401 (authentication is on);
// 2. the client initializes and reports the server's name, version and protocol revision;
// 3. tools/list lists the tools;
// 4. artifact_read of an id that cannot exist answers "not found" as a tool result: the tools/call
//    path works and the ARTIFACTS bucket answered (a missing binding gives a storage error);
// 5. with --tool, that tool is called with --args (a cheap vendor read checks credentials).
// Exits 0 when every step passed, 1 otherwise; prints one line per step. The token is never printed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const USAGE = "usage: node scripts/check-deployment.mjs URL TOKEN [--tool NAME] [--args JSON]";

function parseArgs(argv) {
  const [url, token, ...rest] = argv;
  if (!url || !token) throw new Error(USAGE);
  const opts = { url: new URL(url), token, tool: null, args: {} };
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === "--tool") opts.tool = rest[i + 1];
    else if (rest[i] === "--args") opts.args = JSON.parse(rest[i + 1] ?? "{}");
    else throw new Error(`unknown option ${rest[i]}\n${USAGE}`);
  }
  return opts;
}

const text = (result) => (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let failed = false;
  const step = (ok, line) => {
    console.log(`${ok ? "ok  " : "FAIL"} ${line}`);
    if (!ok) failed = true;
  };

  const anonymous = await fetch(opts.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await anonymous.body?.cancel();
  step(anonymous.status === 401, `a request without a token is refused (HTTP ${anonymous.status})`);

  const client = new Client({ name: "check-deployment", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(opts.url, {
    requestInit: { headers: { Authorization: `Bearer ${opts.token}` } },
  });
  try {
    await client.connect(transport);
  } catch (e) {
    step(false, `initialize: ${e.message}`);
    return 1;
  }
  const info = client.getServerVersion();
  step(true, `initialize: ${info?.name} ${info?.version}, protocol ${transport.protocolVersion ?? "(negotiated)"}`);
  try {
    const { tools } = await client.listTools();
    step(tools.length > 0, `tools/list: ${tools.length} tools (${tools.slice(0, 4).map((t) => t.name).join(", ")}, ...)`);

    const probe = await client.callTool({ name: "artifact_read", arguments: { artifactId: "00000000-0000-4000-8000-000000000000" } });
    const probeText = text(probe);
    step(probe.isError === true && /not found/i.test(probeText), `tools/call artifact_read (R2 reachable): ${probeText.slice(0, 80)}`);

    if (opts.tool) {
      const r = await client.callTool({ name: opts.tool, arguments: opts.args });
      step(r.isError !== true, `tools/call ${opts.tool}: ${text(r).slice(0, 120).replace(/\s+/g, " ")}`);
    }
  } catch (e) {
    step(false, e.message);
  } finally {
    await client.close().catch(() => {});
  }
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e.message);
  process.exit(1);
});
