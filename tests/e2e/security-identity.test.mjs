// Who a signed-in person is, end to end in workerd against the fake identity provider
// (tests/e2e/fake/idp.mjs), with tests/e2e/oauth-browser.mjs as the browser:
// - the principal is a stable verified identifier: a GitHub user's numeric id (`github~583231`),
//   never the login, which is renamed and re-registered; with OpenID Connect `oidc~` and a hash of
//   the provider and `sub`, and an e-mail address counts (for the allow-list and the policy) only
//   when the provider verified it;
// - groups from the identity provider live in their own namespace (`github:acme`): a GitHub
//   organisation called like a policy group does not join it;
// - every refresh asks the identity provider again: removed from the organisation that admitted
//   them, a person's refresh is refused and their grant revoked.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { callAs, signInForTokens } from "./oauth-browser.mjs";

const STATIC_TOKEN = "e2e-identity-static-token-0123456789";
const upstream = await startFakeUpstream();

const OAUTH = {
  MCP_AUTH_TOKENS: JSON.stringify({ e2e: STATIC_TOKEN }),
  MCP_OAUTH_ISSUER: "http://127.0.0.1:1",
  MCP_OAUTH_ENCRYPTION_KEY: "e2e-oauth-key-0123456789abcdef0123456789",
  MCP_OAUTH_CLIENT_ID: "Iv1.e2e",
  MCP_OAUTH_CLIENT_SECRET: "e2e-client-secret",
  GITHUB_API_URL: upstream.url,
  GITHUB_TOKEN: "ghp_deployment_token_0123456789",
};

/** A worker signing people in with `vars` on top of OAUTH; its issuer is the port it got. */
async function oauthWorker(vars) {
  const worker = await startWorker({ kvNamespaces: ["OAUTH"], vars: { ...OAUTH, ...vars } });
  await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
  return worker;
}

const GITHUB_POLICY = {
  // A document group with members: exactly them. A GitHub organisation of the same name is
  // another group, `github:platform`.
  groups: { platform: ["alice"] },
  rules: [
    { id: "platform-runs", match: { groups: ["platform"], tools: ["github_list_workflow_runs"] }, effect: "allow" },
    { id: "acme-jobs", match: { groups: ["github:acme"], tools: ["github_list_workflow_jobs"] }, effect: "allow" },
    { id: "octocat-by-login", match: { principals: ["octocat"], tools: ["github_list_workflow_runs"] }, effect: "allow" },
  ],
};
const github = await oauthWorker({
  MCP_OAUTH_PROVIDER: "github",
  MCP_OAUTH_GITHUB_URL: upstream.url,
  MCP_OAUTH_ALLOWED_GROUPS: "acme,platform",
  MCP_POLICY: JSON.stringify(GITHUB_POLICY),
});

// The same document group, in a policy without namespaced groups (as one written before them).
const plain = await oauthWorker({
  MCP_OAUTH_PROVIDER: "github",
  MCP_OAUTH_GITHUB_URL: upstream.url,
  MCP_OAUTH_ALLOWED_GROUPS: "acme,platform",
  MCP_POLICY: JSON.stringify({ groups: GITHUB_POLICY.groups, rules: [GITHUB_POLICY.rules[0]] }),
});

const OIDC_POLICY = {
  rules: [
    { id: "no-logs", match: { tools: ["github_get_job_logs"] }, effect: "deny" },
    { id: "eve-by-email", match: { principals: ["eve@example.com"] }, effect: "allow" },
  ],
};
const oidc = await oauthWorker({
  MCP_OAUTH_PROVIDER: "oidc",
  MCP_OAUTH_OIDC_AUTHORIZATION_URL: `${upstream.url}/login/oauth/authorize`,
  MCP_OAUTH_OIDC_TOKEN_URL: `${upstream.url}/login/oauth/access_token`,
  MCP_OAUTH_OIDC_USERINFO_URL: `${upstream.url}/oidc/userinfo`,
  MCP_OAUTH_ALLOWED_USERS: "eve@example.com",
  MCP_POLICY: JSON.stringify(OIDC_POLICY),
});
after(async () => { await github.close(); await plain.close(); await oidc.close(); await upstream.close(); });

/** Sets who the fake provider signs in next, and what it says about them. */
function person({ login = "octocat", id = 583231, orgs = ["acme"], claims = { sub: "user-1" } } = {}) {
  Object.assign(upstream.idp, { login, ids: { [login]: id }, orgs, claims, expiresIn: null });
}

const RUNS = { owner: "octo-org", repo: "hello-world", perPage: 1 };
const JOBS = { owner: "octo-org", repo: "hello-world", runId: 30433642 };
// No rule allows the job logs to a signed-in person: their refusal names the principal.
const LOGS = { owner: "octo-org", repo: "hello-world", jobId: 1 };

/** The refusal's `_meta.decision` (failing when the call was not refused by the policy). */
function refusal(result) {
  assert.equal(result.isError, true, JSON.stringify(result).slice(0, 400));
  assert.equal(result._meta?.code, "policy_denied", JSON.stringify(result._meta));
  return result._meta.decision;
}

/** POSTs a form to the token endpoint; returns [status, body]. */
async function tokenRequest(worker, form) {
  const r = await fetch(`${worker.url}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
  return [r.status, await r.json()];
}

const refresh = (worker, clientId, refreshToken) =>
  tokenRequest(worker, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });

/** The sign-in's refusal: the error the worker sent back to the client. */
async function refusedSignIn(worker) {
  const e = await signInForTokens(worker.url, upstream.url).then(
    (t) => assert.fail(`signed in: ${JSON.stringify(t.tokens).slice(0, 80)}`),
    (e) => e,
  );
  const m = /sign-in refused: (\S+)/.exec(e.message);
  assert.ok(m, e.message);
  return new URL(m[1]).searchParams;
}

test("a GitHub principal is the numeric user id, and the login matches as a verified alias", async () => {
  person({ login: "octocat", id: 583231, orgs: ["acme"] });
  const { tokens } = await signInForTokens(github.url, upstream.url);
  const denied = refusal(await callAs(github, tokens.access_token, "github_get_job_logs", LOGS));
  assert.equal(denied.principal, "github~583231");
  // The policy names the login; the person GitHub reports under that login matches.
  const byLogin = await callAs(github, tokens.access_token, "github_list_workflow_runs", RUNS);
  assert.notEqual(byLogin._meta?.code, "policy_denied", JSON.stringify(byLogin).slice(0, 400));

  // The login renamed and re-registered by someone else: another principal, so nothing kept
  // under the first person's name (artifacts, cache, approvals) is theirs.
  person({ login: "octocat", id: 999001, orgs: ["acme"] });
  const { tokens: other } = await signInForTokens(github.url, upstream.url);
  assert.equal(refusal(await callAs(github, other.access_token, "github_get_job_logs", LOGS)).principal,
    "github~999001");
});

test("a GitHub organisation named like a policy group does not join it; github:acme names the organisation", async () => {
  person({ login: "mallory", id: 31337, orgs: ["platform", "acme"] });
  const { tokens: first } = await signInForTokens(plain.url, upstream.url);
  const denied = refusal(await callAs(plain, first.access_token, "github_list_workflow_runs", RUNS));
  assert.equal(denied.rule, null, "no rule matched: the document's platform group is alice only");
  const { tokens } = await signInForTokens(github.url, upstream.url);
  assert.equal(refusal(await callAs(github, tokens.access_token, "github_list_workflow_runs", RUNS)).rule, null);
  const jobs = await callAs(github, tokens.access_token, "github_list_workflow_jobs", JOBS);
  assert.notEqual(jobs._meta?.code, "policy_denied", JSON.stringify(jobs).slice(0, 400));
});

test("removed from the organisation that admitted them, a person's refresh is refused and the grant revoked", async () => {
  person({ login: "leaver", id: 4242, orgs: ["acme"] });
  const { clientId, tokens } = await signInForTokens(github.url, upstream.url);
  // Still in the organisation: the refresh asks GitHub again and goes through.
  const [ok, renewed] = await refresh(github, clientId, tokens.refresh_token);
  assert.equal(ok, 200, JSON.stringify(renewed));

  upstream.idp.orgs = [];
  const [status, body] = await refresh(github, clientId, renewed.refresh_token);
  assert.equal(status, 400, JSON.stringify(body));
  assert.equal(body.error, "invalid_grant");
  assert.match(body.error_description, /not allowed to sign in.*revoked/);

  const mcp = await fetch(github.mcpUrl, {
    method: "POST",
    headers: { Authorization: `Bearer ${renewed.access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(mcp.status, 401, "the access token of the revoked grant still works");
  const [again, after] = await refresh(github, clientId, renewed.refresh_token);
  assert.equal(again, 400);
  assert.equal(after.error, "invalid_grant");
});

test("a person whose GitHub token was revoked at GitHub cannot refresh", async () => {
  person({ login: "revoked", id: 5151, orgs: ["acme"] });
  const { clientId, tokens } = await signInForTokens(github.url, upstream.url);
  for (const [token, who] of upstream.idp.tokens) if (who.login === "revoked") upstream.idp.tokens.delete(token);
  const [status, body] = await refresh(github, clientId, tokens.refresh_token);
  assert.equal(status, 400, JSON.stringify(body));
  assert.equal(body.error, "invalid_grant");
  assert.match(body.error_description, /no longer vouches for you/);
});

test("an OpenID Connect e-mail address counts only when the provider verified it", async () => {
  person({ claims: { sub: "eve-1", email: "eve@example.com", email_verified: false } });
  const refused = await refusedSignIn(oidc);
  assert.equal(refused.get("error"), "access_denied");
  assert.equal(refused.get("code"), null);

  person({ claims: { sub: "eve-1", email: "Eve@Example.com", email_verified: true } });
  const { clientId, tokens } = await signInForTokens(oidc.url, upstream.url);
  const denied = refusal(await callAs(oidc, tokens.access_token, "github_get_job_logs", LOGS));
  assert.match(denied.principal, /^oidc~[0-9a-f]{32}$/);
  // Allowed by the rule naming the verified e-mail address (in any case).
  const allowed = await callAs(oidc, tokens.access_token, "github_list_workflow_runs", RUNS);
  assert.notEqual(allowed._meta?.code, "policy_denied", JSON.stringify(allowed).slice(0, 400));

  // The provider stops vouching for the address: the next refresh is refused.
  upstream.idp.claims = { sub: "eve-1", email: "eve@example.com", email_verified: false };
  const [status, body] = await refresh(oidc, clientId, tokens.refresh_token);
  assert.equal(status, 400, JSON.stringify(body));
  assert.equal(body.error, "invalid_grant");
});

test("GitHub down at a refresh refuses it for now and revokes nothing", async () => {
  person({ login: "steady", id: 6161, orgs: ["acme"] });
  const { clientId, tokens } = await signInForTokens(github.url, upstream.url);
  upstream.fault({ path: /^\/user$/, status: 503, times: 1 });
  const [status, body] = await refresh(github, clientId, tokens.refresh_token);
  assert.equal(status, 500, JSON.stringify(body));
  assert.equal(body.error, "server_error");
  // The same refresh token still redeems once GitHub answers again.
  const [ok, renewed] = await refresh(github, clientId, tokens.refresh_token);
  assert.equal(ok, 200, JSON.stringify(renewed));
});
