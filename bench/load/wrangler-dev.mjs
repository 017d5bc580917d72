// The built worker behind wrangler's local dev server, as `wrangler dev` runs it (its proxy
// worker in front, KV and R2 simulated, persisted in a scratch directory), with the inspector
// `wrangler dev` always attaches, or without it (`inspector: false`, which only the programmatic
// `unstable_startWorker` offers): the comparison of decision 0093.

import { unstable_startWorker } from "wrangler";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "../../tests/e2e/worker.mjs";
import { startFakeUpstream } from "../../tests/e2e/fake-upstream.mjs";
import { CREDENTIALS, vendorUrls } from "../../tests/e2e/tools-common.mjs";

const BUILD = path.join(ROOT, process.env.BENCH_BUILD ?? "build");

/**
 * Starts the fake upstream and the worker under wrangler's dev server with `vars` (and the
 * vendors' URLs and credentials): { mcpUrl, close() }. `inspector: false` starts it without the
 * inspector.
 */
export async function startWranglerDevStack(vars, { inspector = true } = {}) {
  const upstream = await startFakeUpstream();
  const dir = mkdtempSync(path.join(os.tmpdir(), "wrangler-dev-bench-"));
  const toml = readFileSync(path.join(ROOT, "wrangler.toml"), "utf8")
    .replace(/^main = .*$/m, `main = ${JSON.stringify(path.join(BUILD, "index.js"))}`)
    // The build is done: no custom build command, nothing watched.
    .replace(/\[build\][\s\S]*?watch_dir = .*\n/, "");
  writeFileSync(path.join(dir, "wrangler.toml"), toml);
  const all = { ...vendorUrls(upstream), ...CREDENTIALS, ...vars };
  // Single quotes: dotenv takes what they hold as it is (the values hold none).
  writeFileSync(path.join(dir, ".dev.vars"), Object.entries(all).map(([k, v]) => `${k}='${v}'`).join("\n"));
  const cwd = process.cwd();
  process.chdir(dir); // wrangler reads .dev.vars beside the configuration it is given
  let worker;
  try {
    worker = await unstable_startWorker({
      config: path.join(dir, "wrangler.toml"),
      dev: {
        server: { hostname: "127.0.0.1", port: 0 },
        inspector: inspector ? { port: 0 } : false,
        persist: path.join(dir, "state"),
        liveReload: false,
        watch: false,
        logLevel: "none",
      },
    });
    await worker.ready;
  } finally {
    process.chdir(cwd);
  }
  return {
    mcpUrl: new URL("/mcp", await worker.url).href,
    async close() {
      await worker.dispose();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
