// OAuth end to end in workerd with the official TypeScript SDK client: its OAuthClientProvider
// discovers the worker from the 401, registers (dynamic registration; a Client ID Metadata
// Document the fake upstream serves is signed in with by hand), signs in with PKCE through the fake upstream's GitHub-shaped
// identity provider (tests/e2e/oauth-browser.mjs plays the browser), receives tokens, refreshes
// them when the access token is refused, and calls tools as the signed-in person: a policy rule
// chooses `signed-in-user`, so the GitHub call carries the person's own token from the sign-in,
// not the deployment's GITHUB_TOKEN. The sign-in goes on to the fake Atlassian's consent (an
// Atlassian OAuth 2.0 app is configured), and Jira calls carry the person's Atlassian token to the
// fake API gateway, not the deployment's pair to the site. A header client on the same worker
// never sees OAuth.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { startWorker } from "./worker.mjs";
import { toolsetNames } from "./catalog.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { atlassianSignInVars, githubSignInVars, signInForTokens, signInHeadless } from "./oauth-browser.mjs";

const STATIC_TOKEN = "e2e-oauth-static-token-0123456789";
const DEPLOYMENT_GITHUB_TOKEN = "ghp_deployment_token_0123456789";
const DEPLOYMENT_ATLASSIAN_TOKEN = "atlassian_deployment_token_0123456789";
const UPSTREAM_META = "mcp-devtools/upstream";
const REDIRECT = "http://127.0.0.1:9/callback";

const upstream = await startFakeUpstream();
const POLICY = {
  rules: [
    // Members of the GitHub organisation `acme` read CI as themselves: a provider group is named
    // in its namespace, without a definition.
    { id: "acme-as-themselves", match: { groups: ["github:acme"], tools: ["github_*"] }, effect: "allow",
      identities: { github: "signed-in-user" } },
    { id: "acme-atlassian-as-themselves", match: { groups: ["github:acme"], tools: ["jira_*", "conf_*"] }, effect: "allow",
      identities: { jira: "signed-in-user", confluence: "signed-in-user" } },
    // The static-token principal keeps the deployment's credential.
    { id: "e2e-as-deployment", match: { principals: ["e2e"] }, effect: "allow" },
  ],
};
const worker = await startWorker({
  kvNamespaces: ["OAUTH"],
  vars: {
    ...githubSignInVars(upstream),
    ...atlassianSignInVars(upstream),
    MCP_AUTH_TOKENS: JSON.stringify({ e2e: STATIC_TOKEN }),
    MCP_OAUTH_ALLOWED_GROUPS: "acme",
    GITHUB_TOKEN: DEPLOYMENT_GITHUB_TOKEN,
    MCP_POLICY: JSON.stringify(POLICY),
    ATLASSIAN_USER_EMAIL: "deployment@e2e.test",
    ATLASSIAN_API_TOKEN: DEPLOYMENT_ATLASSIAN_TOKEN,
  },
});
// The issuer is the origin the client reaches, known once the runtime picked the port.
await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
after(async () => { await worker.close(); await upstream.close(); });

/** Serves a client id metadata document on loopback, which a local issuer may fetch. */
function serveClientMetadata() {
  upstream.route("GET", /^\/client-metadata\.json$/, (req, res, m, { json }) => json(res, 200, {
    client_id: `${upstream.url}/client-metadata.json`,
    client_name: "e2e SDK client (metadata document)",
    redirect_uris: [REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  }));
}

/** An OAuthClientProvider kept in memory, whose "browser" is signInHeadless. */
class HeadlessProvider {
  constructor() {
    this.saved = {};
    this.returned = [];
    this.saves = 0;
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: "e2e SDK client", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return this.saved.client; }
  saveClientInformation(info) { this.saved.client = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; this.saves++; }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  codeVerifier() { return this.saved.verifier; }
  async redirectToAuthorization(url) {
    this.authorizationUrl = url;
    this.returned.push(new URL(await signInHeadless(url.toString(), upstream.url)));
  }
}

/** Connects to `url` with `provider`, signing in first when the worker asks for it; returns the client. */
async function connect(provider, url = worker.mcpUrl) {
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await assert.rejects(new Client({ name: "e2e", version: "1.0.0" }).connect(first), UnauthorizedError);
  const back = provider.returned.at(-1);
  assert.ok(back, "the provider was never sent to sign in");
  assert.equal(back.origin + back.pathname, REDIRECT);
  assert.equal(back.searchParams.get("iss"), worker.url, "RFC 9207 iss");
  assert.equal(back.searchParams.get("error"), null, back.toString());
  await first.finishAuth(back.searchParams.get("code"));
  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return client;
}

/** The Authorization headers the fake GitHub API received for workflow runs. */
const runCredentials = () =>
  upstream.matching("GET", /\/actions\/runs$/).map((r) => r.headers.authorization);

const listRuns = (client) =>
  client.callTool({ name: "github_list_workflow_runs", arguments: { owner: "octo-org", repo: "hello-world", perPage: 2 } });

test("the SDK signs in with registration and PKCE, refreshes, and tools act as the signed-in person", async () => {
  upstream.reset();
  const provider = new HeadlessProvider();
  const client = await connect(provider);
  const url = provider.authorizationUrl;
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.equal(url.searchParams.get("resource"), worker.mcpUrl);
  assert.ok(provider.saved.client.client_id, "registered");
  assert.match(provider.saved.tokens.access_token, /^mcp_at_/);
  assert.match(provider.saved.tokens.refresh_token, /^mcp_rt_/);

  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === "github_list_workflow_runs"));
  const result = await listRuns(client);
  assert.equal(result.isError, undefined, JSON.stringify(result));
  assert.deepEqual(result._meta?.[UPSTREAM_META], { vendor: "github", identity: "signed-in-user" });
  // The person's own token from the sign-in went to GitHub, not the deployment's.
  const personal = [...upstream.idp.tokens].filter(([, who]) => who.login === "octocat").map(([token]) => token);
  assert.equal(personal.length, 1);
  assert.deepEqual(runCredentials(), [`Bearer ${personal[0]}`]);
  assert.ok(!JSON.stringify(result).includes(personal[0]));

  // Jira as the person: their Atlassian token, at the gateway root of the site plus the same path.
  const jira = await client.callTool({ name: "jira_get", arguments: { path: "/rest/api/3/myself" } });
  assert.equal(jira.isError, undefined, JSON.stringify(jira));
  assert.deepEqual(jira._meta?.[UPSTREAM_META], { vendor: "jira", identity: "signed-in-user" });
  const atlassianTokens = [...upstream.atlassian.tokens.keys()];
  assert.equal(atlassianTokens.length, 1, "one Atlassian consent");
  assert.deepEqual(upstream.matching("GET", /\/rest\/api\/3\/myself$/).map((r) => [r.path, r.headers.authorization]),
    [["/atlassian-api/ex/jira/e2e-cloud/rest/api/3/myself", `Bearer ${atlassianTokens[0]}`]]);
  assert.ok(!JSON.stringify(jira).includes(atlassianTokens[0]));

  // An access token the worker no longer accepts: the SDK refreshes (rotating) and retries.
  const before = provider.saved.tokens;
  provider.saved.tokens = { ...before, access_token: `mcp_at_${"x".repeat(43)}` };
  const again = await client.listTools();
  assert.equal(again.tools.length, tools.length);
  assert.notEqual(provider.saved.tokens.refresh_token, before.refresh_token, "the refresh token rotates");
  assert.match(provider.saved.tokens.access_token, /^mcp_at_/);
  // The replaced refresh token is spent: replayed, it is refused and nothing is issued.
  const replay = await fetch(`${worker.url}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: before.refresh_token,
      client_id: provider.saved.client.client_id }),
  });
  assert.equal(replay.status, 400);
  assert.equal((await replay.json()).error, "invalid_grant");
  await client.close();
});

test("a client id metadata document signs in too, and a header client never sees OAuth", async () => {
  // The SDK sends only https metadata document URLs; a local issuer also fetches loopback http
  // ones (where local clients serve them), so this sign-in is driven by hand.
  upstream.reset();
  serveClientMetadata();
  const clientId = `${upstream.url}/client-metadata.json`;
  const { tokens } = await signInForTokens(worker.url, upstream.url, { clientId });
  await signInForTokens(worker.url, upstream.url, { clientId });
  assert.equal(upstream.count("GET", /^\/client-metadata\.json$/), 1, "fetched once, then cached");
  const client = new Client({ name: "e2e-cimd", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${tokens.access_token}` } },
  }));
  assert.ok((await client.listTools()).tools.length > 0);
  await client.close();

  // The static-token principal: served at once, with the deployment's GitHub token.
  const header = new Client({ name: "e2e-header", version: "1.0.0" });
  await header.connect(new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${STATIC_TOKEN}` } },
  }));
  upstream.reset();
  const result = await listRuns(header);
  assert.equal(result.isError, undefined, JSON.stringify(result));
  assert.deepEqual(result._meta?.[UPSTREAM_META], { vendor: "github", identity: "default" });
  assert.deepEqual(runCredentials(), [`Bearer ${DEPLOYMENT_GITHUB_TOKEN}`]);
  await header.close();
});

test("a client connected to a toolset path signs in for /mcp and gets that toolset", async () => {
  upstream.reset();
  const provider = new HeadlessProvider();
  // The resource is /mcp, a path prefix of the URL the client was given, which the SDK accepts.
  const client = await connect(provider, `${worker.url}/mcp/x/github`);
  assert.equal(provider.authorizationUrl.searchParams.get("resource"), worker.mcpUrl);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).filter((n) => !n.startsWith("approval_")),
    toolsetNames("github"));
  await assert.rejects(client.callTool({ name: "jira_get", arguments: { path: "/rest/api/3/myself" } }), /not offered on this connection/);
  await client.close();
});
