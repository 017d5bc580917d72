// A headless stand-in for the person at the browser during an OAuth sign-in against the worker:
// it opens the authorization URL, approves the consent page (sending back its sealed request with
// the cookie the page set, as a browser does), and follows the redirects through the identity
// provider (the fake upstream's, which approves at once), and through Atlassian's consent when the
// worker chains it (approved at once too), until the worker sends it back to the client. The
// cookie goes with every request to the worker, as a browser sends a SameSite=Lax cookie on
// top-level navigations.

import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** The hidden field `name` of the consent page. */
function field(html, name) {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`the consent page has no ${name} field: ${html.slice(0, 400)}`);
  return m[1];
}

/**
 * Signs in at `authorizeUrl` (the worker's /oauth/authorize with the client's parameters) and
 * returns the URL the worker finally redirects to: the client's redirect URI with `code`,
 * `state` and `iss` (or `error`). Redirects are followed while they stay on the worker's or the
 * provider's origin (`providerOrigin`); the client's redirect URI is returned, not opened.
 */
export async function signInHeadless(authorizeUrl, providerOrigin) {
  const worker = new URL(authorizeUrl).origin;
  const consent = await fetch(authorizeUrl, { redirect: "manual" });
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`consent page: HTTP ${consent.status}: ${html.slice(0, 400)}`);
  const cookie = (consent.headers.get("set-cookie") ?? "").split(";")[0];
  let response = await fetch(`${worker}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
    body: new URLSearchParams({ request: field(html, "request"), action: "approve" }),
  });
  for (let hops = 0; hops < 5; hops++) {
    const location = response.headers.get("location");
    if (![302, 303].includes(response.status) || !location) {
      throw new Error(`sign-in stopped with HTTP ${response.status}: ${(await response.text()).slice(0, 400)}`);
    }
    await response.arrayBuffer();
    const next = new URL(location, response.url || worker);
    if (next.origin !== worker && next.origin !== providerOrigin) return next.toString();
    response = await fetch(next, { redirect: "manual", headers: next.origin === worker ? { Cookie: cookie } : {} });
  }
  throw new Error("sign-in redirected too many times");
}

/**
 * A sign-in as a public client would do it, without an SDK, up to the code: registers a client
 * (unless `clientId` is given, such as a Client ID Metadata Document URL) and signs in headless
 * with PKCE S256. Returns the code and what its exchange needs: `clientId`, `redirect`, `verifier`.
 */
export async function signInForCode(workerUrl, providerOrigin, { clientId: given } = {}) {
  const redirect = "http://127.0.0.1:9/callback";
  let clientId = given;
  if (!clientId) {
    const registered = await fetch(`${workerUrl}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "headless", redirect_uris: [redirect] }),
    });
    if (registered.status !== 201) throw new Error(`registration: HTTP ${registered.status}`);
    ({ client_id: clientId } = await registered.json());
  }
  const { verifier, challenge } = pkce();
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirect,
    code_challenge: challenge, code_challenge_method: "S256", state: "s", resource: `${workerUrl}/mcp` });
  const back = new URL(await signInHeadless(`${workerUrl}/oauth/authorize?${query}`, providerOrigin));
  const code = back.searchParams.get("code");
  if (!code) throw new Error(`sign-in refused: ${back}`);
  return { code, clientId, redirect, verifier };
}

/** The token endpoint's form for exchanging `code` (a `signInForCode` result). */
export function codeExchange({ code, clientId, redirect, verifier }) {
  return new URLSearchParams({ grant_type: "authorization_code", code, client_id: clientId, redirect_uri: redirect,
    code_verifier: verifier });
}

/**
 * A whole sign-in as a public client would do it, without an SDK: `signInForCode`, then the
 * code's exchange. Returns the token answer and the client id.
 */
export async function signInForTokens(workerUrl, providerOrigin, options = {}) {
  const signedIn = await signInForCode(workerUrl, providerOrigin, options);
  const answer = await fetch(`${workerUrl}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: codeExchange(signedIn),
  });
  if (answer.status !== 200) throw new Error(`token: HTTP ${answer.status}: ${await answer.text()}`);
  return { clientId: signedIn.clientId, tokens: await answer.json() };
}

/** A PKCE S256 pair: a fresh `verifier` and its `challenge`. */
export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/**
 * A browser played by hand: fetches without following redirects and keeps the cookies that
 * `origin` (the worker) sets, sending them back to it only, as a real browser keeps them per site.
 */
export function browser(origin) {
  const jar = new Map();
  return {
    jar,
    async go(url, init = {}) {
      const target = new URL(url);
      const headers = { ...(init.headers ?? {}) };
      if (target.origin === origin && jar.size > 0) {
        headers.Cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
      }
      const response = await fetch(target, { ...init, headers, redirect: "manual" });
      if (target.origin === origin) {
        for (const line of response.headers.getSetCookie()) {
          const [pair, ...attributes] = line.split(";");
          const [name, value] = pair.split("=");
          if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) jar.delete(name.trim());
          else jar.set(name.trim(), value);
        }
      }
      return response;
    },
  };
}

/** The consent form's fields as a browser submits them (every hidden field the page has). */
export function consentForm(html, action = "approve") {
  const hidden = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)];
  return new URLSearchParams([...hidden.map((m) => [m[1], m[2]]), ["action", action]]);
}

/**
 * The settings of a worker whose people would sign in at github.com (never reached: for tests of
 * what the sign-in endpoints refuse before any provider is asked), octocat allowed.
 */
export const UNREACHED_SIGN_IN_VARS = {
  MCP_OAUTH_ISSUER: "http://127.0.0.1:8787",
  MCP_OAUTH_ENCRYPTION_KEY: "e2e-oauth-key-0123456789abcdef0123456789",
  MCP_OAUTH_PROVIDER: "github",
  MCP_OAUTH_CLIENT_ID: "Iv1.e2e",
  MCP_OAUTH_CLIENT_SECRET: "e2e-client-secret",
  MCP_OAUTH_ALLOWED_USERS: "octocat",
  // Sign-in through github.com needs the GitHub tools on the same GitHub.
  GITHUB_API_URL: "https://api.github.com",
};

/**
 * The settings of a worker whose people sign in with the fake upstream's GitHub-shaped provider
 * (its issuer is set once the worker's URL is known); the allow-list and policy are the caller's.
 */
export function githubSignInVars(upstream) {
  return {
    MCP_OAUTH_ISSUER: "http://127.0.0.1:1",
    MCP_OAUTH_ENCRYPTION_KEY: "e2e-oauth-key-0123456789abcdef0123456789",
    MCP_OAUTH_PROVIDER: "github",
    MCP_OAUTH_GITHUB_URL: upstream.url,
    MCP_OAUTH_CLIENT_ID: "Iv1.e2e",
    MCP_OAUTH_CLIENT_SECRET: "e2e-client-secret",
    GITHUB_API_URL: upstream.url,
  };
}

/** The settings that chain Atlassian's consent (the fake upstream's) after the sign-in. */
export function atlassianSignInVars(upstream) {
  return {
    ATLASSIAN_BASE_URL: upstream.url,
    MCP_OAUTH_ATLASSIAN_CLIENT_ID: "atl-e2e",
    MCP_OAUTH_ATLASSIAN_CLIENT_SECRET: "atl-e2e-secret",
    MCP_OAUTH_ATLASSIAN_AUTH_URL: `${upstream.url}/atlassian-auth`,
    MCP_OAUTH_ATLASSIAN_API_URL: `${upstream.url}/atlassian-api`,
  };
}

/** One tool call through the official client on `worker` with the bearer `accessToken`. */
export async function callAs(worker, accessToken, name, args) {
  const client = new Client({ name: "e2e-signed-in", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
  }));
  try {
    return await client.callTool({ name, arguments: args });
  } finally {
    await client.close();
  }
}
