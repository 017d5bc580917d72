// URLs a client, a vendor or a document supplies, read as `fetch` reads them (decision 0077), in
// workerd: a client metadata document on a host that only looks public is refused before anything
// is sent (every request leaving the worker is recorded), and a log URL whose authority a WHATWG
// parser ends at a backslash is checked on the host it is fetched from, for GitHub's log redirect
// and CircleCI's step output URLs alike.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { startWorker } from "./worker.mjs";
import { startStack } from "./tools-common.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { LOGS_REPO, CIRCLE_JOB } from "./fake/logs.mjs";

let signin;
let stack;
const outbound = [];
before(async () => {
  // A deployed issuer: documents may then come from public hosts only.
  signin = await startWorker({
    kvNamespaces: ["OAUTH"],
    outbound,
    vars: {
      MCP_OAUTH_ISSUER: "https://mcp.example.test",
      MCP_OAUTH_ENCRYPTION_KEY: "e2e-oauth-key-0123456789abcdef0123456789",
      MCP_OAUTH_PROVIDER: "github",
      MCP_OAUTH_CLIENT_ID: "Iv1.e2e",
      MCP_OAUTH_CLIENT_SECRET: "e2e-client-secret",
      MCP_OAUTH_ALLOWED_USERS: "octocat",
    },
  });
  const upstream = await startFakeUpstream();
  stack = await startStack({
    upstream,
    vars: { LOG_REDIRECT_HOSTS: `*.blob.core.windows.net,${upstream.logHosts.blobs.authority}` },
  });
});
after(async () => {
  await signin?.close();
  await stack?.close();
  await stack?.upstream.close();
});

function authorize(clientId) {
  const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url");
  const params = new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: "https://app.example/cb",
    code_challenge: challenge, code_challenge_method: "S256", state: "st",
  });
  return fetch(`${signin.url}/oauth/authorize?${params}`, { redirect: "manual" });
}

test("a client metadata document on a host that only looks public is refused without a request", async () => {
  // The control: a public host is fetched (and fails, there being no network), so the recorder sees
  // what leaves the worker.
  const control = await authorize("https://client.example.test/cimd.json");
  assert.notEqual(control.status, 302);
  assert.ok(outbound.some((r) => r.url === "https://client.example.test/cimd.json"), JSON.stringify(outbound));
  for (const clientId of [
    "https://169.254.169.254./latest/meta-data",
    "https://%31%32%37.0.0.1/cimd.json",
    "https://\uff11\uff12\uff17.0.0.1/cimd.json",
    "https://localhost./cimd.json",
    "https://metadata.google.internal./computeMetadata/v1/",
    "https://0x7f.1/cimd.json",
    "https://100.64.0.1/cimd.json",
    "https://[::ffff:169.254.169.254]/cimd.json",
    "https://[fd00::1]/cimd.json",
    "https://client.example.test\\.evil/cimd.json",
    "https://CLIENT.example.test/cimd.json",
    "https://user@client.example.test/cimd.json",
    "http://client.example.test/cimd.json",
  ]) {
    outbound.length = 0;
    const r = await authorize(clientId);
    const body = await r.text();
    assert.equal(r.status, 400, `${clientId}: ${body.slice(0, 300)}`);
    assert.match(body, /client_id URL refused/, clientId);
    assert.deepEqual(outbound, [], `${clientId} was fetched`);
  }
});

test("a log redirect is checked on the host it is fetched from: a backslash ends the authority", async () => {
  const { elsewhere, blobs } = stack.upstream.logHosts;
  const port = elsewhere.authority.split(":")[1];
  const signed = "job-logs/505?sv=2025-01-05&sp=r&sig=FAKE%2BSIGNATURE%3D";
  for (const [location, host] of [
    // The text's last `:port` and its suffix match `*.blob.core.windows.net` over http as loopback;
    // fetch reads host 127.0.0.3 on that port.
    [`http://127.0.0.3:${port}\\.x.blob.core.windows.net:${port}/${signed}`, `127.0.0.3:${port}`],
    [`https://evil.example\\.blob.core.windows.net/${signed}`, "evil.example"],
  ]) {
    stack.upstream.route("GET", /^\/repos\/octo-org\/logs\/actions\/jobs\/505\/logs$/, (req, res) => {
      res.writeHead(302, { Location: location });
      res.end();
    });
    const [j] = (await stack.callJson("github_get_job_logs", { ...LOGS_REPO, jobId: 505 })).jobs;
    assert.ok(j.logError?.includes(`on ${host}, which is not in LOG_REDIRECT_HOSTS; nothing was sent there`), JSON.stringify(j).slice(0, 600));
    assert.doesNotMatch(j.logError, /SIGNATURE|sig=/);
    assert.equal(j.logArtifactId, null);
  }
  assert.equal(elsewhere.requests.length, 0, "the unlisted host was fetched");
  // The listed host still serves a log through the same check.
  assert.ok(blobs.authority.startsWith("127.0.0.2:"));
  const [ok] = (await stack.callJson("github_get_job_logs", { ...LOGS_REPO, jobId: 501 })).jobs;
  assert.equal(ok.logError ?? null, null, ok.logError);
});

test("a CircleCI step output URL is checked on the host it is fetched from", async () => {
  const { elsewhere } = stack.upstream.logHosts;
  const port = elsewhere.authority.split(":")[1];
  const detailsPath = /^\/api\/v1\.1\/project\/gh\/octo-org\/logs\/601$/;
  const details = await (await fetch(`${stack.upstream.url}/api/v1.1/project/gh/octo-org/logs/601`)).json();
  for (const step of details.steps) {
    for (const action of step.actions) {
      action.output_url = `http://127.0.0.3:${port}\\.x.blob.core.windows.net:${port}/out?X-Amz-Signature=FAKE`;
    }
  }
  stack.upstream.route("GET", detailsPath, (req, res, m, { json }) => json(res, 200, details));
  const before = elsewhere.requests.length;
  const result = await stack.callJson("circleci_get_job_logs", { projectSlug: CIRCLE_JOB.slug, jobNumber: CIRCLE_JOB.number });
  const text = JSON.stringify(result);
  assert.ok(text.includes(`on 127.0.0.3:${port}, which is not in LOG_REDIRECT_HOSTS`), text.slice(0, 600));
  assert.doesNotMatch(text, /X-Amz-Signature|FAKE/);
  assert.equal(elsewhere.requests.length, before, "the unlisted host was fetched");
});
