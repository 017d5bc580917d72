// Runs the built worker (build/index.js + index_bg.wasm, from `make build`) in workerd through
// Miniflare, with in-memory KV and R2 bound under the names wrangler.toml uses, on 127.0.0.1.

import { Miniflare } from "miniflare";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BUILD = path.join(ROOT, "build");

/** The compatibility date from wrangler.toml, so tests run the runtime behaviour we deploy. */
function compatibilityDate() {
  const toml = readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
  const m = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml);
  if (!m) throw new Error("wrangler.toml has no compatibility_date");
  return m[1];
}

/**
 * Starts the worker with `vars` as its settings (strings, like wrangler vars and secrets).
 * `onLog(line)`, when given, receives each line the worker logs (instead of the console).
 * `stores: false` leaves out the KV and R2 bindings, as a misconfigured deployment would.
 * `kvNamespaces` names further KV bindings (e.g. the policy and approval stores); reach one with
 * `mf.getKVNamespace(name)` to seed or inspect it.
 * `wrapped` (an ES module's source) replaces the ARTIFACTS bucket with the object its default
 * export returns when called with `{ INNER }` (a real in-memory R2 bucket), built in the worker's
 * own isolate: a stand-in bucket for fault tests that can delegate to INNER.
 * `port: 0` (the default) lets the runtime pick a free port; `url` reports it. `setVars(more)`
 * restarts the worker with `more` added to its settings on the same port, for settings that
 * must name the port (such as allowed origins).
 * Returns { url, mcpUrl, mf, setVars, close }. Throws when the build is missing.
 */
export async function startWorker({ vars = {}, port = 0, onLog, stores = true, kvNamespaces = [], wrapped } = {}) {
  if (!existsSync(path.join(BUILD, "index.js"))) {
    throw new Error("build/index.js is missing: run `make build` first");
  }
  const main = {
    name: "devtools-mcp-edge",
    modules: true,
    scriptPath: path.join(BUILD, "index.js"),
    modulesRoot: BUILD,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }],
    compatibilityDate: compatibilityDate(),
    ...(stores ? { kvNamespaces: ["HTTP_CACHE", ...kvNamespaces], r2Buckets: wrapped ? [] : ["ARTIFACTS"] } : { kvNamespaces }),
    ...(wrapped ? { wrappedBindings: { ARTIFACTS: "artifacts-stand-in" } } : {}),
    bindings: vars,
  };
  const shared = {
    host: "127.0.0.1",
    port,
    ...(onLog ? { handleStructuredLogs: ({ message }) => { onLog(message); } } : {}),
  };
  // A wrapped binding's module lives in a worker of its own, so that case needs the multi-worker form.
  const options = () => (wrapped
    ? {
      ...shared,
      workers: [main, {
        name: "artifacts-stand-in",
        modules: true,
        script: wrapped,
        r2Buckets: ["INNER"],
      }],
    }
    : { ...shared, ...main });
  const mf = new Miniflare(options());
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const setVars = async (more) => {
    main.bindings = { ...main.bindings, ...more };
    // Miniflare keeps a runtime-picked port across setOptions when port 0 is asked for again.
    await mf.setOptions(options());
    const now = (await mf.ready).toString().replace(/\/$/, "");
    if (now !== url) throw new Error(`the worker moved from ${url} to ${now} when its settings changed`);
  };
  return { url, mcpUrl: `${url}/mcp`, mf, setVars, close: () => mf.dispose() };
}
