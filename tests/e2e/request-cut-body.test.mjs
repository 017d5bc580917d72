// A request body cut short is refused, and nothing in it runs: a body shorter than its declared
// Content-Length, or a chunked body whose connection fails before its last chunk, is what
// arrived of another request, and a prefix may parse as a whole one (a tools/call, a form).
// The adapter flags a stream that fails mid-body, and the server compares what arrived with the
// declared length; before, the prefix was parsed and run (one upstream call each way).
//
// How: the static-token caller sends a complete tools/call (jira_get /myself) declaring 100 bytes
// more than it sends (then, chunked, without its terminating chunk), and drops the connection;
// the fake upstream's /myself requests are counted.
//
// Runs alone: node --test tests/e2e/request-cut-body.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startLoadStack, toolCall, MCP_HEADERS } from "../../bench/load/common.mjs";

test("a /mcp body cut short of its declared length or its last chunk is not run", async (t) => {
  const stack = await startLoadStack({});
  const url = new URL(stack.url);
  try {
    const body = toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId" });
    const ran = {};
    for (const mode of ["content-length", "chunked"]) {
      const before = stack.upstream.count("GET", /myself/);
      const headers = { ...MCP_HEADERS };
      if (mode === "content-length") headers["content-length"] = String(Buffer.byteLength(body) + 100);
      else headers["transfer-encoding"] = "chunked";
      const req = http.request({ host: url.hostname, port: url.port, path: "/mcp", method: "POST", agent: false, headers });
      req.on("error", () => {});
      req.write(body);
      await new Promise((r) => setTimeout(r, 500));
      req.socket.destroy();
      await new Promise((r) => setTimeout(r, 1500));
      ran[mode] = stack.upstream.count("GET", /myself/) - before;
    }
    t.diagnostic(`upstream calls made for bodies cut short: ${JSON.stringify(ran)}`);
    assert.deepEqual(ran, { "content-length": 0, chunked: 0 },
      `bodies cut short were parsed and run: ${JSON.stringify(ran)} upstream calls`);
  } finally {
    await stack.close();
  }
});
