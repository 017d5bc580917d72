// Shared set-up for the structured-output end-to-end specs (tests/e2e/structured-*.test.mjs):
// workers with MCP_STRUCTURED_OUTPUT on and off against one fake upstream (so bodies, URLs and
// ids agree between them), the extra routes the examples of docs/structured-output.md need, a client that records the
// raw bytes of every reply, and the artifact helpers (read back whole, backdate in R2).

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { githubRun } from "./fake/github.mjs";
import { PRINCIPALS } from "./tools-common.mjs";
import { SCHEMA_TOOL_NAMES } from "./catalog.mjs";

/** The repository of the GitHub tool calls. */
export const REPO = { owner: "octo-org", repo: "hello-world" };
/** A repository with exactly one run, whose id is the documented example's (30433642). */
export const ONE_RUN_REPO = { owner: "octo-org", repo: "one-run" };
/** The run id of ONE_RUN_REPO. */
export const ONE_RUN_ID = 30433642;
/** A Jira path answering an empty 204. */
export const EMPTY_204_PATH = "/rest/api/3/structured-e2e/empty";
/** The tools that advertise an outputSchema when the flag is on. */
export const SCHEMA_TOOLS = SCHEMA_TOOL_NAMES;
/** Smallest MCP_STRUCTURED_MAX_BYTES (the clamp's lower bound). */
export const MIN_BOUND = 16384;
/** Largest MCP_STRUCTURED_MAX_BYTES: big enough that the ~300 KB page stays inline. */
export const MAX_BOUND = 16777216;
/** The error text of every unreadable artifact. */
export const NOT_FOUND = "Artifact not found or expired";
/** A lower-case UUID v4, as artifact ids are. */
/** An artifact id: a UUID v7 (v4 for artifacts saved before ids carried their time). */
export const ARTIFACT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Adds the routes the documented examples need and the built-in fake lacks. `upstream.reset()`
 * forgets them, so the structured specs never call it.
 */
export function addStructuredRoutes(upstream) {
  upstream.route("GET", /^\/repos\/octo-org\/one-run\/actions\/runs$/, (req, res, m, { json }) => {
    json(res, 200, { total_count: 1, workflow_runs: [{ ...githubRun(upstream.url, "octo-org", "one-run", 1), id: ONE_RUN_ID }] });
  });
  upstream.route("GET", new RegExp(`^${EMPTY_204_PATH}$`), (req, res) => {
    res.writeHead(204);
    res.end();
  });
}

/** The text blocks of a result, joined. */
export function textOf(result) {
  return (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
}

/**
 * An official SDK client for `mcpUrl` as `principal` that has listed the tools (so callTool
 * validates structuredContent against each outputSchema with Ajv) and records the raw text of
 * every JSON reply in `wire` ({ method, request, body }). `mutate(message)`, when given, may
 * rewrite each parsed reply before the SDK sees it.
 */
export async function recordingClient(mcpUrl, principal = "alice", { mutate } = {}) {
  const wire = [];
  const recordingFetch = async (url, init) => {
    const res = await fetch(url, init);
    const type = res.headers.get("content-type") ?? "";
    if (!type.includes("application/json")) return res;
    const request = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    let body = await res.text();
    wire.push({ method: request?.method, request, body });
    if (mutate) body = JSON.stringify(mutate(JSON.parse(body)));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const client = new Client({ name: `structured-e2e-${principal}`, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    fetch: recordingFetch,
    requestInit: { headers: { Authorization: `Bearer ${PRINCIPALS[principal]}` } },
  });
  await client.connect(transport);
  await client.listTools();
  /** The raw reply to the last request of `method`. */
  const last = (method) => wire.findLast((w) => w.method === method)?.body;
  return { client, wire, last, close: () => client.close().catch(() => {}) };
}

/**
 * Reads artifact `artifactId` whole through artifact_read, `maxBytes` at a time, as a code-mode
 * program would; returns { bytes, pages } where pages are the parsed replies.
 */
export async function readArtifact(call, artifactId, { maxBytes = 65536, principal = "alice" } = {}) {
  const chunks = [];
  const pages = [];
  let offset = 0;
  for (;;) {
    const r = await call("artifact_read", { artifactId, offset, maxBytes }, principal);
    assert.equal(r.isError, false, `artifact_read at ${offset}: ${r.text}`);
    const page = r.result.structuredContent ?? JSON.parse(r.text);
    pages.push(page);
    assert.equal(page.artifactId, artifactId);
    assert.equal(page.offset, offset);
    assert.equal(page.encoding, "base64");
    const bytes = Buffer.from(page.data, "base64");
    assert.equal(page.nextOffset, offset + bytes.length, "nextOffset follows the bytes returned");
    chunks.push(bytes);
    if (page.eof) break;
    assert.ok(bytes.length > 0 && bytes.length <= maxBytes, `a chunk holds 1..maxBytes bytes, got ${bytes.length}`);
    offset = page.nextOffset;
  }
  const bytes = Buffer.concat(chunks);
  assert.equal(bytes.length, pages.at(-1).totalBytes, "the chunks add up to totalBytes");
  return { bytes, pages };
}

/**
 * The R2 key of artifact `artifactId` in a worker's ARTIFACTS bucket (found by listing), looked
 * for during `waitMs`: an artifact the reply does not carry is written after the reply.
 */
export async function artifactKey(mf, artifactId, { waitMs = 5000, bucket: name = "ARTIFACTS", worker } = {}) {
  const bucket = await mf.getR2Bucket(name, worker);
  const started = Date.now();
  for (;;) {
    let cursor;
    do {
      const page = await bucket.list({ cursor, include: ["customMetadata"] });
      const hit = page.objects.find((o) => o.key.endsWith(`/${artifactId}`));
      if (hit) return hit.key;
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    if (Date.now() - started >= waitMs) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Makes artifact `artifactId` look `ageMs` older than it is without waiting: rewrites the R2
 * object through Miniflare's R2 API with the same body and HTTP metadata and its `createdAt` (and
 * `expiresAt`) custom metadata moved back. The worker enforces retention from `createdAt` at read
 * time, so this is what an artifact read after `ageMs` sees. Returns the metadata before and after.
 */
export async function backdateArtifact(mf, artifactId, ageMs) {
  const bucket = await mf.getR2Bucket("ARTIFACTS");
  const key = await artifactKey(mf, artifactId);
  assert.ok(key, `artifact ${artifactId} is in the bucket`);
  const object = await bucket.get(key);
  const body = new Uint8Array(await object.arrayBuffer());
  const before = { ...object.customMetadata };
  const after = { ...before };
  for (const name of ["createdAt", "expiresAt"]) {
    assert.ok(name !== "createdAt" || /^\d+$/.test(before[name] ?? ""), `createdAt is epoch milliseconds: ${JSON.stringify(before)}`);
    if (before[name] !== undefined) after[name] = String(Number(before[name]) - ageMs);
  }
  await bucket.put(key, body, { httpMetadata: object.httpMetadata, customMetadata: after });
  return { key, before, after };
}

/** `text` with every UUID replaced, so two runs' texts compare although their artifact ids differ. */
export function maskIds(text) {
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>");
}

/** `text` with the clock-dependent values of circleci_get (fetchedAt, ageMs) replaced. */
export function maskClock(text) {
  return text
    .replace(/fetchedAt(\\?"?:\s*\\?"?)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, "fetchedAt$1<time>")
    .replace(/ageMs(\\?"?:\s*)\d+/g, "ageMs$1<n>");
}
