// Oversized structured results and artifact_read in workerd with the official TypeScript client.
// Three flag-on workers against one fake upstream: the largest bound (the ~300 KB page of 100
// runs stays inline: the reference value), the smallest bound 16384 (the page goes to R2), and
// the smallest bound over an ARTIFACTS bucket whose writes fail; plus a flag-off worker. The
// oversized page is read back chunk by chunk and must equal, deep and byte for byte, what
// structuredContent holds under the large bound. Also: another principal, an unknown id and an
// expired artifact all get "Artifact not found or expired" at once (expiry without waiting: the
// stored createdAt is moved back through Miniflare's R2 API), except that the caller's own id
// created less than 10 s ago may still be being written, so when it is missing the read waits out
// that window and adds that the write did not complete; and a failed R2 write still answers.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { startStack } from "./tools-common.mjs";
import {
  REPO, MIN_BOUND, MAX_BOUND, NOT_FOUND, ARTIFACT_ID, addStructuredRoutes, readArtifact, backdateArtifact,
  artifactKey, maskIds,
} from "./structured-common.mjs";

const RUNS = "github_list_workflow_runs";
const PAGE = { ...REPO, perPage: 100, outputFormat: "json" };
const RETENTION_SECONDS = 3600;

// A bucket whose every write fails and whose reads go to a real one: R2 down for writes.
const FAILING_BUCKET = `
class R2Bucket {
  constructor(inner) { this.inner = inner; }
  async put() { throw new Error("injected R2 write failure"); }
  get(...args) { return this.inner.get(...args); }
  head(...args) { return this.inner.head(...args); }
  list(...args) { return this.inner.list(...args); }
}
export default function (env) { return new R2Bucket(env.INNER); }
`;

let upstream;
let big;
let small;
let failing;
let off;
let clamped;

before(async () => {
  upstream = await startFakeUpstream();
  addStructuredRoutes(upstream);
  const on = { MCP_STRUCTURED_OUTPUT: "true" };
  [big, small, failing, off, clamped] = await Promise.all([
    startStack({ upstream, listTools: true, vars: { ...on, MCP_STRUCTURED_MAX_BYTES: String(MAX_BOUND) } }),
    startStack({ upstream, listTools: true, vars: { ...on, MCP_STRUCTURED_MAX_BYTES: String(MIN_BOUND), STREAMING_ARTIFACT_RETENTION_SECONDS: String(RETENTION_SECONDS) } }),
    startStack({ upstream, listTools: true, vars: { ...on, MCP_STRUCTURED_MAX_BYTES: String(MIN_BOUND) }, worker: { wrapped: { ARTIFACTS: FAILING_BUCKET } } }),
    startStack({ upstream, listTools: true, vars: { MCP_STRUCTURED_MAX_BYTES: String(MIN_BOUND) } }),
    // Both below their ranges: clamped to 16384 bytes and 300 seconds.
    startStack({ upstream, listTools: true, vars: { ...on, MCP_STRUCTURED_MAX_BYTES: "1", STREAMING_ARTIFACT_RETENTION_SECONDS: "1" } }),
  ]);
});

after(async () => {
  for (const s of [big, small, failing, off, clamped]) await s?.close();
  await upstream?.close();
});

/** The reference: the page's structuredContent under the largest bound. */
let reference;
async function referencePage() {
  if (!reference) {
    const r = await big.call(RUNS, PAGE);
    assert.equal(r.isError, false, r.text);
    reference = r;
  }
  return reference;
}

/** The oversized page under the smallest bound, once. */
let oversized;
async function oversizedPage() {
  if (!oversized) {
    const r = await small.call(RUNS, PAGE);
    assert.equal(r.isError, false, r.text);
    oversized = r;
  }
  return oversized;
}

test("under the largest bound the ~300 KB page is inline and whole; its truncated text names an artifact", async () => {
  const r = await referencePage();
  const sc = r.result.structuredContent;
  assert.equal(sc.incomplete, undefined, "data is the whole result");
  assert.equal(sc.data.workflow_runs.length, 100);
  assert.equal(sc.nextPage, 2);
  const bytes = Buffer.byteLength(JSON.stringify(sc));
  assert.ok(bytes > 250_000 && bytes < MAX_BOUND, `the page serializes to ${bytes} bytes`);
  assert.match(r.text, /Response Truncated/, "text truncation is independent of the structured bound");
  const named = r.text.match(/artifact `([0-9a-f-]{36})`/);
  assert.ok(named, `the truncated text names the artifact: ${r.text.slice(-600)}`);
  // One artifact per call: the text's artifact holds the structured value.
  const { bytes: saved } = await readArtifact(big.call, named[1], { maxBytes: 1048576 });
  assert.equal(saved.toString("utf8"), JSON.stringify(sc));
});

test("over the smallest bound: data null, nextPage kept, incomplete {size, bytes, limitBytes, artifactId}", async () => {
  const r = await oversizedPage();
  const ref = (await referencePage()).result.structuredContent;
  const sc = r.result.structuredContent;
  assert.deepEqual(Object.keys(sc).sort(), ["data", "incomplete", "nextPage"]);
  assert.equal(sc.data, null, "never clipped: data is null");
  assert.equal(sc.nextPage, 2, "tool metadata is kept");
  assert.deepEqual(Object.keys(sc.incomplete).sort(), ["artifactId", "bytes", "limitBytes", "reason"]);
  assert.equal(sc.incomplete.reason, "size");
  assert.equal(sc.incomplete.limitBytes, MIN_BOUND);
  assert.equal(sc.incomplete.bytes, Buffer.byteLength(JSON.stringify(ref)), "bytes is the full serialized length");
  assert.match(sc.incomplete.artifactId, ARTIFACT_ID);
  assert.ok(!JSON.stringify(sc).includes("/tmp") && !/"[^"]*\/[^"]*\.json"/.test(JSON.stringify(sc)), "no filesystem path");
  // The text is what the tool returned before, and names the same artifact.
  assert.ok(r.text.includes(sc.incomplete.artifactId), "the truncated text names the artifact id");
  assert.equal(maskIds(r.text), maskIds((await referencePage()).text), "the bound does not change the text");
  const key = await artifactKey(small.worker.mf, sc.incomplete.artifactId);
  const head = await (await small.worker.mf.getR2Bucket("ARTIFACTS")).head(key);
  assert.equal(head.httpMetadata.contentType, "application/json");
});

test("the oversized page read back through artifact_read equals the inline value, deep and byte for byte", async () => {
  const sc = (await oversizedPage()).result.structuredContent;
  const ref = (await referencePage()).result.structuredContent;
  const { bytes, pages } = await readArtifact(small.call, sc.incomplete.artifactId, { maxBytes: 65536 });
  assert.ok(pages.length >= 5, `read in ${pages.length} chunks`);
  assert.ok(pages.slice(0, -1).every((p) => !p.eof && Buffer.from(p.data, "base64").length === 65536));
  assert.equal(pages.at(-1).eof, true);
  assert.equal(bytes.length, sc.incomplete.bytes);
  assert.equal(bytes.toString("utf8"), JSON.stringify(ref), "byte for byte");
  assert.deepEqual(JSON.parse(bytes.toString("utf8")), ref, "deep");
  // artifact_read's own shape.
  const first = pages[0];
  assert.deepEqual(Object.keys(first).sort(), ["artifactId", "data", "encoding", "eof", "nextOffset", "offset", "totalBytes"]);
  assert.equal(first.totalBytes, sc.incomplete.bytes);
});

test("artifact_read: default and clamped maxBytes, reads from an offset", async () => {
  const id = (await oversizedPage()).result.structuredContent.incomplete.artifactId;
  const whole = (await readArtifact(small.call, id, { maxBytes: 1048576 })).bytes;
  const read = async (args) => {
    const r = await small.call("artifact_read", { artifactId: id, ...args });
    assert.equal(r.isError, false, r.text);
    const page = r.result.structuredContent ?? JSON.parse(r.text);
    return { page, bytes: Buffer.from(page.data, "base64") };
  };
  const dflt = await read({});
  assert.equal(dflt.page.offset, 0);
  assert.equal(dflt.bytes.length, 65536, "maxBytes defaults to 65536");
  const one = await read({ offset: 10, maxBytes: 1 });
  assert.deepEqual([one.bytes.length, one.page.nextOffset], [1, 11]);
  assert.deepEqual(one.bytes, whole.subarray(10, 11));
  const huge = await read({ maxBytes: 5_000_000 });
  assert.equal(huge.bytes.length, Math.min(1048576, whole.length), "maxBytes is clamped to 1048576");
  const tail = await read({ offset: whole.length - 7 });
  assert.deepEqual(tail.bytes, whole.subarray(whole.length - 7));
  assert.equal(tail.page.eof, true);
  assert.equal(tail.page.nextOffset, whole.length);
});

test("another principal, an unknown id and an expired artifact all get the same error text", async () => {
  const id = (await oversizedPage()).result.structuredContent.incomplete.artifactId;
  const texts = [];
  const refuse = async (args, principal = "alice") => {
    const r = await small.call("artifact_read", args, principal);
    assert.equal(r.isError, true, `${JSON.stringify(args)} as ${principal}: ${r.text.slice(0, 200)}`);
    assert.equal(r.result.structuredContent, undefined);
    texts.push(r.text);
  };
  // Only the caller's own recent id is waited for: the other worker's artifacts live in another
  // bucket, so alice's id from there is missing here and, after the write window, not found with
  // the reason added. Bob's read of alice's recent id is answered at once, like an unknown id.
  const waited = async () => {
    const otherWorkers = (await referencePage()).text.match(/artifact `([0-9a-f-]{36})`/)[1];
    const r = await small.call("artifact_read", { artifactId: otherWorkers });
    assert.equal(r.isError, true, r.text);
    assert.equal(r.result._meta?.code, "artifact_write_incomplete");
    assert.ok(r.text.startsWith(`${NOT_FOUND}: `), r.text);
    assert.match(r.text, /write did not complete/);
  };
  await Promise.all([waited(), refuse({ artifactId: id }, "bob")]);
  await refuse({ artifactId: randomUUID() });
  await refuse({ artifactId: "not-an-id" });
  // Still readable by its owner just inside retention...
  const { before, after } = await backdateArtifact(small.worker.mf, id, (RETENTION_SECONDS - 60) * 1000);
  assert.equal(Number(before.createdAt) - Number(after.createdAt), (RETENTION_SECONDS - 60) * 1000);
  const inside = await small.call("artifact_read", { artifactId: id, maxBytes: 16 });
  assert.equal(inside.isError, false, inside.text);
  // ...and gone once its createdAt lies more than the retention in the past.
  await backdateArtifact(small.worker.mf, id, 120 * 1000);
  await refuse({ artifactId: id });
  for (const text of texts) assert.equal(text, NOT_FOUND);
  assert.equal(new Set(texts).size, 1, `one text for every case: ${JSON.stringify([...new Set(texts)])}`);
});

test("R2 failing: the result still returned; reading its artifact says the write did not complete", async () => {
  const r = await failing.call(RUNS, PAGE);
  assert.equal(r.isError, false, r.text);
  const sc = r.result.structuredContent;
  assert.equal(sc.data, null);
  assert.equal(sc.nextPage, 2);
  assert.equal(sc.incomplete.reason, "size");
  assert.equal(sc.incomplete.limitBytes, MIN_BOUND);
  assert.equal(sc.incomplete.bytes, Buffer.byteLength(JSON.stringify((await referencePage()).result.structuredContent)));
  assert.match(r.text, /Response Truncated/);
  // The write runs after the reply, so the reply names the artifact before it is known to fail.
  assert.match(sc.incomplete.artifactId, ARTIFACT_ID);
  assert.ok(r.text.includes(sc.incomplete.artifactId), "the text names the same artifact");
  // A read waits out the write window (10 s), then says what happened and what to do.
  const read = await failing.call("artifact_read", { artifactId: sc.incomplete.artifactId });
  assert.equal(read.isError, true, read.text);
  assert.equal(read.result._meta?.code, "artifact_write_incomplete");
  assert.match(read.text, /write did not complete[\s\S]*repeat the original tool call/);
  const failures = failing.logs.filter((l) => l.includes("artifact_save_failed"));
  assert.ok(failures.some((l) => l.includes('"attempt":2')), `the failed write is logged and retried once: ${failures.join("\n")}`);
});

test("oversized results of circleci_get and jira_get keep their own metadata", async () => {
  const circle = await small.call("circleci_get", { path: "/project/gh/octo-org/hello-world/pipeline", jq: "[items, items, items, items, items, items, items, items]" });
  assert.equal(circle.isError, false, circle.text);
  const c = circle.result.structuredContent;
  assert.equal(c.data, null);
  assert.deepEqual(Object.keys(c.cache).sort(), ["ageMs", "fetchedAt", "hit"]);
  assert.match(c.incomplete.artifactId, ARTIFACT_ID);
  const saved = JSON.parse((await readArtifact(small.call, c.incomplete.artifactId, { maxBytes: 1048576 })).bytes.toString("utf8"));
  assert.deepEqual(saved.cache, c.cache, "the artifact holds the value with its cache metadata");
  assert.equal(saved.data.length, 8);

  const jira = await small.call("jira_get", { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "100" } });
  assert.equal(jira.isError, false, jira.text);
  const j = jira.result.structuredContent;
  assert.deepEqual(Object.keys(j).sort(), ["data", "incomplete"]);
  assert.equal(j.data, null);
  const body = JSON.parse((await readArtifact(small.call, j.incomplete.artifactId, { maxBytes: 1048576 })).bytes.toString("utf8"));
  assert.equal(body.data.issues.length, 100);
});

test("flag off: no structuredContent, the same text, and artifact_read still serves the truncated text's artifact", async () => {
  const r = await off.call(RUNS, PAGE);
  assert.equal(r.result.structuredContent, undefined);
  assert.equal(maskIds(r.text), maskIds((await oversizedPage()).text));
  const named = r.text.match(/artifact `([0-9a-f-]{36})`/);
  assert.ok(named, "the truncated text names an artifact whatever the flag");
  const { bytes } = await readArtifact(off.call, named[1], { maxBytes: 1048576 });
  assert.deepEqual(JSON.parse(bytes.toString("utf8")), (await referencePage()).result.structuredContent,
    "artifact contents do not depend on the flag");
  for (const s of [big, small, failing, off, clamped]) s.assertNoSecrets();
});

test("settings below their ranges are clamped: the bound to 16384 bytes, retention to 300 seconds", async () => {
  const r = await clamped.call(RUNS, PAGE);
  assert.equal(r.isError, false, r.text);
  const { incomplete } = r.result.structuredContent;
  assert.equal(incomplete.limitBytes, MIN_BOUND, "MCP_STRUCTURED_MAX_BYTES=1 is clamped to 16384");
  const clampLines = clamped.logs.filter((l) => l.includes("setting_clamped"));
  for (const name of ["MCP_STRUCTURED_MAX_BYTES", "STREAMING_ARTIFACT_RETENTION_SECONDS"]) {
    assert.ok(clampLines.some((l) => l.includes(name)), `a setting_clamped line names ${name}: ${clampLines}`);
  }
  // Retention 1 s is clamped to 300 s: 290 s old still reads, 310 s old does not.
  await backdateArtifact(clamped.worker.mf, incomplete.artifactId, 290 * 1000);
  const inside = await clamped.call("artifact_read", { artifactId: incomplete.artifactId, maxBytes: 8 });
  assert.equal(inside.isError, false, inside.text);
  await backdateArtifact(clamped.worker.mf, incomplete.artifactId, 20 * 1000);
  const expired = await clamped.call("artifact_read", { artifactId: incomplete.artifactId, maxBytes: 8 });
  assert.equal(expired.isError, true);
  assert.ok(expired.text.includes(NOT_FOUND), expired.text);
});
