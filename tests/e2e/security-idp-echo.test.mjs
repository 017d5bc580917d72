// An identity provider whose token endpoint answers a refusal GitHub's way (HTTP 200 with an
// `error` member) and echoes in it what it was sent, here the deployment's client secret. The
// refusal goes back to the redirect URI of whoever started the sign-in: an outsider who
// registers a client with a redirect of their own and approves the consent page in their own
// browser. The worker quotes only an error code's shape from a provider's refusal, so the secret
// never reaches them (docs/security.md, "What comes back from an upstream").

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startWorker } from "./worker.mjs";
import { browser as newBrowser, consentForm, pkce } from "./oauth-browser.mjs";

const CLIENT_SECRET = "deployment-client-secret-9f8e7d6c5b4a";
const ATTACKER_REDIRECT = "https://attacker.example/cb";

// The provider: authorize approves at once; the token endpoint refuses, echoing the form's
// client_secret in `error` (a provider that explains a refusal by quoting the request).
const idp = createServer((req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname === "/authorize") {
    const back = new URL(url.searchParams.get("redirect_uri"));
    back.searchParams.set("code", "provider-code-1");
    back.searchParams.set("state", url.searchParams.get("state") ?? "");
    res.writeHead(302, { Location: back.toString() }).end();
    return;
  }
  let body = "";
  req.on("data", (c) => { body += c; });
  req.on("end", () => {
    const form = new URLSearchParams(body);
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: `bad client_secret ${form.get("client_secret")}` }));
  });
});
await new Promise((resolve) => idp.listen(0, "127.0.0.1", resolve));
const idpUrl = `http://127.0.0.1:${idp.address().port}`;

const logs = [];
const worker = await startWorker({
  kvNamespaces: ["OAUTH"],
  onLog: (line) => logs.push(line),
  vars: {
    MCP_OAUTH_ISSUER: "http://127.0.0.1:1",
    MCP_OAUTH_ENCRYPTION_KEY: "e2e-oauth-key-0123456789abcdef0123456789",
    MCP_OAUTH_PROVIDER: "oidc",
    MCP_OAUTH_OIDC_AUTHORIZATION_URL: `${idpUrl}/authorize`,
    MCP_OAUTH_OIDC_TOKEN_URL: `${idpUrl}/token`,
    MCP_OAUTH_OIDC_USERINFO_URL: `${idpUrl}/userinfo`,
    MCP_OAUTH_CLIENT_ID: "mcp-client",
    MCP_OAUTH_CLIENT_SECRET: CLIENT_SECRET,
    MCP_OAUTH_ALLOWED_USERS: "someone@corp.example",
  },
});
await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
after(async () => { await worker.close(); idp.close(); });

test("an outsider's own sign-in does not bring the deployment's client secret to their redirect URI", async () => {
  const registered = await fetch(`${worker.url}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "outsider", redirect_uris: [ATTACKER_REDIRECT] }),
  });
  assert.equal(registered.status, 201);
  const { client_id: clientId } = await registered.json();
  const attacker = newBrowser(worker.url);
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: ATTACKER_REDIRECT,
    code_challenge: pkce().challenge, code_challenge_method: "S256", state: "s" });
  const page = await attacker.go(`${worker.url}/oauth/authorize?${query}`);
  const html = await page.text();
  assert.equal(page.status, 200, html.slice(0, 300));
  const approved = await attacker.go(`${worker.url}/oauth/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: consentForm(html),
  });
  const atProvider = await attacker.go(approved.headers.get("location"));
  const callback = await attacker.go(atProvider.headers.get("location"));
  const location = callback.headers.get("location") ?? "";
  assert.ok(location.startsWith(ATTACKER_REDIRECT), `the sign-in ends at the client: ${location}`);
  const description = new URL(location).searchParams.get("error_description") ?? "";
  assert.ok(!description.includes(CLIENT_SECRET), `the attacker's redirect receives: ${description}`);
  assert.ok(!logs.join("\n").includes(CLIENT_SECRET), "a log line holds the client secret");
});
