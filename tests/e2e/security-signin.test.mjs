// The sign-in attacked as an outsider would, in workerd, with the fake GitHub-shaped identity
// provider: someone with no account and not on the allow-list, who can register clients, start
// authorizations, approve consent pages in their own browser and send links to people who are on
// the allow-list. Each test names the attack and what must hold (docs/security.md keeps the
// threat model). Browsers are played by hand: each has its own cookie jar, and only the worker's
// own cookies are kept, as a real browser keeps them per site.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { browser as newBrowser, consentForm, githubSignInVars, pkce } from "./oauth-browser.mjs";

const VICTIM = "octocat";
const ATTACKER_REDIRECT = "https://attacker.example/cb";

const upstream = await startFakeUpstream();
const vars = { ...githubSignInVars(upstream), MCP_OAUTH_ALLOWED_USERS: VICTIM };
const worker = await startWorker({ kvNamespaces: ["OAUTH"], vars });
await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
// A second worker whose rate limiter admits few requests per address.
const LIMIT = 4;
const limited = await startWorker({ kvNamespaces: ["OAUTH"], vars, rateLimit: LIMIT });
await limited.setVars({ MCP_OAUTH_ISSUER: limited.url });
after(async () => { await worker.close(); await limited.close(); await upstream.close(); });

const browser = (origin = worker.url) => newBrowser(origin);

async function register(redirectUris, base = worker.url, headers = {}) {
  return fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ client_name: "Totally Legit Client", redirect_uris: redirectUris }),
  });
}

async function registered(redirectUris) {
  const r = await register(redirectUris);
  assert.equal(r.status, 201, await r.clone().text());
  return (await r.json()).client_id;
}

function authorizeUrl(params, base = worker.url) {
  return `${base}/oauth/authorize?${new URLSearchParams(params)}`;
}

function validParams(clientId, redirect, challenge) {
  return { response_type: "code", client_id: clientId, redirect_uri: redirect, code_challenge: challenge,
    code_challenge_method: "S256", state: "st" };
}

/** Opens the consent page in `b` and approves it; returns the identity provider's URL. */
async function approveIn(b, url) {
  const page = await b.go(url);
  const html = await page.text();
  assert.equal(page.status, 200, html.slice(0, 300));
  const approved = await b.go(`${worker.url}/oauth/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: consentForm(html),
  });
  assert.ok([302, 303].includes(approved.status), await approved.text());
  const location = approved.headers.get("location");
  assert.ok(location.startsWith(`${upstream.url}/login/oauth/authorize?`), location);
  return location;
}

/** Follows `url` in `b` through the provider back to the worker; returns the worker's answer. */
async function throughProvider(b, url) {
  const fromProvider = await b.go(url);
  assert.equal(fromProvider.status, 302, "the fake provider approves at once");
  const callback = fromProvider.headers.get("location");
  assert.ok(callback.startsWith(`${worker.url}/oauth/callback?`), callback);
  return b.go(callback);
}

/** The worker's callback URL the provider sends a browser to from `providerUrl` (a fresh code). */
async function victimCallback(providerUrl) {
  const fromProvider = await fetch(providerUrl, { redirect: "manual" });
  return fromProvider.headers.get("location");
}

/** True when the worker's answer sends the browser to `redirect` (with a code or an error). */
const sendsTo = (response, redirect) => (response.headers.get("location") ?? "").startsWith(redirect);

test("an identity-provider link approved in the attacker's browser does not sign the victim in for the attacker", async () => {
  // The attacker registers a client of their own and approves its consent page in their own
  // browser, then sends the identity provider's URL to a person on the allow-list.
  const clientId = await registered([ATTACKER_REDIRECT]);
  const { challenge } = pkce();
  const attacker = browser();
  const providerUrl = await approveIn(attacker, authorizeUrl(validParams(clientId, ATTACKER_REDIRECT, challenge)));
  const approvedCookie = attacker.jar.get("mcp_oauth_browser");
  upstream.idp.login = VICTIM;
  // The victim opens it: no cookie of the worker's at all, or one from a sign-in of their own.
  const victim = browser();
  const bare = await throughProvider(victim, providerUrl);
  const page = await bare.text();
  assert.equal(bare.status, 403, page);
  assert.equal(bare.headers.get("location"), null);
  assert.match(page, /not started in this browser/);
  const ownClient = await registered(["http://127.0.0.1:9/callback"]);
  await approveIn(victim, authorizeUrl(validParams(ownClient, "http://127.0.0.1:9/callback", pkce().challenge)));
  const withOwnCookie = await throughProvider(victim, providerUrl);
  assert.equal(withOwnCookie.status, 403, await withOwnCookie.text());
  assert.ok(!sendsTo(withOwnCookie, ATTACKER_REDIRECT));
  // A cookie planted in the victim's browser with the attacker's value (sent before the
  // victim's own, as a cookie for a longer path is) makes the browser ambiguous: refused.
  const planted = await fetch(await victimCallback(providerUrl), {
    redirect: "manual",
    headers: { Cookie: `mcp_oauth_browser=${attacker.jar.get("mcp_oauth_browser")}; mcp_oauth_browser=${victim.jar.get("mcp_oauth_browser")}` },
  });
  assert.equal(planted.status, 403, await planted.text());
  // The refused callback's URL, leaked and replayed in the attacker's browser, holds a spent
  // code: the sign-in ends on the server's page, never with a code.
  const refusedUrl = await victimCallback(providerUrl);
  assert.equal((await browser().go(refusedUrl)).status, 403);
  const replayed = await attacker.go(refusedUrl);
  assert.equal(replayed.status, 400, await replayed.clone().text());
  assert.ok(!sendsTo(replayed, ATTACKER_REDIRECT), `${replayed.headers.get("location")}`);
  attacker.jar.set("mcp_oauth_browser", approvedCookie);
  // The attacker's own browser finishing it signs in whoever the provider says, and that is
  // refused here because the attacker is not on the allow-list.
  upstream.idp.login = "mallory";
  const own = await throughProvider(attacker, providerUrl);
  assert.ok(sendsTo(own, ATTACKER_REDIRECT));
  assert.equal(new URL(own.headers.get("location")).searchParams.get("error"), "access_denied");
  upstream.idp.login = VICTIM;
});

test("a victim sent through the attacker's sign-in with its state altered leaves no code the attacker can finish with", async () => {
  // The attacker keeps the provider link's challenge but alters or drops its state, so the
  // victim's refused answer carries nothing to spend the code with; then puts their own state
  // back on the refused address, in their own browser.
  const clientId = await registered([ATTACKER_REDIRECT]);
  const { challenge } = pkce();
  for (const alter of [(u) => u.searchParams.set("state", "altered"), (u) => u.searchParams.delete("state")]) {
    const attacker = browser();
    const providerUrl = new URL(await approveIn(attacker, authorizeUrl(validParams(clientId, ATTACKER_REDIRECT, challenge))));
    const ownState = providerUrl.searchParams.get("state");
    alter(providerUrl);
    upstream.idp.login = VICTIM;
    const victim = browser();
    const refusedUrl = (await victim.go(providerUrl)).headers.get("location");
    const refused = await victim.go(refusedUrl);
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get("location"), null);
    const replay = new URL(refusedUrl);
    replay.searchParams.set("state", ownState);
    const finished = await attacker.go(replay);
    assert.equal(finished.status, 400, await finished.clone().text());
    assert.ok(!sendsTo(finished, ATTACKER_REDIRECT), finished.headers.get("location"));
  }
});

test("the consent form posted from another browser, or replayed after the sign-in ended, authorizes nothing", async () => {
  const redirect = "http://127.0.0.1:9/callback";
  const clientId = await registered([redirect]);
  const first = browser();
  const page = await first.go(authorizeUrl(validParams(clientId, redirect, pkce().challenge)));
  const html = await page.text();
  const cookie = page.headers.getSetCookie().find((c) => c.startsWith("mcp_oauth_browser="));
  assert.ok(cookie, "the consent page sets the binding cookie");
  for (const attribute of ["HttpOnly", "SameSite=Lax", "Path=/oauth", "Max-Age=600"]) {
    assert.ok(cookie.split(/;\s*/).includes(attribute), `${attribute} in ${cookie}`);
  }
  const post = (b) => b.go(`${worker.url}/oauth/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: consentForm(html),
  });
  const other = await post(browser());
  assert.equal(other.status, 403);
  assert.equal(other.headers.get("location"), null);
  // The right browser completes the sign-in; the cookie is then cleared, so the same provider
  // answer cannot be used again in it.
  const providerUrl = (await post(first)).headers.get("location");
  const done = await throughProvider(first, providerUrl);
  assert.ok(sendsTo(done, redirect));
  assert.ok(new URL(done.headers.get("location")).searchParams.get("code"));
  assert.equal(first.jar.size, 0, "the binding cookie is cleared when the sign-in ends");
  const again = await throughProvider(first, providerUrl);
  assert.equal(again.status, 403);
});

test("until the client, its redirect URI and the whole request are valid, errors stay on the server's page", async () => {
  const redirect = "http://127.0.0.1:9/callback";
  const clientId = await registered([redirect, "https://app.example/cb"]);
  const { challenge } = pkce();
  const base = validParams(clientId, redirect, challenge);
  const without = (name) => Object.fromEntries(Object.entries(base).filter(([k]) => k !== name));
  const cases = {
    "no response_type (the open redirect)": without("response_type"),
    "response_type=token": { ...base, response_type: "token" },
    "no code_challenge": without("code_challenge"),
    "no code_challenge_method": without("code_challenge_method"),
    "the plain PKCE method": { ...base, code_challenge_method: "plain" },
    "a malformed challenge": { ...base, code_challenge: "short" },
    "a challenge with characters outside base64url": { ...base, code_challenge: `${challenge.slice(0, 42)}+` },
    "another resource": { ...base, resource: "https://other.example/mcp" },
    "an unknown scope": { ...base, scope: "admin" },
    "a state longer than 512 bytes": { ...base, state: "s".repeat(513) },
    "a repeated parameter": null,
    "an unregistered redirect URI": { ...base, redirect_uri: ATTACKER_REDIRECT },
    "a registered https redirect on another port": { ...base, redirect_uri: "https://app.example:8443/cb" },
    "a registered https redirect with another path": { ...base, redirect_uri: "https://app.example/cb/../evil" },
    "a registered https redirect with a query added": { ...base, redirect_uri: "https://app.example/cb?x=1" },
    "a loopback redirect on another host": { ...base, redirect_uri: "http://localhost:9/callback" },
    "a loopback redirect with a fragment": { ...base, redirect_uri: `${redirect}#x` },
    "an unknown client": { ...base, client_id: "mcp_c_forged" },
    "no client": without("client_id"),
  };
  for (const [what, params] of Object.entries(cases)) {
    const url = params ? authorizeUrl(params) : `${authorizeUrl(base)}&state=again`;
    const response = await fetch(url, { redirect: "manual" });
    const body = await response.text();
    assert.equal(response.status, 400, `${what}: ${body.slice(0, 200)}`);
    assert.equal(response.headers.get("location"), null, what);
    assert.match(response.headers.get("content-type") ?? "", /text\/html/, what);
    assert.equal(response.headers.getSetCookie().length, 0, `${what}: no cookie before the request is valid`);
  }
});

test("the consent page shows the whole redirect target, and who published a metadata document", async () => {
  const clientId = await registered(["https://app.example/oauth/cb?tenant=a"]);
  const page = await fetch(authorizeUrl(validParams(clientId, "https://app.example/oauth/cb?tenant=a", pkce().challenge)));
  const html = await page.text();
  assert.equal(page.status, 200);
  assert.ok(html.includes("<code>https://app.example/oauth/cb?tenant=a</code>"), html);
  assert.match(html, /the site <b>app\.example<\/b>/);
  assert.match(html, /registered itself with this server/);
  upstream.route("GET", /^\/cimd\.json$/, (req, res, m, { json }) => json(res, 200, {
    client_id: `${upstream.url}/cimd.json`, client_name: "Document Client", redirect_uris: ["http://127.0.0.1:9/callback"],
  }));
  const documented = await fetch(authorizeUrl(validParams(`${upstream.url}/cimd.json`, "http://127.0.0.1:9/callback", pkce().challenge)));
  const text = await documented.text();
  assert.equal(documented.status, 200, text);
  assert.match(text, /metadata document published at <b>127\.0\.0\.1<\/b>/);
  assert.match(text, /<code>http:\/\/127\.0\.0\.1:9\/callback<\/code> \(a program on this computer\)/);
});

test("redirect URIs that hand the code to a browser or hide where it goes cannot be registered", async () => {
  for (const uri of [
    "microsoft-edge:https://evil.example/cb",
    "x-safari-https://evil.example/cb",
    "intent://evil.example/cb#Intent;scheme=https;end",
    "googlechrome://evil.example/cb",
    "javascript:alert(1)",
    "data:text/html,x",
    "http://evil.example/cb",
    "https://user@app.example/cb",
    "https://app.example/cb#fragment",
    "myapp:/cb",
  ]) {
    const r = await register([uri]);
    const body = await r.json();
    assert.equal(r.status, 400, `${uri}: ${JSON.stringify(body)}`);
    assert.equal(body.error, "invalid_redirect_uri", uri);
  }
  for (const uri of ["com.example.app:/oauth/cb", "http://127.0.0.1/cb", "http://[::1]:3000/cb", "https://app.example/cb"]) {
    const r = await register([uri]);
    assert.equal(r.status, 201, `${uri}: ${await r.text()}`);
  }
});

test("strangers write nothing: registrations and authorization requests leave the sign-in store empty", async () => {
  const kv = await worker.mf.getKVNamespace("OAUTH");
  const before = (await kv.list()).keys.length;
  const redirect = "http://127.0.0.1:9/callback";
  for (let i = 0; i < 26; i++) await registered([redirect]);
  const clientId = await registered([redirect]);
  for (let i = 0; i < 25; i++) {
    const b = browser();
    const page = await b.go(authorizeUrl(validParams(clientId, redirect, pkce().challenge)));
    assert.equal(page.status, 200);
    const html = await page.text();
    if (i % 5 === 0) {
      // Some go on to approve the consent page, which is not yet a sign-in either.
      const approved = await b.go(`${worker.url}/oauth/authorize`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: consentForm(html),
      });
      assert.ok([302, 303].includes(approved.status));
    }
  }
  assert.equal((await kv.list()).keys.length, before, "an anonymous caller wrote to the OAUTH namespace");
});

test("a client cannot disguise its name or redirect on the consent page", async () => {
  const r = await fetch(`${worker.url}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "Claude \u202Eedoc\u202C\u200B", redirect_uris: ["https://app.example/cb"] }),
  });
  assert.equal(r.status, 201);
  const { client_id: clientId, client_name: name } = await r.json();
  assert.equal(name, "Claude edoc");
  const page = await (await fetch(authorizeUrl(validParams(clientId, "https://app.example/cb", pkce().challenge)))).text();
  assert.doesNotMatch(page, /[\u202A-\u202E\u200B-\u200F]/);
  const idn = await register(["https://\u0430pple.com/cb"]);
  assert.equal(idn.status, 400);
  assert.equal((await idn.json()).error, "invalid_redirect_uri");
});

test("a sealed registration is its own client id: tampered or forged ids are unknown clients", async () => {
  const clientId = await registered(["https://app.example/cb"]);
  assert.ok(clientId.startsWith("mcp_c_"), clientId);
  const flipped = clientId.slice(0, -3) + (clientId.at(-3) === "A" ? "B" : "A") + clientId.slice(-2);
  for (const id of [flipped, `${clientId}x`, "mcp_c_", "0123456789abcdef0123456789abcdef", "x".repeat(600)]) {
    const r = await fetch(authorizeUrl(validParams(id, "https://app.example/cb", pkce().challenge)), { redirect: "manual" });
    const body = await r.text();
    assert.equal(r.status, 400, id);
    assert.match(body, /client_id is not registered/, id);
  }
  const big = await register(Array.from({ length: 10 }, (_, i) => `https://app${i}.example/${"p".repeat(150)}`));
  assert.equal(big.status, 400);
  assert.equal((await big.json()).error, "invalid_client_metadata");
});

test("registrations and authorization requests are limited per address, with Retry-After", async () => {
  const address = { "CF-Connecting-IP": "203.0.113.7" };
  const statuses = [];
  for (let i = 0; i <= LIMIT; i++) statuses.push((await register(["http://127.0.0.1:9/cb"], limited.url, address)).status);
  assert.deepEqual(statuses, [...Array(LIMIT).fill(201), 429]);
  const refused = await register(["http://127.0.0.1:9/cb"], limited.url, address);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "60");
  const body = await refused.json();
  assert.equal(body.error, "temporarily_unavailable");
  const authorize = await fetch(`${limited.url}/oauth/authorize?client_id=x`, { headers: address, redirect: "manual" });
  assert.equal(authorize.status, 429);
  assert.equal(authorize.headers.get("location"), null);
  for (const [method, path] of [["POST", "/oauth/authorize"], ["GET", "/oauth/callback?state=x&code=y"]]) {
    const r = await fetch(`${limited.url}${path}`, { method, headers: address, redirect: "manual" });
    assert.equal(r.status, 429, `${method} ${path}`);
  }
  // An IPv6 caller is counted by its /48: another address in it, in another /64, does not
  // start afresh.
  const v6 = (n) => ({ "CF-Connecting-IP": `2001:db8:5:${n}::1` });
  const v6Statuses = [];
  for (let i = 0; i <= LIMIT; i++) v6Statuses.push((await register(["http://127.0.0.1:9/cb"], limited.url, v6(i + 1))).status);
  assert.deepEqual(v6Statuses, [...Array(LIMIT).fill(201), 429]);
  // The token endpoint, which a signed-in client needs, is counted apart: the address's
  // registrations do not hold back its refresh grants, and its own limit holds.
  const token = () => fetch(`${limited.url}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...address },
    body: "grant_type=refresh_token&refresh_token=mcp_rt_x&client_id=x",
  }).then(async (r) => { await r.arrayBuffer(); return r.status; });
  const tokenStatuses = [];
  for (let i = 0; i <= LIMIT; i++) tokenStatuses.push(await token());
  assert.deepEqual(tokenStatuses, [...Array(LIMIT).fill(400), 429]);
});
