// An upstream that reflects the request's headers hands no credential back, in workerd: the
// fake upstream answers with a 400 error body and with a 200 body (long enough to be cut and kept
// as an artifact) that repeat every request header, and with the credential in a response header.
// For Jira (Basic), GitHub (Bearer) and CircleCI (Circle-Token), neither the tool result (text and
// structured content), the error, the artifact (read back and as R2 holds it) nor a line the
// worker logs carries the credential in any form; the echo itself does reach the caller, scrubbed.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack, CREDENTIALS, basic } from "./tools-common.mjs";
import { eventually } from "./worker.mjs";

const MARKER = "[redacted]";
const CASES = [
  { name: "Jira (Basic)", tool: "jira_get", args: { path: "/rest/api/3/myself" }, path: /\/rest\/api\/3\/myself$/ },
  { name: "GitHub (Bearer)", tool: "github_list_workflow_runs", args: { owner: "octo-org", repo: "hello-world" }, path: /\/actions\/runs$/ },
  { name: "CircleCI (Circle-Token)", tool: "circleci_get", args: { path: "/me", fresh: true }, path: /\/api\/v2\/me$/ },
];

/** Every form an echo could show a credential in: the header values, base64, user:token, tokens. */
function credentialForms() {
  const c = CREDENTIALS;
  const jira = basic(c.ATLASSIAN_USER_EMAIL, c.ATLASSIAN_API_TOKEN);
  return [
    jira, jira.slice("Basic ".length), `${c.ATLASSIAN_USER_EMAIL}:${c.ATLASSIAN_API_TOKEN}`, c.ATLASSIAN_API_TOKEN,
    `Bearer ${c.GITHUB_TOKEN}`, c.GITHUB_TOKEN, c.CIRCLECI_TOKEN,
  ];
}

function assertClean(text, where) {
  for (const form of credentialForms()) {
    assert.ok(!text.includes(form), `${where}: a credential (${form.slice(0, 10)}...) in ${text.slice(0, 300)}`);
  }
}

let stack;
before(async () => {
  stack = await startStack({ vars: { MCP_TEXT_MAX_CHARS: "2000" } });
});
beforeEach(() => stack.upstream.reset());
after(async () => {
  await stack?.close();
});

for (const c of CASES) {
  test(`${c.name}: a 400 that echoes the request headers carries no credential to the caller or the log`, async () => {
    const fault = stack.upstream.fault({ path: c.path, status: 400, echoHeaders: true });
    const r = await stack.call(c.tool, c.args);
    assert.equal(fault.hits, 1, "the echoing upstream answered");
    assert.equal(r.isError, true, r.text);
    assert.ok(r.text.includes(MARKER), `the echo reaches the caller, scrubbed: ${r.text.slice(0, 300)}`);
    assertClean(JSON.stringify(r.result), "the error result");
    assertClean(stack.logs.join("\n"), "the log");
    stack.assertNoSecrets();
  });

  test(`${c.name}: a 200 that echoes the request headers carries none in the result, its structured content or its artifact`, async () => {
    const fault = stack.upstream.fault({ path: c.path, status: 200, echoHeaders: true, padding: 6000 });
    for (const outputFormat of [undefined, "json"]) {
      const r = await stack.call(c.tool, { ...c.args, ...(outputFormat ? { outputFormat } : {}) });
      assert.equal(r.isError, false, r.text);
      assert.ok(JSON.stringify(r.result).includes(MARKER), `the echo reaches the caller, scrubbed: ${r.text.slice(0, 300)}`);
      assertClean(JSON.stringify(r.result), `the result (${outputFormat ?? "default"})`);
      const id = /[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/.exec(JSON.stringify(r.result))?.[0];
      assert.ok(id, `the cut result names its artifact: ${r.text.slice(0, 300)}`);
      const read = await stack.call("artifact_read", { artifactId: id });
      assert.equal(read.isError, false, read.text);
      assertClean(JSON.stringify(read.result), "the artifact read back");
    }
    assert.equal(fault.hits, 2);
    const bucket = await stack.worker.mf.getR2Bucket("ARTIFACTS");
    const { objects } = await eventually(async () => {
      const listed = await bucket.list();
      return listed.objects.length > 0 && listed;
    }, "the artifacts are stored");
    for (const o of objects) assertClean(await (await bucket.get(o.key)).text(), `the stored artifact ${o.key}`);
    assertClean(stack.logs.join("\n"), "the log");
    stack.assertNoSecrets();
  });
}
