// Shared set-up for the vendor-tool end-to-end specs (tests/e2e/tools-*.test.mjs): the fake
// upstream, the built worker in workerd pointed at it with dummy credentials, official MCP SDK
// clients per principal, and a record of every result and log line so a spec can check that no
// credential ever leaves the worker.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startWorker } from "./worker.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";

/** Dummy vendor credentials; each is distinctive so a leak is easy to spot. */
export const CREDENTIALS = {
  GITHUB_TOKEN: "ghp_e2eGithubToken0123456789abcdefABCDEF",
  CIRCLECI_TOKEN: "CCIPAT_e2eCircleToken_0123456789abcdef",
  ATLASSIAN_USER_EMAIL: "e2e-robot@devtools.example",
  ATLASSIAN_API_TOKEN: "ATATT3xE2eAtlassianApiToken0123456789",
  ATLASSIAN_BITBUCKET_USERNAME: "e2e-bb-robot",
  ATLASSIAN_BITBUCKET_APP_PASSWORD: "ATBBe2eBitbucketAppPassword0123456789",
};

/** Bearer tokens of the MCP principals. */
export const PRINCIPALS = {
  alice: "e2e-alice-token-0123456789abcdef",
  bob: "e2e-bob-token-0123456789abcdef01",
};

/** `Basic base64(user:secret)`, as the Atlassian APIs expect. */
export function basic(user, secret) {
  return `Basic ${Buffer.from(`${user}:${secret}`).toString("base64")}`;
}

/**
 * Every string that must never appear in a result or log line: tokens, passwords, Basic values,
 * the principals' bearer tokens and any `extra` secrets (e.g. named policy identities').
 */
export function secretStrings(credentials = CREDENTIALS, principals = PRINCIPALS, extra = []) {
  const c = credentials;
  const values = [c.GITHUB_TOKEN, c.CIRCLECI_TOKEN, c.ATLASSIAN_API_TOKEN, c.ATLASSIAN_BITBUCKET_APP_PASSWORD, ...Object.values(principals), ...extra];
  const pairs = [[c.ATLASSIAN_USER_EMAIL, c.ATLASSIAN_API_TOKEN], [c.ATLASSIAN_BITBUCKET_USERNAME, c.ATLASSIAN_BITBUCKET_APP_PASSWORD]];
  for (const [u, s] of pairs) if (u && s) values.push(basic(u, s).slice("Basic ".length));
  return values.filter(Boolean);
}

/**
 * The settings that point the worker's vendors at the fake upstream; a relay in front of it has
 * no log hosts of its own, so the log-download allow-list is left unset for one.
 */
export function vendorUrls(upstream) {
  return {
    GITHUB_API_URL: upstream.url,
    CIRCLECI_API_URL: `${upstream.url}/api/v2`,
    ATLASSIAN_BASE_URL: upstream.url,
    BITBUCKET_API_URL: upstream.url,
    ...(upstream.logHosts ? { LOG_REDIRECT_HOSTS: upstream.logHosts.blobs.authority } : {}),
  };
}

/**
 * Starts the fake upstream and the worker. `vars` are added to (and override) the defaults:
 * the vendor URLs, `credentials`, and the `principals`' tokens (name -> bearer token).
 * `secrets` are further settings that hold credentials: they are set like `vars` and checked by
 * `assertNoSecrets`. `kvNamespaces` and `onLog` go to `startWorker`, and so do the `worker`
 * options (`stores`, `wrapped`, `outbound`). A given `upstream` is shared (several workers against one fake)
 * and left running by `close`. `listTools: true` lists the tools once when a client connects: the
 * SDK validates structuredContent against a tool's outputSchema only once it has listed it.
 */
export async function startStack({ vars = {}, credentials = CREDENTIALS, principals = PRINCIPALS, secrets = {}, kvNamespaces = [], onLog, upstream: shared, worker: workerOptions = {}, listTools = false } = {}) {
  const upstream = shared ?? await startFakeUpstream();
  const logs = [];
  const results = [];
  let worker;
  try {
    worker = await startWorker({
      vars: { MCP_AUTH_TOKENS: JSON.stringify(principals), ...vendorUrls(upstream), ...credentials, ...secrets, ...vars },
      onLog: (line) => { logs.push(line); onLog?.(line); },
      kvNamespaces,
      ...workerOptions,
    });
  } catch (e) {
    if (!shared) await upstream.close();
    throw e;
  }
  const clients = new Map();

  async function client(principal = "alice") {
    if (!clients.has(principal)) {
      const c = new Client({ name: `e2e-${principal}`, version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(worker.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${principals[principal]}` } },
      });
      await c.connect(transport);
      if (listTools) await c.listTools();
      clients.set(principal, c);
    }
    return clients.get(principal);
  }

  /** Calls a tool as `principal`; returns { result, text, isError }. */
  async function call(name, args = {}, principal = "alice") {
    const result = await (await client(principal)).callTool({ name, arguments: args });
    results.push(result);
    const text = result.content?.filter((b) => b.type === "text").map((b) => b.text).join("") ?? "";
    return { result, text, isError: result.isError === true };
  }

  /** Calls a tool with outputFormat json and parses the text; fails on an error result. */
  async function callJson(name, args = {}, principal = "alice") {
    const r = await call(name, { ...args, outputFormat: "json" }, principal);
    assert.equal(r.isError, false, `${name} failed: ${r.text}`);
    return JSON.parse(r.text);
  }

  /** Calls a tool and expects an error result; returns its text. */
  async function callError(name, args = {}, principal = "alice") {
    const r = await call(name, args, principal);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail, got: ${r.text.slice(0, 300)}`);
    assert.ok(r.text.length > 0, "an error result explains itself");
    return r.text;
  }

  /** Asserts that no credential appears in any result or log line seen so far. */
  function assertNoSecrets() {
    const haystack = [...results.map((r) => JSON.stringify(r)), ...logs].join("\n");
    for (const secret of secretStrings(credentials, principals, Object.values(secrets))) {
      assert.ok(!haystack.includes(secret), `a credential (${secret.slice(0, 6)}...) leaked into a result or log line`);
    }
    return { results: results.length, logs: logs.length };
  }

  async function close() {
    for (const c of clients.values()) await c.close().catch(() => {});
    await worker.close();
    if (!shared) await upstream.close();
  }

  return { upstream, worker, logs, results, client, call, callJson, callError, assertNoSecrets, close };
}

/** The vendor name each read tool's errors use. */
const VENDOR_NAME = {
  github_list_workflow_runs: "GitHub", github_list_workflow_jobs: "GitHub", circleci_get: "CircleCI",
  jira_get: "Jira", conf_get: "Confluence", bb_get: "Bitbucket",
};
const isCi = (tool) => tool.startsWith("github_") || tool === "circleci_get";

/**
 * The exact text of a GET by `tool` that failed for want of a connection (refused, reset,
 * closed without an answer): the vendor's own wording around the shared summary.
 */
export function networkErrorText(tool) {
  const name = VENDOR_NAME[tool];
  if (isCi(tool)) return `Error: Network error connecting to ${name} API: fetch failed`;
  if (tool === "bb_get") {
    return "Error: Network error while GET request the Bitbucket API. Please check your internet connection and try again. " +
      "Error details: Network error while calling Bitbucket API: fetch failed\nHTTP Status: 500";
  }
  return `Error: Network error while GET request ${name}. Please check your internet connection and try again. ` +
    `Error details: Network error connecting to ${name} API: fetch failed`;
}

/** The exact text of a GET by `tool` whose body passed UPSTREAM_MAX_BYTES (`limit`). */
export function tooLargeErrorText(tool, limit) {
  const summary = `Response size exceeds the maximum of ${limit} bytes (UPSTREAM_MAX_BYTES); request less data, e.g. smaller pages or fewer fields`;
  if (isCi(tool)) return `Error: ${summary}`;
  const text = `Error: An unexpected error occurred while GET request api. Error details: ${summary}`;
  return tool === "bb_get" ? `${text}\nHTTP Status: 413` : text;
}
