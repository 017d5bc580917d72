// What bench/tools-latency.mjs and bench/builds-latency.mjs share: the trivial fetch-and-return
// worker both measure against, the headline cases, the fake upstream serving each case's body from
// memory, and one timed POST.

import { Miniflare } from "miniflare";
import { performance } from "node:perf_hooks";
import { startFakeUpstream } from "../../tests/e2e/fake-upstream.mjs";
import { CREDENTIALS, vendorUrls } from "../../tests/e2e/tools-common.mjs";

export const TOKEN = "bench-token-0123456789abcdef";

// Reads {url, headers} from the request, fetches it and returns the body, as the baseline for
// "what a worker pays to fetch this URL at all".
const TRIVIAL = `export default {
  async fetch(request) {
    const { url, headers } = await request.json();
    const upstream = await fetch(url, { headers });
    return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers: { "Content-Type": "application/json" } });
  },
};`;

export const RUNS_PATH = "/repos/octo-org/hello-world/actions/runs";
export const RUNS_100 = { owner: "octo-org", repo: "hello-world", perPage: 100 };
export const JQ_ROWS = "workflow_runs[*].{id: id, status: status, conclusion: conclusion}";

/** The headline cases: the 300 KB runs page, the same with a typical jq, a 50-issue jira_get search. */
export function headlineCases() {
  return [
    { name: "github runs, 100 (~300 KB)", tool: "github_list_workflow_runs", args: RUNS_100, upstream: `${RUNS_PATH}?per_page=100` },
    { name: "github runs, 100, jq", tool: "github_list_workflow_runs", args: { ...RUNS_100, jq: JQ_ROWS }, upstream: `${RUNS_PATH}?per_page=100` },
    {
      name: "jira_get search, 50 issues",
      tool: "jira_get",
      args: { path: "/rest/api/3/search/jql", queryParams: { jql: "project = PROJ ORDER BY key", maxResults: "50" } },
      upstream: "/rest/api/3/search/jql?jql=project+%3D+PROJ+ORDER+BY+key&maxResults=50",
    },
  ];
}

export const MCP_HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${TOKEN}`,
  "MCP-Protocol-Version": "2025-06-18",
};

/** The JSON-RPC `tools/call` body of a case. */
export const callBody = (c) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: c.tool, arguments: c.args } });

/** The `result` of a tools/call reply; throws, naming `label`, when the call failed. */
export function toolResult(text, label) {
  const reply = JSON.parse(text);
  if (!reply.result || reply.result.isError) throw new Error(`${label} failed: ${text.slice(0, 300)}`);
  return reply.result;
}

/**
 * Milliseconds the benches wait after each tool call before the next request. A call may leave
 * work running after its reply (the artifact write under `waitUntil`); Miniflare's R2 simulator
 * does that write on the worker's own thread, where R2 would do it across the network, so
 * without a pause it lands on the clock of whichever call comes next. Clients space their calls
 * by far more (a model reads each reply); tools-latency.mjs also reports a case without the pause.
 */
export const SETTLE_MS = 75;

/** Waits {@link SETTLE_MS}. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/** POSTs `body`; returns the milliseconds to the end of the reply and its text. Throws on a status other than 200. */
export async function timed(url, body, headers) {
  const start = performance.now();
  const r = await fetch(url, { method: "POST", body, headers });
  const text = await r.text();
  const ms = performance.now() - start;
  if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}: ${text.slice(0, 200)}`);
  return { ms, text };
}

/**
 * Starts the fake upstream with every case's URL served from memory: the body (and Link header)
 * fetched once from the fake's generator, so the upstream's own cost is the same on both sides.
 * Sets `bytes` on each case. Returns { upstream, settings } (the worker settings that point at it).
 */
export async function frozenUpstream(cases) {
  const upstream = await startFakeUpstream();
  for (const c of cases) {
    const r = await fetch(`${upstream.url}${c.upstream}`);
    const body = Buffer.from(await r.arrayBuffer());
    const headers = { "Content-Type": "application/json; charset=utf-8", "Content-Length": body.length };
    if (r.headers.get("link")) headers.Link = r.headers.get("link");
    c.bytes = body.length;
    const path = c.upstream.split("?")[0];
    upstream.route("GET", new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`), (req, res) => {
      res.writeHead(200, headers);
      res.end(body);
    });
  }
  const settings = { MCP_AUTH_TOKENS: JSON.stringify({ bench: TOKEN }), ...vendorUrls(upstream), ...CREDENTIALS };
  return { upstream, settings };
}

/** The trivial worker in workerd: { url, fetchBody(c), dispose() }. */
export async function startTrivial(upstream) {
  const mf = new Miniflare({ modules: true, script: TRIVIAL, host: "127.0.0.1", port: 0 });
  const url = (await mf.ready).toString();
  return {
    url,
    fetchBody: (c) => JSON.stringify({ url: `${upstream.url}${c.upstream}`, headers: { Accept: "application/json" } }),
    dispose: () => mf.dispose(),
  };
}
