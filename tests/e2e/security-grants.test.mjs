// What a sign-in leaves behind, attacked by people who are on the allow-list or who registered
// a client: the Atlassian consent chained after the identity provider's, the grants that
// refreshes and revocations act on, and registrations that outlive the rules they were made under. Each test names the attack and what must hold (docs/security.md keeps the threat model).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker, standIn } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { atlassianSignInVars, browser, codeExchange, consentForm, githubSignInVars, pkce, signInForCode }
  from "./oauth-browser.mjs";

const REDIRECT = "http://127.0.0.1:9/callback";
const upstream = await startFakeUpstream();
const signInVars = { ...githubSignInVars(upstream), MCP_OAUTH_ALLOWED_USERS: "octocat,mallory" };
const closing = [() => upstream.close()];
after(async () => {
  for (const close of closing) await close();
});

async function started(options) {
  const worker = await startWorker({ kvNamespaces: ["OAUTH"], ...options });
  closing.unshift(() => worker.close());
  await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
  return worker;
}

async function form(url, fields, send = fetch) {
  const r = await send(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: r.status, body: await r.json() };
}

async function toolsList(base, bearer) {
  const r = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${bearer}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** Mallory signs in in her own browser up to Atlassian's consent; returns her browser and that link. */
async function malloryToAtlassian(W) {
  const registered = await fetch(`${W}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "mallory's client", redirect_uris: [REDIRECT] }),
  });
  const { client_id: clientId } = await registered.json();
  const { challenge } = pkce();
  const mallory = browser(W);
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT,
    code_challenge: challenge, code_challenge_method: "S256", state: "st" });
  const page = await mallory.go(`${W}/oauth/authorize?${query}`);
  const approved = await mallory.go(`${W}/oauth/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: consentForm(await page.text()),
  });
  upstream.idp.login = "mallory";
  const fromGitHub = await mallory.go(approved.headers.get("location"));
  const toAtlassian = await mallory.go(fromGitHub.headers.get("location"));
  const atlassianUrl = new URL(toAtlassian.headers.get("location"));
  assert.ok(atlassianUrl.href.startsWith(`${upstream.url}/atlassian-auth/authorize?`), atlassianUrl.href);
  return { mallory, atlassianUrl };
}

test("a refused Atlassian answer, replayed in the browser that started the sign-in, gives no code and its Atlassian code is spent", async () => {
  const worker = await started({ vars: { ...signInVars, ...atlassianSignInVars(upstream) } });
  const W = worker.url;
  upstream.idp.ids = { octocat: 583231, mallory: 666 };
  // Mallory sends octocat her Atlassian consent link, as it is or with its state altered.
  for (const alter of [() => {}, (u) => u.searchParams.set("state", "altered")]) {
    const { mallory, atlassianUrl } = await malloryToAtlassian(W);
    const ownState = atlassianUrl.searchParams.get("state");
    alter(atlassianUrl);
    // Octocat consents at Atlassian; the worker refuses the answer in octocat's browser.
    const octocat = browser(W);
    const refusedUrl = new URL((await octocat.go(atlassianUrl)).headers.get("location"));
    const octocatsCode = refusedUrl.searchParams.get("code");
    const refused = await octocat.go(refusedUrl);
    assert.ok([400, 403].includes(refused.status), `${refused.status}`);
    assert.equal(refused.headers.get("location"), null);
    if (refusedUrl.searchParams.get("state") === ownState) {
      assert.equal(upstream.atlassian.codes.has(octocatsCode), false, "octocat's Atlassian code is still redeemable");
    }
    // Mallory gets the refused address and opens it, with her own state, in her own browser.
    refusedUrl.searchParams.set("state", ownState);
    const replay = await mallory.go(refusedUrl);
    assert.equal(replay.status, 400, await replay.clone().text());
    assert.equal(replay.headers.get("location"), null);
  }
});

// Workers KV keeps a location's reads for up to a minute. The stand-in below plays that: reads of
// grants are kept for CACHE_MS in the isolate that made them (a location), a write made there
// refreshes what it keeps, and a delete made elsewhere does not reach it.
const CACHE_MS = 1500;
const LOCATION_CACHE_KV = `
const CACHE = new Map();
class LocationCache {
  constructor(inner) { this.inner = inner; }
  async kept(kind, key, args) {
    if (!key.startsWith("grant2:")) return this.inner[kind](key, ...args);
    const k = kind + "\\n" + key + "\\n" + JSON.stringify(args);
    const hit = CACHE.get(k);
    if (hit && hit.until > Date.now()) return structuredClone(hit.value);
    const value = await this.inner[kind](key, ...args);
    CACHE.set(k, { until: Date.now() + ${CACHE_MS}, value: structuredClone(value) });
    return value;
  }
  get(key, ...args) { return this.kept("get", key, args); }
  getWithMetadata(key, ...args) { return this.kept("getWithMetadata", key, args); }
  async put(key, ...args) {
    const result = await this.inner.put(key, ...args);
    for (const k of [...CACHE.keys()]) {
      const [kind, keptKey, argsJson] = k.split("\\n");
      if (keptKey !== key) continue;
      const value = await this.inner[kind](key, ...JSON.parse(argsJson));
      CACHE.set(k, { until: Date.now() + ${CACHE_MS}, value: structuredClone(value) });
    }
    return result;
  }
  delete(key) { return this.inner.delete(key); }
  list(...args) { return this.inner.list(...args); }
}
export default function (env) { return new LocationCache(env.INNER); }
`;

test("a grant revoked at one location is not written back by another location's stale copy", async () => {
  // Location A is the worker, location B its twin; a thief holds a copy of the person's tokens.
  const worker = await started({ vars: signInVars, wrapped: { OAUTH: LOCATION_CACHE_KV }, twin: true });
  const W = worker.url;
  const atB = (url, init) => worker.twinFetch(url, init);
  const central = await worker.mf.getKVNamespace("INNER", standIn("OAUTH"));
  const grants = async () => (await central.list({ prefix: "grant2:" })).keys.length;
  const windowPassed = () => new Promise((resolve) => setTimeout(resolve, CACHE_MS + 300));
  upstream.idp.login = "octocat";

  // A stolen refresh token: the thief refreshes first at A, the person's client at B is refused
  // and its replay revokes the grant; within A's window, the thief refreshes again at A (the
  // refresh re-reads the person's identity and writes the grant).
  const signedIn = await signInForCode(W, upstream.url);
  const first = (await form(`${W}/oauth/token`, codeExchange(signedIn))).body;
  const refresh = (token, send) =>
    form(`${W}/oauth/token`, { grant_type: "refresh_token", refresh_token: token, client_id: signedIn.clientId }, send);
  const thief = await refresh(first.refresh_token);
  assert.equal(thief.status, 200);
  const person = await refresh(first.refresh_token, atB);
  assert.equal(person.status, 400);
  assert.equal(await grants(), 0);
  const again = await refresh(thief.body.refresh_token);
  await windowPassed();
  assert.equal(await grants(), 0, "the revoked grant was written back");
  if (again.status === 200) {
    assert.equal(await toolsList(W, again.body.access_token), 401);
    assert.equal((await refresh(again.body.refresh_token, atB)).status, 400);
  }

  // The person signs out at B while the thief's call at A renews an expiring provider token,
  // which writes the grant.
  upstream.idp.expiresIn = 60;
  try {
    const other = await signInForCode(W, upstream.url);
    const tokens = (await form(`${W}/oauth/token`, codeExchange(other))).body;
    const before = await grants();
    assert.equal(await toolsList(W, tokens.access_token), 200);
    const revoked = await atB(`${W}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: other.clientId }).toString(),
    });
    assert.equal(revoked.status, 200);
    assert.equal(await grants(), before - 1);
    await toolsList(W, tokens.access_token);
    await windowPassed();
    assert.equal(await grants(), before - 1, "the revoked grant was written back");
    assert.equal(await toolsList(W, tokens.access_token), 401);
    const redeemed = await form(`${W}/oauth/token`, { grant_type: "refresh_token", refresh_token: tokens.refresh_token,
      client_id: other.clientId }, atB);
    assert.equal(redeemed.status, 400);
  } finally {
    upstream.idp.expiresIn = null;
  }
});

test("a client registered while a redirect scheme was allowed cannot send a code there once it is not", async () => {
  // The same deployment before and after its operator stops accepting the `cursor` scheme: the
  // registration lives on, sealed in its client id, so the redirect is checked again at each use.
  const redirect = "cursor://anysphere.cursor-retrieval/oauth/callback";
  const before = await started({ vars: { ...signInVars, MCP_OAUTH_REDIRECT_SCHEMES: "cursor" } });
  const nowWorker = await started({ vars: signInVars });
  const registered = await fetch(`${before.url}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "Cursor", redirect_uris: [redirect] }),
  });
  assert.equal(registered.status, 201);
  const { client_id: clientId } = await registered.json();
  const { challenge } = pkce();
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirect,
    code_challenge: challenge, code_challenge_method: "S256", state: "st" });
  const then = await fetch(`${before.url}/oauth/authorize?${query}`, { redirect: "manual" });
  assert.equal(then.status, 200);
  const now = await fetch(`${nowWorker.url}/oauth/authorize?${query}`, { redirect: "manual" });
  const page = await now.text();
  assert.equal(now.status, 400, page.slice(0, 300));
  assert.equal(now.headers.get("location"), null);
  assert.match(page, /no longer accepted/);
});
