// The Atlassian reference goldens (tests/golden/atlassian/*.json, docs/parity.md) replayed through
// the built worker in workerd: the fake upstream answers each case with its recorded status,
// reason phrase, headers and body over real HTTP, and the tool's text must equal the reference
// server's byte for byte, apart from the line naming the reference's raw-response file. This
// covers what the host parity test cannot: the Workers fetch adapter (reason phrases, empty and
// 204 bodies, content types) between the upstream and the renderer.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./worker.mjs";
import { startStack } from "./tools-common.mjs";

const GOLDEN_DIR = path.join(ROOT, "tests/golden/atlassian");
// Where the reference names a local file, we name the artifact holding the full value.
const SAVED_AT = /^- The full response is saved as artifact `[0-9a-f-]{36}`: read it with the `artifact_read` tool$/;

/**
 * Cases whose recorded response cannot be sent over a real connection as recorded: a
 * Content-Length header that disagrees with the body (HTTP framing would break, so the reference's
 * header-only size check is covered by the host parity test instead).
 */
function replayable(entry) {
  const headers = entry.upstream.headers ?? {};
  const length = Object.entries(headers).find(([k]) => k.toLowerCase() === "content-length")?.[1];
  return length === undefined || Number(length) === Buffer.byteLength(entry.upstream.body ?? "");
}

/**
 * Differences taken by decision, with the text ours must have instead. workers-rs drops the
 * upstream's `statusText`, so the adapter supplies the standard reason phrase and an empty one
 * cannot reach the text (docs/decisions/0011-upstream-client-and-atlassian-errors.md).
 */
const DECIDED = {
  "jira/error-503-empty-status-text": (text) => text.replace("Detail: 503 ", "Detail: 503 Service Unavailable"),
};

let stack;
before(async () => {
  stack = await startStack({ vars: { ATLASSIAN_SITE_NAME: "parity-site" } });
});
after(() => stack?.close());

for (const vendor of ["jira", "confluence", "bitbucket"]) {
  const entries = JSON.parse(readFileSync(path.join(GOLDEN_DIR, `${vendor}.json`), "utf8"));
  test(`${vendor}: every golden case gives the reference text through workerd`, async (t) => {
    let compared = 0;
    const failures = [];
    for (const entry of entries) {
      if (!replayable(entry)) {
        t.diagnostic(`${entry.name}: skipped (recorded Content-Length does not match the body)`);
        continue;
      }
      stack.upstream.reset();
      const recorded = new URL(entry.request.url);
      stack.upstream.fault({
        path: recorded.pathname, method: entry.request.method, times: 1, exactHeaders: true,
        status: entry.upstream.status, statusText: entry.upstream.statusText, headers: entry.upstream.headers ?? {},
        body: entry.upstream.body,
      });
      const r = await stack.call(entry.tool, entry.args);
      const problems = [];
      const sent = stack.upstream.requests;
      if (sent.length !== 1) {
        problems.push(`expected one upstream request, got ${sent.length}`);
      } else {
        const [req] = sent;
        if (req.method !== entry.request.method) problems.push(`method ${req.method} != ${entry.request.method}`);
        if (req.url !== recorded.pathname + recorded.search) problems.push(`url ${req.url} != ${recorded.pathname + recorded.search}`);
        if (req.body !== (entry.request.body ?? "")) problems.push(`body ${req.body} != ${entry.request.body}`);
        for (const [name, value] of Object.entries(entry.request.headers)) {
          const got = req.headers[name.toLowerCase()];
          const ok = name.toLowerCase() === "authorization" ? /^Basic /.test(got ?? "") : got === value;
          if (!ok) problems.push(`header ${name}: ${got} != ${value}`);
        }
      }
      const decided = DECIDED[`${vendor}/${entry.name}`];
      const expected = decided ? decided(entry.result.text) : entry.result.text;
      if (decided) assert.notEqual(expected, entry.result.text, `${entry.name}: the decided difference still applies`);
      const want = expected.split("\n").filter((_, i) => i !== entry.result.savedAtLine);
      // The first block is the reference's text; a 429 (or a 503 with Retry-After) adds a retry
      // sentence as a second block
      // (decision 0011), which the reference cannot say without changing its text.
      const blocks = r.result.content ?? [];
      const retryAfter = Object.keys(entry.upstream.headers ?? {}).some((k) => k.toLowerCase() === "retry-after");
      const status = entry.upstream.status;
      const wantBlocks = status === 429 || (status === 503 && retryAfter) ? 2 : 1;
      if (blocks.length !== wantBlocks) problems.push(`${blocks.length} content blocks, want ${wantBlocks}`);
      if (wantBlocks === 2 && !/^(Retry after \d+ seconds \(at [0-9T:.-]+Z\)\.|The API gave no retry time)/.test(blocks[1]?.text ?? "")) {
        problems.push(`second block is not a retry hint: ${JSON.stringify(blocks[1]?.text)}`);
      }
      const got = (blocks[0]?.text ?? "").split("\n").filter((line) => !SAVED_AT.test(line));
      if (got.join("\n") !== want.join("\n")) {
        const i = want.findIndex((line, n) => got[n] !== line);
        problems.push(`text differs at line ${i}:\n    want ${JSON.stringify(want[i])}\n    got  ${JSON.stringify(got[i])}`);
      }
      if (r.isError !== entry.result.errorResult) problems.push(`isError ${r.isError} != ${entry.result.errorResult}`);
      if (problems.length) failures.push(`${entry.name} (${entry.tool}):\n  ${problems.join("\n  ")}`);
      compared++;
    }
    assert.ok(compared >= entries.length - 1, `${compared} of ${entries.length} cases compared`);
    assert.equal(failures.length, 0, `${failures.length} of ${compared} cases differ:\n${failures.join("\n")}`);
  });
}

test("no credential appears in any result or log line", () => {
  assert.ok(stack.assertNoSecrets().results > 100);
});
