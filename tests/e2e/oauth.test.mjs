// OAuth in workerd: with MCP_OAUTH_ISSUER set, the discovery documents are served, a request
// without credentials is pointed at them, a client registers (its id is the sealed registration;
// nothing is written to the OAUTH KV binding), and a static token keeps serving. The sign-in itself, with the SDK client, is in
// oauth-sdk.test.mjs.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./worker.mjs";
import { UNREACHED_SIGN_IN_VARS } from "./oauth-browser.mjs";

const TOKEN = "e2e-oauth-static-token-0123456789";
const worker = await startWorker({
  kvNamespaces: ["OAUTH"],
  vars: {
    MCP_AUTH_TOKENS: JSON.stringify({ e2e: TOKEN }),
    ...UNREACHED_SIGN_IN_VARS,
  },
});
after(() => worker.close());

const ping = (headers) =>
  fetch(worker.mcpUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

test("discovery documents name the issuer and the resource", async () => {
  const resource = await fetch(`${worker.url}/.well-known/oauth-protected-resource/mcp`);
  assert.equal(resource.status, 200);
  const r = await resource.json();
  assert.equal(r.resource, "http://127.0.0.1:8787/mcp");
  assert.deepEqual(r.authorization_servers, ["http://127.0.0.1:8787"]);
  const server = await fetch(`${worker.url}/.well-known/oauth-authorization-server`);
  assert.equal(server.status, 200);
  const s = await server.json();
  assert.equal(s.issuer, "http://127.0.0.1:8787");
  assert.ok(s.code_challenge_methods_supported.includes("S256"));
});

test("a request without credentials is pointed at discovery; a static token still serves", async () => {
  const bare = await ping({});
  assert.equal(bare.status, 401);
  assert.match(bare.headers.get("www-authenticate") ?? "", /resource_metadata="[^"]*oauth-protected-resource/);
  const wrong = await ping({ Authorization: "Bearer not-a-known-token-0123456789" });
  assert.equal(wrong.status, 401);
  assert.doesNotMatch(wrong.headers.get("www-authenticate") ?? "", /resource_metadata/);
  const ok = await ping({ Authorization: `Bearer ${TOKEN}` });
  assert.equal(ok.status, 200);
});

test("registration answers 201 with a sealed client id and stores nothing", async () => {
  const r = await fetch(`${worker.url}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "e2e", redirect_uris: ["http://127.0.0.1:9/callback"] }),
  });
  assert.equal(r.status, 201, await r.clone().text());
  const body = await r.json();
  assert.match(body.client_id, /^mcp_c_[A-Za-z0-9_-]+$/);
  assert.equal(body.token_endpoint_auth_method, "none");
  const kv = await worker.mf.getKVNamespace("OAUTH");
  assert.deepEqual((await kv.list()).keys, [], "a registration wrote to OAUTH");
});

test("an unknown issued token is refused with invalid_token", async () => {
  const r = await ping({ Authorization: "Bearer mcp_at_unknownunknownunknownunknown" });
  assert.equal(r.status, 401);
  assert.match(r.headers.get("www-authenticate") ?? "", /invalid_token/);
});
