// The artifact write after the reply, in workerd: over an ARTIFACTS stand-in that delays each
// write by two seconds, a truncated tool call answers before its artifact is in the bucket, and an
// artifact_read sent at once waits for the write and returns the whole artifact.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { startStack } from "./tools-common.mjs";
import { slowBucket, standIn } from "./worker.mjs";
import { REPO, addStructuredRoutes, readArtifact, artifactKey } from "./structured-common.mjs";

const WRITE_MS = 2000;

let upstream;
let stack;

before(async () => {
  upstream = await startFakeUpstream();
  addStructuredRoutes(upstream);
  stack = await startStack({ upstream, worker: { wrapped: { ARTIFACTS: slowBucket(WRITE_MS) } } });
});

after(async () => {
  await stack?.close();
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
