// Shared by tests/e2e/batch-budget.test.mjs and bench/batch.mjs: two principals' stateless
// 2025-03-26 requests (the revision that has batches) to a stack of bench/load/common.mjs, a
// ~2 MiB runs page that the worker saves as a large artifact, and a jq program that spends about
// 60% of one request's fuel.

import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { bigRunsPage } from "./fake/github.mjs";

export const MiB = 1024 * 1024;
/** The default MEMORY_BUDGET_BYTES (src/memory.rs, DEFAULT_BUDGET_BYTES). */
export const BUDGET = 72 * MiB;
/** The most messages a batch may hold (src/server/batch.rs, MAX_BATCH_MESSAGES). */
export const MAX_BATCH = 50;
/** The bearer tokens of the two principals (give them to the stack as MCP_AUTH_TOKENS). */
export const TOKENS = { alice: "e2e-alice-token-0123456789abcdef", bob: "e2e-bob-token-0123456789abcdef01" };
/**
 * Items JQ_PROGRAM runs through to spend about 60% of one request's fuel, as
 * tests/it/batch_budget.rs measures it on the host: alone a call has fuel enough, two do not.
 */
export const JQ_ITEMS = 650000;
export const JQ_PROGRAM = ".n as $n | reduce limit($n; repeat(1)) as $x (0; . + $x)";

/** POSTs `body` (any JSON-RPC message or batch) as `principal`: { status, json, bytes, ms }. */
export async function post(stack, body, principal = "alice") {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${TOKENS[principal]}`,
    "mcp-protocol-version": "2025-03-26",
  };
  const t0 = performance.now();
  const r = await fetch(stack.mcpUrl, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: JSON.parse(text), bytes: text.length, ms: performance.now() - t0 };
}

/** A tools/call request. */
export const call = (id, name, args) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

/** The text blocks of a reply's result, joined. */
export const textOf = (reply) => reply.result?.content?.map((b) => b.text ?? "").join("") ?? "";

/** Routes the ~2 MiB runs page of octo-org/big and CircleCI's /budget/N answering {n: JQ_ITEMS}. */
export function routeBatchPages(upstream) {
  const page = bigRunsPage(upstream.url, 2 * MiB);
  upstream.route("GET", /^\/repos\/octo-org\/big\/actions\/runs$/, (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": page.length });
    res.end(page);
  });
  upstream.route("GET", /^\/api\/v2\/budget\/\d+$/, (req, res, m, { json }) => json(res, 200, { n: JQ_ITEMS }));
}

/** Saves the ~2 MiB page as alice's artifact and returns its id once a 1 MiB chunk reads back. */
export async function largeArtifact(stack) {
  const saved = await post(stack, call(1, "github_list_workflow_runs", { owner: "octo-org", repo: "big", perPage: 100 }));
  const id = /artifact `([0-9a-f-]{36})`/.exec(textOf(saved.json))?.[1];
  assert.ok(id, `the truncated page names its artifact: ${textOf(saved.json).slice(-300)}`);
  // The artifact is written after the reply; a read waits for it.
  const read = await post(stack, call(2, "artifact_read", { artifactId: id, maxBytes: MiB }));
  const chunk = JSON.parse(textOf(read.json));
  assert.ok(chunk.totalBytes > MiB && chunk.nextOffset === MiB, JSON.stringify({ ...chunk, data: undefined }));
  return id;
}

/** A batch of `length` artifact_read calls of 1 MiB each from the start of `artifactId`. */
export const readsBatch = (artifactId, length) =>
  Array.from({ length }, (_, i) => call(i + 1, "artifact_read", { artifactId, maxBytes: MiB }));
