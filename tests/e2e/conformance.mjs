// Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, server
// scenarios) against the built worker in workerd, once per requirement set: 2025-11-25 (the
// initialize handshake) and 2026-07-28 (stateless, per-request _meta); then its authorization
// server scenarios against a worker with OAuth sign-in on. `make conformance`.
//
// A requirement set names the scenarios a revision requires (scored) and some it only runs for
// visibility (not scored). No scored check may fail, except the ones listed with a reason in
// conformance-expected-failures.json; the run also fails when a listed failure no longer happens
// (or no longer runs), so the list cannot go stale. Warnings (missed SHOULDs) and not-scored
// scenarios are reported and do not fail the run, as in the suite's own requirement scoring.
//
// The suite sends no Authorization header, so the worker runs with MCP_ALLOW_ANONYMOUS=true,
// which admits credential-less requests addressed to a loopback host only; it is never on by
// default. The suite needs Node 22: scripts/tools.sh installs one under .tools/node22.
//
// The authorization scenarios (metadata, and the authorization code grant with PKCE) run against
// a second worker whose issuer is its own loopback origin, signing in through the fake upstream's
// GitHub-shaped identity provider. The suite prints the authorization URL and waits for a
// browser to come back to its callback; tests/e2e/oauth-browser.mjs plays that browser
// (consent approved, provider followed, the final redirect opened). Every check must pass.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServer } from "node:net";
import { ROOT, startWorker } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { signInHeadless } from "./oauth-browser.mjs";

/** The requirement sets this server is held to, oldest first. */
export const REVISIONS = ["2025-11-25", "2026-07-28"];

/** The suite's authorization server scenarios; all are scored, none may fail. */
export const AUTHORIZATION_SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"];

const SUITE = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance");
const EXPECTED = path.join(ROOT, "tests/e2e/conformance-expected-failures.json");

/** The check every scenario adds: each message the server sent is valid per the revision's schema. */
const WIRE_SCHEMA = "wire-schema-valid";

/** A check counts as failed when the suite marks it FAILURE (a WARNING is a missed SHOULD). */
const failed = (check) => check.status === "FAILURE";

/**
 * The scored server scenarios of a requirement set: the `server:` list of the suite's frozen
 * requirements/<revision>.yaml (a plain list of names, read without a YAML library).
 */
export function scoredScenarios(revision) {
  const lines = readFileSync(path.join(SUITE, "requirements", `${revision}.yaml`), "utf8").split("\n");
  const start = lines.indexOf("server:");
  if (start < 0) throw new Error(`requirements/${revision}.yaml has no server: list`);
  const names = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^ {2}- ([\w./-]+)\s*$/.exec(line);
    if (!m) break;
    names.push(m[1]);
  }
  if (names.length === 0) throw new Error(`requirements/${revision}.yaml lists no server scenarios`);
  return names;
}

/**
 * The expected failures of one revision: [{ scenario, check?, reason }]. An entry without
 * `check` excuses the whole scenario; every entry needs a reason.
 */
export function expectedFailures(revision) {
  const all = JSON.parse(readFileSync(EXPECTED, "utf8"));
  const entries = all[revision];
  if (!Array.isArray(entries)) throw new Error(`${EXPECTED} has no list for ${revision}`);
  for (const e of entries) {
    if (typeof e.scenario !== "string" || typeof e.reason !== "string" || !e.reason.trim()) {
      throw new Error(`${EXPECTED}: every ${revision} entry needs a scenario and a reason: ${JSON.stringify(e)}`);
    }
  }
  return entries;
}

/**
 * The suite's checks per scenario, from the checks.json files its -o directory holds (named
 * `<kind>-<scenario>-<time>`; kind is `server` or `authorization-server`).
 */
function readResults(dir, kind = "server") {
  const results = new Map();
  for (const name of readdirSync(dir)) {
    const m = new RegExp(`^${kind}-(.+)-\\d{4}-\\d{2}-\\d{2}T[\\d-]+Z$`).exec(name);
    if (!m) continue;
    results.set(m[1], JSON.parse(readFileSync(path.join(dir, name, "checks.json"), "utf8")));
  }
  return results;
}

/**
 * Judges one revision's run: every failing scored check must be listed, every listed failure
 * must still fail, and every listed scenario must be scored. A scenario listed whole still may
 * not fail its wire-schema check. Returns { rows, problems }.
 */
export function judge(revision, results, scored, expected) {
  const problems = [];
  const rows = [];
  for (const e of expected) {
    if (!scored.includes(e.scenario)) {
      problems.push(`${e.scenario}: listed as an expected failure, but ${revision} does not score it`);
    }
  }
  for (const scenario of [...scored, ...[...results.keys()].filter((s) => !scored.includes(s))]) {
    const checks = results.get(scenario);
    const isScored = scored.includes(scenario);
    if (!checks) {
      if (isScored) problems.push(`${scenario}: did not run (no checks.json)`);
      continue;
    }
    const judged = checks.filter((c) => c.status !== "INFO" && c.status !== "SKIPPED");
    const failing = judged.filter(failed);
    const excuses = expected.filter((e) => e.scenario === scenario);
    const whole = excuses.find((e) => !e.check);
    let verdict = failing.length === 0 ? "pass" : "FAIL";
    if (!isScored) {
      verdict = failing.length === 0 ? "pass (not scored)" : "fail (not scored)";
    } else if (whole) {
      if (failing.length === 0) problems.push(`${scenario}: listed as an expected failure, but it passes now`);
      // What the server sends must match the revision's schema whatever the scenario asked for.
      for (const c of failing.filter((c) => c.id === WIRE_SCHEMA)) {
        problems.push(`${scenario}: ${c.id} failed: ${c.errorMessage ?? c.description}`);
      }
      verdict = `expected failure: ${whole.reason}`;
    } else {
      for (const c of failing) {
        if (!excuses.some((e) => e.check === c.id)) {
          problems.push(`${scenario}: check ${c.id} failed (${c.status}): ${c.errorMessage ?? c.description}`);
        }
      }
      for (const e of excuses) {
        const found = checks.filter((c) => c.id === e.check);
        if (found.length === 0) problems.push(`${scenario}: expected failing check ${e.check} did not run`);
        else if (!found.some(failed)) problems.push(`${scenario}: expected failing check ${e.check} passes now`);
      }
      if (failing.length > 0 && failing.every((c) => excuses.some((e) => e.check === c.id))) {
        verdict = `pass except ${failing.length} expected (${[...new Set(failing.map((c) => c.id))].join(", ")})`;
      }
    }
    const warnings = judged.filter((c) => c.status === "WARNING").map((c) => c.id);
    if (warnings.length > 0) verdict += `; warnings: ${[...new Set(warnings)].join(", ")}`;
    const passed = judged.filter((c) => c.status === "SUCCESS").length;
    rows.push({ scenario, checks: `${passed}/${judged.length}`, verdict });
  }
  return { rows, problems };
}

function node22() {
  const r = spawnSync(path.join(ROOT, "scripts/tools.sh"), ["node22"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) throw new Error("could not install Node 22 (scripts/tools.sh node22)");
  return r.stdout.trim();
}

/** A free loopback port for the suite's callback server (the suite needs a number). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs the suite's authorization scenarios against a worker with OAuth on, playing the browser
 * when the suite prints its authorization URL. Returns { rows, problems, output }.
 */
export async function authorization(node, cli, out) {
  const upstream = await startFakeUpstream();
  const worker = await startWorker({
    kvNamespaces: ["OAUTH"],
    vars: {
      MCP_OAUTH_ISSUER: "http://127.0.0.1:1",
      MCP_OAUTH_ENCRYPTION_KEY: "conformance-key-0123456789abcdef0123456789",
      MCP_OAUTH_PROVIDER: "github",
      MCP_OAUTH_GITHUB_URL: upstream.url,
      GITHUB_API_URL: upstream.url,
      MCP_OAUTH_CLIENT_ID: "Iv1.conformance",
      MCP_OAUTH_CLIENT_SECRET: "conformance-client-secret",
      MCP_OAUTH_ALLOWED_USERS: upstream.idp.login,
    },
  });
  const problems = [];
  let output = "";
  try {
    // The issuer must be the origin the suite is given, which is known once the worker runs.
    await worker.setVars({ MCP_OAUTH_ISSUER: worker.url });
    const registered = await fetch(`${worker.url}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      // A loopback redirect URI matches at any port (RFC 8252), so the callback port is free.
      body: JSON.stringify({ client_name: "MCP conformance suite", redirect_uris: ["http://127.0.0.1/callback"] }),
    });
    if (registered.status !== 201) throw new Error(`registration failed: HTTP ${registered.status} ${await registered.text()}`);
    const { client_id: clientId } = await registered.json();
    const args = [cli, "authorization", "--url", worker.url, "--client-id", clientId, "--resource", worker.mcpUrl,
      "--port", String(await freePort()), "-o", out];
    const child = spawn(node, args, { stdio: ["ignore", "pipe", "pipe"] });
    const signIns = [];
    let pending = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines.map((l) => l.trim())) {
        if (!line.startsWith(`${worker.url}/oauth/authorize?`)) continue;
        signIns.push(signInHeadless(line, upstream.url)
          .then((back) => fetch(back))
          .catch((e) => problems.push(`the headless sign-in failed: ${e.message}`)));
      }
    });
    child.stderr.on("data", (chunk) => { output += chunk; });
    const timer = setTimeout(() => child.kill(), 120_000);
    const code = await new Promise((resolve) => child.on("close", resolve));
    clearTimeout(timer);
    await Promise.all(signIns);
    if (code === null) problems.push("the suite did not finish within 120 s");
    if (signIns.length === 0) problems.push("the suite printed no authorization URL to sign in at");
  } finally {
    await worker.close();
    await upstream.close();
  }
  const judged = judge("authorization", readResults(out, "authorization-server"), AUTHORIZATION_SCENARIOS, []);
  return { rows: judged.rows, problems: [...problems, ...judged.problems], output };
}

async function main() {
  const node = node22();
  const cli = path.join(SUITE, "dist/index.js");
  const worker = await startWorker({ vars: { MCP_ALLOW_ANONYMOUS: "true" } });
  const problems = [];
  const scratch = mkdtempSync(path.join(tmpdir(), "mcp-conformance-"));
  try {
    // The DNS-rebinding scenario sends the loopback origins of the port the runtime picked and
    // expects them to be accepted.
    const port = new URL(worker.url).port;
    await worker.setVars({ MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${port},http://localhost:${port}` });
    for (const revision of REVISIONS) {
      const scored = scoredScenarios(revision);
      const expected = expectedFailures(revision);
      const out = path.join(scratch, revision);
      // The suite's exit code counts the expected failures too, so the verdict is judge()'s,
      // from the checks.json files it writes under `out`.
      const r = spawnSync(node, [cli, "server", "--url", worker.mcpUrl, "--requirements", revision, "-o", out], {
        encoding: "utf8",
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      const { rows, problems: found } = judge(revision, readResults(out), scored, expected);
      if (r.error || r.signal) found.push(`the suite did not finish: ${r.error?.message ?? r.signal}`);
      if (found.length > 0) process.stdout.write(r.stdout + r.stderr);
      console.log(`\nRequirement set ${revision}: ${scored.length} scored scenarios`);
      for (const { scenario, checks, verdict } of rows) console.log(`  ${scenario.padEnd(48)} ${checks.padStart(6)}  ${verdict}`);
      problems.push(...found.map((p) => `${revision}: ${p}`));
    }
    const auth = await authorization(node, cli, path.join(scratch, "authorization"));
    if (auth.problems.length > 0) process.stdout.write(auth.output);
    console.log(`\nAuthorization server: ${AUTHORIZATION_SCENARIOS.length} scenarios, all scored`);
    for (const { scenario, checks, verdict } of auth.rows) console.log(`  ${scenario.padEnd(48)} ${checks.padStart(6)}  ${verdict}`);
    problems.push(...auth.problems.map((p) => `authorization: ${p}`));
  } finally {
    await worker.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  for (const p of problems) console.log(`PROBLEM ${p}`);
  console.log(problems.length === 0
    ? `conformance: every scored check passes or is an expected failure, for ${REVISIONS.join(" and ")} and the authorization server`
    : `conformance: ${problems.length} problem(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
