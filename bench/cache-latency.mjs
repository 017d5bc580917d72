// What a body read back from the HTTP cache costs per call, for two or more builds side by side:
// `circleci_get` cache hits and GitHub list calls answered 304 from their kept body, each of a
// small (~1 KB) and a 300 KB body, every build's call in turn and the order rotating each round.
// The figure is each build's median time of the whole call (no trivial worker: the builds are
// compared with each other, not with a bare fetch).
//
//   node bench/cache-latency.mjs [rounds] [build dir ...]   (default: 200 rounds, `build`)

import { startWorker } from "../tests/e2e/worker.mjs";
import { startFakeUpstream } from "../tests/e2e/fake-upstream.mjs";
import { CREDENTIALS, vendorUrls } from "../tests/e2e/tools-common.mjs";
import { MCP_HEADERS, TOKEN, callBody, settle, timed, toolResult } from "./lib/tool-calls.mjs";

const N = Number.parseInt(process.argv[2] ?? "200", 10);
const BUILDS = process.argv.length > 3 ? process.argv.slice(3) : ["build"];
const WARMUP = 20;
const ETAG = '"kept-1"';

/** A JSON body of about `bytes`. */
const body = (bytes) => Buffer.from(JSON.stringify({ items: Array.from({ length: Math.max(1, Math.floor(bytes / 100)) }, (_, i) => ({ id: i, name: "n".repeat(80) })) }));

const upstream = await startFakeUpstream();
const cases = [];
for (const [label, bytes] of [["1 KB", 1000], ["300 KB", 300_000]]) {
  const page = body(bytes);
  const name = label.replace(" ", "");
  upstream.route("GET", new RegExp(`^/api/v2/bench-${name}$`), (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": page.length });
    res.end(page);
  });
  upstream.route("GET", new RegExp(`^/repos/octo-org/bench-${name}/actions/runs`), (req, res) => {
    if (req.headers["if-none-match"] === ETAG) {
      res.writeHead(304, { ETag: ETAG });
      return res.end();
    }
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": page.length, ETag: ETAG });
    res.end(page);
  });
  cases.push({ name: `circleci_get hit, ${label}`, tool: "circleci_get", args: { path: `/bench-${name}` }, path: new RegExp(`^/api/v2/bench-${name}$`) });
  cases.push({ name: `github 304 from the kept body, ${label}`, tool: "github_list_workflow_runs", args: { owner: "octo-org", repo: `bench-${name}` }, path: new RegExp(`^/repos/octo-org/bench-${name}/`) });
}
const settings = { MCP_AUTH_TOKENS: JSON.stringify({ bench: TOKEN }), HTTP_CACHE_TTL_SECONDS: "3600", ...vendorUrls(upstream), ...CREDENTIALS };
const workers = [];
for (const build of BUILDS) workers.push(await startWorker({ vars: settings, onLog: () => {}, build }));

const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)];
const rows = [];
try {
  for (const c of cases) {
    const call = callBody(c);
    // The entry is written after the reply: one call fills it, and a pause lets the write land.
    for (const w of workers) {
      await timed(w.mcpUrl, call, MCP_HEADERS);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // Requests the cache did not answer: a circleci_get that went out, a GitHub GET not conditional.
    const unanswered = () => upstream.matching("GET", c.path).filter((r) => !r.headers["if-none-match"]).length;
    const fetched = unanswered();
    const ms = BUILDS.map(() => []);
    for (let i = 0; i < WARMUP + N; i++) {
      for (let j = 0; j < BUILDS.length; j++) {
        const k = (i + j) % BUILDS.length;
        const { ms: t, text } = await timed(workers[k].mcpUrl, call, MCP_HEADERS);
        toolResult(text, `${BUILDS[k]}: ${c.name}`);
        if (i >= WARMUP) ms[k].push(t);
        await settle();
      }
    }
    if (unanswered() !== fetched) throw new Error(`${c.name}: not every call was answered from the cache`);
    rows.push({ name: c.name, medians: ms.map(median) });
  }
  console.log(`| case | ${BUILDS.join(" | ")} |`);
  console.log(`| --- |${BUILDS.map(() => " ---: |").join("")}`);
  for (const r of rows) console.log(`| ${r.name} | ${r.medians.map((m) => `${m.toFixed(2)} ms`).join(" | ")} |`);
  console.log(`(${N} rounds per case, after ${WARMUP}; every call answered from the cache)`);
} finally {
  for (const w of workers) await w.close();
  await upstream.close();
}
