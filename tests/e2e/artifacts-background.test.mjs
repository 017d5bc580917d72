// The artifact write after the reply, in workerd: over an ARTIFACTS stand-in that delays each
// write by two seconds, a truncated tool call answers before its artifact is in the bucket, and an
// artifact_read sent at once waits for the write and returns the whole artifact. Over a stand-in
// whose put keeps the thread busy (as Miniflare's R2 simulator does on a smaller scale), the
// reply is not held up by the write either: the write starts only once the response is out.
// Another principal's read of that fresh id is answered at once, as "Artifact not found or
// expired", without the wait the owner's read gets.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { startStack } from "./tools-common.mjs";
import { slowBucket, standIn } from "./worker.mjs";
import { REPO, NOT_FOUND, addStructuredRoutes, readArtifact, artifactKey } from "./structured-common.mjs";

const WRITE_MS = 2000;

/** Milliseconds of CPU the busy stand-in's put spends before writing, at least. */
const BUSY_MS = 1500;
/**
 * Iterations of `spin` that take at least BUSY_MS in this process's V8: workerd's clock stands
 * still while a script computes, so the stand-in cannot time itself and is given a loop count.
 */
const spinIterations = (() => {
  const spin = (n) => { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; };
  for (let n = 1 << 20; ; n *= 2) {
    const start = performance.now();
    spin(n);
    if (performance.now() - start >= BUSY_MS) return n;
  }
})();
const busyBucket = `
class R2Bucket {
  constructor(inner) { this.inner = inner; }
  put(...args) {
    let x = 0;
    for (let i = 0; i < ${spinIterations}; i++) x = (x * 31 + i) % 1000003;
    globalThis.spun = x;
    return this.inner.put(...args);
  }
  get(...args) { return this.inner.get(...args); }
  head(...args) { return this.inner.head(...args); }
  list(...args) { return this.inner.list(...args); }
}
export default function (env) { return new R2Bucket(env.INNER); }
`;

let upstream;
let stack;
let busy;

before(async () => {
  upstream = await startFakeUpstream();
  addStructuredRoutes(upstream);
  stack = await startStack({ upstream, worker: { wrapped: { ARTIFACTS: slowBucket(WRITE_MS) } } });
  busy = await startStack({ upstream, worker: { wrapped: { ARTIFACTS: busyBucket } } });
});

after(async () => {
  await stack?.close();
  await busy?.close();
  await upstream?.close();
});

test("a truncated call answers before its artifact is written; an immediate read waits for it", async () => {
  const r = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 100, outputFormat: "json" });
  assert.equal(r.isError, false, r.text);
  const id = r.text.match(/artifact `([0-9a-f-]{36})`/)?.[1];
  assert.ok(id, `the truncated text names the artifact: ${r.text.slice(-400)}`);
  const inner = { bucket: "INNER", worker: standIn("ARTIFACTS"), waitMs: 0 };
  assert.equal(await artifactKey(stack.worker.mf, id, inner), undefined, "not yet written when the reply came");
  const { bytes } = await readArtifact(stack.call, id, { maxBytes: 1048576 });
  const saved = JSON.parse(bytes.toString("utf8"));
  assert.equal(saved.data.workflow_runs.length, 100, "the whole page, in its {data, nextPage} envelope");
  assert.ok(await artifactKey(stack.worker.mf, id, inner), "written after the reply");
});

test("another principal's read of a fresh artifact id is not found at once", async () => {
  const r = await stack.call("github_list_workflow_runs", { ...REPO, perPage: 100, outputFormat: "json" });
  const id = r.text.match(/artifact `([0-9a-f-]{36})`/)?.[1];
  assert.ok(id, `the truncated text names the artifact: ${r.text.slice(-400)}`);
  const start = performance.now();
  const bob = await stack.call("artifact_read", { artifactId: id }, "bob");
  const took = performance.now() - start;
  assert.equal(bob.isError, true, bob.text);
  assert.ok(bob.text.startsWith(NOT_FOUND), bob.text);
  assert.equal(bob.result._meta?.code, undefined, "nothing says an artifact of that id is on its way");
  // A read that waited would take the write window, 10 s.
  assert.ok(took < 3000, `bob's read took ${took.toFixed(0)} ms`);
  const { bytes } = await readArtifact(stack.call, id, { maxBytes: 1048576 });
  assert.equal(JSON.parse(bytes.toString("utf8")).data.workflow_runs.length, 100, "alice still reads it");
});

test("a write that keeps the thread busy starts only after the reply is out", async () => {
  const inner = { bucket: "INNER", worker: standIn("ARTIFACTS"), waitMs: 4 * BUSY_MS };
  const search = { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ", maxResults: "50" } };
  const idOf = (r) => r.text.match(/artifact `([0-9a-f-]{36})`/)?.[1];
  // The first call connects the client and compiles the worker; its write is waited for so that
  // it cannot overlap the timed call.
  const first = await busy.call("jira_get", search);
  assert.ok(idOf(first), `the search is truncated and names its artifact: ${first.text.slice(-300)}`);
  assert.ok(await artifactKey(busy.worker.mf, idOf(first), inner), "the first artifact is written");
  // The write waits a few ms for the reply to go, which a loaded machine can outlast now and then;
  // a write started at once holds up every reply, so the fastest of three tells the two apart.
  const times = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    const r = await busy.call("jira_get", search);
    times.push(performance.now() - start);
    assert.ok(idOf(r), r.text.slice(-300));
    assert.ok(await artifactKey(busy.worker.mf, idOf(r), inner), "written after the reply");
  }
  const fastest = Math.min(...times);
  assert.ok(fastest < BUSY_MS / 2, `the fastest reply took ${fastest.toFixed(0)} ms: the write's ${BUSY_MS} ms of CPU ran before it`);
});
