// Runs the built worker (build/index.js + index_bg.wasm, from `make build`) in workerd through
// Miniflare, with in-memory KV and R2 bound under the names wrangler.toml uses, on 127.0.0.1.

import { Miniflare, fetch as forwardFetch } from "miniflare";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The compatibility date and flags from wrangler.toml, as Miniflare options, so tests run the
 * runtime behaviour we deploy.
 */
export function compatibility() {
  const toml = readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml);
  if (!date) throw new Error("wrangler.toml has no compatibility_date");
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml);
  return {
    compatibilityDate: date[1],
    compatibilityFlags: flags ? [...flags[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]) : [],
  };
}

/**
 * Starts the worker with `vars` as its settings (strings, like wrangler vars and secrets).
 * `onLog(line)`, when given, receives each line the worker logs (instead of the console).
 * `stores: false` leaves out the KV and R2 bindings and the Durable Objects (the approval ledger,
 * APPROVALS, and the claims of sign-in's one-time credentials, CLAIMS), as a misconfigured
 * deployment would; `ledger: false` leaves out only the ledger, `claims: false` only the claims.
 * `persist`, a directory, keeps the Durable Objects' storage there (SQLite files), for tests that
 * read what they hold at rest.
 * `kvNamespaces` names further KV bindings (e.g. the policy and approval stores); reach one with
 * `mf.getKVNamespace(name)` to seed or inspect it.
 * `wrapped` maps a store binding (`ARTIFACTS`, `HTTP_CACHE` or one of `kvNamespaces`) to an ES
 * module's source; the binding becomes the object its default export returns when called with
 * `{ INNER }` (a real in-memory store of the same kind, R2 or KV), built in a worker of its own:
 * a stand-in store for fault and race tests that can delegate to INNER. Reach INNER with
 * `mf.getKVNamespace("INNER", standIn(binding))` (or getR2Bucket).
 * `port: 0` (the default) lets the runtime pick a free port; `url` reports it. `setVars(more)`
 * restarts the worker with `more` added to its settings on the same port, for settings that
 * must name the port (such as allowed origins).
 * `outbound` (an array), when given, receives `{ method, url }` for every request the worker
 * sends anywhere, before it is forwarded unchanged (redirects included, never followed here):
 * what left the worker, whether or not a server answered it.
 * `twin: true` runs a second copy of the worker in an isolate of its own, with the same settings,
 * stores and Durable Objects (the objects of the first copy's classes), as another isolate or
 * location of a deployment would; `twinFetch(url, init)` sends a request to it.
 * `build` names the build directory to run (default `build`, the release build; `build-probe` is
 * the test build of `make build-probe`).
 * Returns { url, mcpUrl, mf, setVars, twinFetch, close }. Throws when the build is missing.
 */
export async function startWorker({ vars = {}, port = 0, onLog, stores = true, kvNamespaces = [], wrapped = {}, outbound, twin = false, ledger = true, claims = true, persist, build = "build", rateLimit } = {}) {
  const dir = path.join(ROOT, build);
  if (!existsSync(path.join(dir, "index.js"))) {
    throw new Error(`${build}/index.js is missing: run \`make ${build}\` first`);
  }
  const objects = { ...(ledger ? { [APPROVALS_BINDING]: APPROVALS_CLASS } : {}), ...(claims ? { [CLAIMS_BINDING]: CLAIMS_CLASS } : {}) };
  const main = {
    name: "devtools-mcp-edge",
    modules: true,
    scriptPath: path.join(dir, "index.js"),
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }],
    ...compatibility(),
    ...(stores
      ? { kvNamespaces: ["HTTP_CACHE", ...kvNamespaces], r2Buckets: ["ARTIFACTS"], durableObjects: objects }
      : { kvNamespaces }),
    wrappedBindings: Object.fromEntries(Object.keys(wrapped).map((binding) => [binding, standIn(binding)])),
    ...(outbound ? { outboundService: (request) => record(outbound, request) } : {}),
    bindings: vars,
    // The OAUTH_RATE_LIMIT binding of wrangler.toml, with the limit a test asks for.
    ...(rateLimit ? { ratelimits: { OAUTH_RATE_LIMIT: { simple: { limit: rateLimit, period: 60 } } } } : {}),
  };
  const shared = {
    host: "127.0.0.1",
    port,
    ...(persist ? { durableObjectsPersist: persist } : {}),
    ...(onLog ? { handleStructuredLogs: ({ message }) => { onLog(message); } } : {}),
  };
  for (const binding of Object.keys(wrapped)) {
    const kinds = { kvNamespaces: main.kvNamespaces ?? [], r2Buckets: main.r2Buckets ?? [] };
    const kind = Object.keys(kinds).find((k) => kinds[k].includes(binding));
    if (!kind) throw new Error(`wrapped: ${binding} is not a store binding of this worker`);
    main[kind] = kinds[kind].filter((b) => b !== binding);
  }
  // A wrapped binding's module lives in a worker of its own, so that case needs the multi-worker form.
  const standIns = Object.entries(wrapped).map(([binding, script]) => ({
    name: standIn(binding),
    modules: true,
    script,
    ...(binding === "ARTIFACTS" ? { r2Buckets: ["INNER"] } : { kvNamespaces: ["INNER"] }),
  }));
  // The twin is built when the options are, so that it follows setVars.
  const twins = () => (twin
    ? [{ ...main, name: TWIN, durableObjects: Object.fromEntries(Object.entries(main.durableObjects ?? {})
      .map(([binding, className]) => [binding, { className, scriptName: main.name }])) }]
    : []);
  const options = () => {
    const others = [...twins(), ...standIns];
    return others.length > 0 ? { ...shared, workers: [main, ...others] } : { ...shared, ...main };
  };
  const mf = new Miniflare(options());
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const setVars = async (more) => {
    main.bindings = { ...main.bindings, ...more };
    // Miniflare keeps a runtime-picked port across setOptions when port 0 is asked for again.
    await mf.setOptions(options());
    const now = (await mf.ready).toString().replace(/\/$/, "");
    if (now !== url) throw new Error(`the worker moved from ${url} to ${now} when its settings changed`);
  };
  const twinFetch = async (target, init) => (await mf.getWorker(TWIN)).fetch(target, init);
  return { url, mcpUrl: `${url}/mcp`, mf, setVars, twinFetch, close: () => mf.dispose() };
}

/** The approval ledger's binding and class, as in wrangler.toml. */
export const APPROVALS_BINDING = "APPROVALS";
const APPROVALS_CLASS = "ApprovalsObject";
/** The binding and class of the claims that spend codes and refresh tokens, as in wrangler.toml. */
const CLAIMS_BINDING = "CLAIMS";
const CLAIMS_CLASS = "ClaimObject";
/** The name of the second copy of the worker (`twin`). */
const TWIN = "devtools-mcp-edge-twin";

/**
 * Sends one ledger op (src/ledger.rs, `Op`, as JSON) straight to the approval ledger object of
 * `mf`, as the worker does, and returns the parsed reply. Tests use it to move the ledger's clock
 * on: an op carrying a later `nowMs` drops every record expired by then, as the ledger does for
 * the worker's own ops once that time has come.
 */
export async function ledgerOp(mf, op) {
  const ns = await mf.getDurableObjectNamespace(APPROVALS_BINDING);
  const stub = ns.get(ns.idFromName("ledger"));
  const r = await stub.fetch("https://approvals.internal/op", { method: "POST", body: JSON.stringify(op) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`ledger op ${op.op}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** The name of the worker that holds the stand-in for store `binding`. */
/**
 * An ARTIFACTS stand-in (for `wrapped`) that delays every write by `ms`, then writes to INNER.
 * Even with no delay a write crosses a binding to another worker.
 */
export const slowBucket = (ms) => `
class R2Bucket {
  constructor(inner) { this.inner = inner; }
  async put(...args) {
    if (${ms} > 0) await new Promise((resolve) => setTimeout(resolve, ${ms}));
    return this.inner.put(...args);
  }
  get(...args) { return this.inner.get(...args); }
  head(...args) { return this.inner.head(...args); }
  list(...args) { return this.inner.list(...args); }
}
export default function (env) { return new R2Bucket(env.INNER); }
`;

export const standIn = (binding) => `${binding.toLowerCase().replaceAll("_", "-")}-stand-in`;

/** Notes `request` in `log`, then sends it on as it is and returns the answer as it is. */
async function record(log, request) {
  log.push({ method: request.method, url: request.url });
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  return forwardFetch(request.url, { method: request.method, headers: request.headers, body, redirect: "manual" });
}

/**
 * Polls `check` (sync or async) until it returns a truthy value, and returns that value; throws
 * naming `what` after `tries` attempts 10 ms apart. For what the worker does after its response
 * (cache writes in ctx.waitUntil), which a client cannot otherwise wait for: a fixed sleep
 * either wastes time or, on a loaded machine, lets a check run before the write and pass
 * vacuously.
 */
export async function eventually(check, what, tries = 1000) {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`still not so after ${tries} polls: ${what}`);
}

/** The worker's HTTP_CACHE entries as KV lists them: key -> metadata (as JSON text). */
export async function cacheEntries(mf) {
  const kv = await mf.getKVNamespace("HTTP_CACHE");
  const { keys } = await kv.list();
  return new Map(keys.map((k) => [k.name, JSON.stringify(k.metadata ?? null)]));
}

/** The keys added or rewritten in `after` since `before` (two `cacheEntries` results). */
export function cacheChanges(before, after) {
  return [...after].filter(([k, meta]) => before.get(k) !== meta).map(([k]) => k);
}

/**
 * Runs `call` (a tool call that should cache what it read), waits until the entry it writes
 * after its response is in HTTP_CACHE (added, or rewritten with a new fetchedAt), and returns
 * the call's result.
 */
export async function cached(mf, call) {
  const before = await cacheEntries(mf);
  const result = await call();
  await eventually(async () => cacheChanges(before, await cacheEntries(mf)).length > 0, "the call's cache entry is written");
  return result;
}
