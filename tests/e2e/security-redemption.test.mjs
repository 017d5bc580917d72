// Sign-in's one-time credentials in workerd, signed in through the fake GitHub with
// oauth-browser.mjs: an authorization code, and a refresh token, redeemed at once from two isolates
// (the worker and its twin) are redeemed exactly once: one answer has tokens, the other is
// invalid_grant, and the grant is revoked, so the winner's tokens stop working too. The OAUTH
// namespace is a stand-in whose writes land late, as a KV write reaches other locations late: a
// read-then-write in KV would let both redemptions through. After a sign-in and a refresh, nothing
// in OAUTH nor in the CLAIMS objects' storage holds the person's GitHub token, the code or a token
// in clear or in base64 (the storage is read raw from disk). A refresh token is refused once its
// record says it has expired; the shortest refresh lifetime is an hour, so the record is backdated
// rather than waited for. Without the CLAIMS binding nothing is redeemed, and the error says why.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startWorker, standIn } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { codeExchange, githubSignInVars, signInForCode } from "./oauth-browser.mjs";

/** How late a write to OAUTH lands: far longer than two requests sent together take to read. */
const LATE_MS = 300;
/** An OAUTH stand-in (for `wrapped`) whose puts land LATE_MS after they are made. */
const LATE_KV = `
class LateKv {
  constructor(inner) { this.inner = inner; }
  async put(...args) {
    await new Promise((resolve) => setTimeout(resolve, ${LATE_MS}));
    return this.inner.put(...args);
  }
  get(...args) { return this.inner.get(...args); }
  getWithMetadata(...args) { return this.inner.getWithMetadata(...args); }
  list(...args) { return this.inner.list(...args); }
  delete(...args) { return this.inner.delete(...args); }
}
export default function (env) { return new LateKv(env.INNER); }
`;
const REFRESH_TTL_SECONDS = 3600;

const upstream = await startFakeUpstream();
const persist = mkdtempSync(path.join(tmpdir(), "mcp-claims-"));
const VARS = {
  ...githubSignInVars(upstream),
  MCP_OAUTH_ALLOWED_USERS: "octocat",
  MCP_OAUTH_REFRESH_TTL_SECONDS: String(REFRESH_TTL_SECONDS),
};

/** A worker with OAuth on; the issuer is the origin the client reaches, known once it started. */
async function oauthWorker(options) {
  const started = await startWorker({ kvNamespaces: ["OAUTH"], vars: VARS, ...options });
  await started.setVars({ MCP_OAUTH_ISSUER: started.url });
  return started;
}

const worker = await oauthWorker({ wrapped: { OAUTH: LATE_KV }, twin: true, persist });
after(async () => {
  await worker.close();
  await upstream.close();
  rmSync(persist, { recursive: true, force: true });
});

const oauthKv = () => worker.mf.getKVNamespace("INNER", standIn("OAUTH"));

/** POSTs `form` to the token endpoint, through the worker or (`twin`) its twin. */
async function token(form, { twin = false, to = worker } = {}) {
  const init = { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: form.toString() };
  const url = `${to.url}/oauth/token`;
  const response = twin ? await to.twinFetch(url, init) : await fetch(url, init);
  return { status: response.status, body: await response.json() };
}

const refreshForm = (clientId, refreshToken) =>
  new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });

/** The status of a `ping` to /mcp with `accessToken`. */
async function mcpStatus(accessToken) {
  const response = await fetch(worker.mcpUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The one answer with tokens of two sent at once; the other must be invalid_grant. */
function exactlyOne(answers) {
  const won = answers.filter((a) => a.status === 200);
  const lost = answers.filter((a) => a.status !== 200);
  assert.equal(won.length, 1, `exactly one redemption succeeds: ${JSON.stringify(answers)}`);
  assert.equal(lost[0].status, 400, JSON.stringify(lost[0]));
  assert.equal(lost[0].body.error, "invalid_grant", JSON.stringify(lost[0]));
  return won[0].body;
}

/** Asserts that the tokens of `tokens` (a token answer) no longer work: their grant is revoked. */
async function assertRevoked(clientId, tokens) {
  assert.equal(await mcpStatus(tokens.access_token), 401, "the access token of the revoked grant");
  const refreshed = await token(refreshForm(clientId, tokens.refresh_token));
  assert.equal(refreshed.status, 400, JSON.stringify(refreshed.body));
  assert.equal(refreshed.body.error, "invalid_grant");
}

test("one code redeemed at once in two isolates gives one token set, and revokes it", async () => {
  const signedIn = await signInForCode(worker.url, upstream.url);
  const answers = await Promise.all([token(codeExchange(signedIn)), token(codeExchange(signedIn), { twin: true })]);
  await assertRevoked(signedIn.clientId, exactlyOne(answers));
});

test("one refresh token redeemed at once in two isolates rotates once, and revokes the grant", async () => {
  const signedIn = await signInForCode(worker.url, upstream.url);
  const first = await token(codeExchange(signedIn));
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(await mcpStatus(first.body.access_token), 200);
  const form = () => refreshForm(signedIn.clientId, first.body.refresh_token);
  const answers = await Promise.all([token(form()), token(form(), { twin: true })]);
  await assertRevoked(signedIn.clientId, exactlyOne(answers));
  assert.equal(await mcpStatus(first.body.access_token), 401, "the first access token of the grant too");
});

/** `text` and what every base64 or base64url run in it decodes to. */
function readings(text) {
  const runs = text.match(/[A-Za-z0-9+/_-]{16,}/g) ?? [];
  return [text, ...runs.map((run) => Buffer.from(run, "base64").toString("latin1"))];
}

/** Every file under `dir`, recursively. */
function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

test("no token, code or upstream token is at rest in clear in OAUTH or the claims' storage", async () => {
  const before = new Set(upstream.idp.tokens.keys());
  const signedIn = await signInForCode(worker.url, upstream.url);
  const githubToken = [...upstream.idp.tokens.keys()].find((t) => !before.has(t));
  assert.ok(githubToken, "the sign-in got a GitHub token");
  const first = await token(codeExchange(signedIn));
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const second = await token(refreshForm(signedIn.clientId, first.body.refresh_token));
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(await mcpStatus(second.body.access_token), 200);
  const secrets = {
    github: githubToken,
    code: signedIn.code,
    access: first.body.access_token,
    refresh: first.body.refresh_token,
    rotatedAccess: second.body.access_token,
    rotatedRefresh: second.body.refresh_token,
  };
  const stored = [];
  const kv = await oauthKv();
  for (const { name } of (await kv.list()).keys) {
    stored.push([`OAUTH key ${name}`, name], [`OAUTH value of ${name}`, (await kv.get(name, "arrayBuffer")) ?? ""]);
  }
  // Miniflare keeps each object in its own SQLite database (with its WAL) under the class's directory.
  const claims = filesUnder(persist).filter((file) => file.split(path.sep).some((dir) => dir.endsWith("-ClaimObject")))
    .map((file) => [`claims file ${path.relative(persist, file)}`, readFileSync(file)]);
  stored.push(...claims);
  // What is read is what was written: the claims' markers, and the grant's sealed tokens.
  const holding = (text) => ([, v]) => Buffer.from(v).toString("latin1").includes(text);
  assert.ok(claims.some(holding("expires_ms")), "the claims' markers are on disk");
  assert.ok(stored.some(holding('"sealed":"')), "a sealed grant is stored");
  for (const [where, value] of stored) {
    for (const reading of readings(Buffer.from(value).toString("latin1"))) {
      for (const [what, secret] of Object.entries(secrets)) {
        assert.ok(!reading.includes(secret), `${where} holds the ${what} token in clear`);
      }
    }
  }
});

test("a refresh token is refused once its record has expired; its lifetime is the setting's", async () => {
  const signedIn = await signInForCode(worker.url, upstream.url);
  const started = Date.now();
  const first = await token(codeExchange(signedIn));
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const kv = await oauthKv();
  const key = `rt:${createHash("sha256").update(first.body.refresh_token).digest("hex")}`;
  const record = await kv.get(key, "json");
  assert.ok(record, `the refresh token's record is at ${key}`);
  const lifetime = REFRESH_TTL_SECONDS * 1000;
  assert.ok(record.expires_ms >= started + lifetime && record.expires_ms <= Date.now() + lifetime,
    `expires_ms ${record.expires_ms} is the sign-in plus MCP_OAUTH_REFRESH_TTL_SECONDS`);
  // The time it expires, come early: what the worker sees after an hour.
  await kv.put(key, JSON.stringify({ ...record, expires_ms: Date.now() - 1 }));
  const refused = await token(refreshForm(signedIn.clientId, first.body.refresh_token));
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.equal(refused.body.error, "invalid_grant");
  assert.match(refused.body.error_description, /expired/);
});

test("without the CLAIMS binding no sign-in completes, and the error names the binding", async () => {
  // The provider's answer is spent through a claim before anything else, so the sign-in stops
  // there, on the server's page; no code reaches the client to be exchanged.
  const unbound = await oauthWorker({ claims: false });
  try {
    await assert.rejects(signInForCode(unbound.url, upstream.url), /HTTP 503: .*binding CLAIMS is not configured/s);
  } finally {
    await unbound.close();
  }
});
