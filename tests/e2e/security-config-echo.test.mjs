// A deployment whose vendor or identity-provider URL setting carries a credential in its user
// information (`https://bot:TOKEN@ghe.example.com/api/v3`, a common way to hand a Basic pair to
// a client), or whose MCP_AUTH_TOKENS has an entry written the wrong way round. The worker
// refuses to serve, and that refusal is the answer to every request, before any authentication,
// and the log line `config_invalid`: it must name the setting without quoting the credential
// (docs/security.md, "What a refusal of configuration shows").

import { test } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./worker.mjs";

const SECRET = "ghp_AttackerCanReadThis0123456789abcd";

async function leaks(vars, request) {
  const logs = [];
  const worker = await startWorker({ kvNamespaces: ["OAUTH"], vars, onLog: (line) => logs.push(line) });
  try {
    const response = await request(worker);
    const text = await response.text();
    return { status: response.status, text, logs: logs.join("\n") };
  } finally {
    await worker.close();
  }
}

const unauthenticatedPost = (worker) =>
  fetch(worker.mcpUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

test("a credential in GITHUB_API_URL's user part is not shown to an unauthenticated caller of /mcp", async () => {
  const seen = await leaks({
    MCP_AUTH_TOKENS: JSON.stringify({ alice: "alice-static-token-0123456789" }),
    GITHUB_API_URL: `https://ci-bot:${SECRET}@ghe.example.com/api/v3`,
  }, unauthenticatedPost);
  // The worker refuses to serve (fine), but must not say why in the secret's own words.
  assert.equal(seen.status, 500);
  assert.ok(!seen.text.includes(SECRET), `the unauthenticated answer holds the token: ${seen.text}`);
  assert.ok(!seen.logs.includes(SECRET), "the log holds the token");
});

test("a credential in an OpenID Connect endpoint's user part is not shown on the discovery document", async () => {
  const seen = await leaks({
    MCP_OAUTH_ISSUER: "http://127.0.0.1:8787",
    MCP_OAUTH_ENCRYPTION_KEY: "e2e-oauth-key-0123456789abcdef0123456789",
    MCP_OAUTH_PROVIDER: "oidc",
    MCP_OAUTH_OIDC_AUTHORIZATION_URL: "https://idp.example.com/authorize",
    MCP_OAUTH_OIDC_TOKEN_URL: `https://mcp-client:${SECRET}@idp.example.com/token`,
    MCP_OAUTH_OIDC_USERINFO_URL: "https://idp.example.com/userinfo",
    MCP_OAUTH_CLIENT_ID: "mcp-client",
    MCP_OAUTH_CLIENT_SECRET: "e2e-client-secret",
    MCP_OAUTH_ALLOWED_USERS: "octocat",
  }, (worker) => fetch(`${worker.url}/.well-known/oauth-authorization-server`));
  assert.equal(seen.status, 500);
  assert.ok(!seen.text.includes(SECRET), `the public discovery answer holds the secret: ${seen.text}`);
  assert.ok(!seen.logs.includes(SECRET), "the log holds the secret");
});

// An entry written the wrong way round (token as the key, name as the value): its "principal
// name" is the token.
test("a token written where MCP_AUTH_TOKENS expects a principal name is not shown to an unauthenticated caller", async () => {
  const TOKEN = "alice-static-token-AttackerReads-0123456789";
  const seen = await leaks({
    MCP_AUTH_TOKENS: JSON.stringify({ bob: "bob-static-token-0123456789ab", [TOKEN]: "alice" }),
  }, unauthenticatedPost);
  assert.equal(seen.status, 500);
  assert.ok(!seen.text.includes(TOKEN), `the unauthenticated answer holds the token: ${seen.text}`);
  assert.ok(!seen.logs.includes(TOKEN), "the log holds the token");
});
