// Sign-in against GitHub Enterprise Server, end to end in workerd: the fake upstream plays the
// Enterprise host (its REST API only under /api/v3, its sign-in pages at the root), the worker has
// `MCP_OAUTH_GITHUB_URL = https://HOST` and `GITHUB_API_URL = https://HOST/api/v3`, as
// docs/connect.md tells an administrator to set them. The person signs in at the host, the worker
// asks the host's API who they are and which organisations they belong to, and a tool call the
// policy runs as the signed-in person carries that person's token to the host's API, never the
// deployment's. A GitHub whose web and API hosts differ is refused at start.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { callAs, githubSignInVars, signInForTokens } from "./oauth-browser.mjs";

const DEPLOYMENT_TOKEN = "ghp_deployment_token_0123456789";
const upstream = await startFakeUpstream({ enterprise: true });
const API = `${upstream.url}/api/v3`;
const POLICY = {
  rules: [
    { id: "acme-as-themselves", match: { groups: ["github:acme"], tools: ["github_*"] }, effect: "allow",
      identities: { github: "signed-in-user" } },
  ],
};
const worker = await startWorker({
  kvNamespaces: ["OAUTH"],
  vars: {
    ...githubSignInVars(upstream),
    GITHUB_API_URL: API,
    GITHUB_TOKEN: DEPLOYMENT_TOKEN,
    MCP_OAUTH_ALLOWED_GROUPS: "acme",
    MCP_POLICY: JSON.stringify(POLICY),
  },
});
await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
after(async () => { await worker.close(); await upstream.close(); });

test("a person signs in at the Enterprise host and reads its API as themselves", async () => {
  Object.assign(upstream.idp, { login: "octocat", ids: { octocat: 583231 }, orgs: ["acme"], expiresIn: null });
  upstream.reset();
  const { tokens } = await signInForTokens(worker.url, upstream.url);
  assert.ok(tokens.access_token);

  // The sign-in's legs: the authorization page and the code's exchange at the host's root, who
  // the person is and their organisations from its API.
  const paths = upstream.requests.map((r) => `${r.method} ${r.path}`);
  for (const leg of ["GET /login/oauth/authorize", "POST /login/oauth/access_token", "GET /api/v3/user",
    "GET /api/v3/user/orgs"]) {
    assert.ok(paths.includes(leg), `${leg} in ${paths.join(", ")}`);
  }
  const issued = [...upstream.idp.tokens.keys()];
  assert.equal(issued.length > 0, true);

  upstream.reset();
  const result = await callAs(worker, tokens.access_token, "github_list_workflow_runs",
    { owner: "octo-org", repo: "hello-world", perPage: 1, outputFormat: "json" });
  assert.equal(result.isError, undefined, JSON.stringify(result).slice(0, 400));
  const runs = upstream.matching("GET", /^\/api\/v3\/repos\/octo-org\/hello-world\/actions\/runs$/);
  assert.equal(runs.length, 1, upstream.requests.map((r) => r.path).join(", "));
  const sent = runs[0].headers.authorization;
  assert.ok(issued.some((t) => sent === `Bearer ${t}` || sent === `token ${t}`), `the person's token, not ${sent}`);
  assert.ok(!sent.includes(DEPLOYMENT_TOKEN));
});

test("a web host and an API host that are not one GitHub do not start", async () => {
  const other = await startWorker({
    kvNamespaces: ["OAUTH"],
    vars: { ...githubSignInVars(upstream), MCP_OAUTH_ISSUER: "http://127.0.0.1:1", GITHUB_API_URL: "https://ghe.example.com/api/v3" },
  });
  try {
    const r = await fetch(other.mcpUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    const text = await r.text();
    assert.equal(r.status, 500, text);
    assert.match(text, /MCP_OAUTH_GITHUB_URL/);
    assert.match(text, /not one GitHub/);
  } finally {
    await other.close();
  }
});
