// Upload size of the built worker as `wrangler deploy --dry-run` reports it (the figure Cloudflare
// checks against the plan limit: 3 MiB gzipped on the free plan, 10 MiB on paid), plus the
// gzipped wasm alone. Fails past the budget, 1 MiB gzipped (a decision moves it, never a
// quiet edit). Used by `make size`, `make test` and `make bench`.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { ROOT } from "../tests/e2e/worker.mjs";

const TARGET_KIB = 1024;
const FREE_PLAN_KIB = 3 * 1024;

const r = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", "target/dry-run"], {
  cwd: ROOT,
  encoding: "utf8",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
const out = `${r.stdout}${r.stderr}`;
const m = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(out);
if (r.status !== 0 || !m) {
  process.stderr.write(out);
  throw new Error("wrangler deploy --dry-run did not report an upload size");
}
const [total, gzip] = [Number(m[1]), Number(m[2])];
const wasm = readFileSync(path.join(ROOT, "build/index_bg.wasm"));
const wasmGzip = gzipSync(wasm, { level: 9 }).length / 1024;

console.log(`upload ${total.toFixed(2)} KiB, gzip ${gzip.toFixed(2)} KiB (wrangler deploy --dry-run)`);
console.log(`wasm ${(wasm.length / 1024).toFixed(2)} KiB, gzip -9 ${wasmGzip.toFixed(2)} KiB`);
console.log(`${gzip < TARGET_KIB ? "within" : "OVER"} the 1 MiB budget (${(TARGET_KIB - gzip).toFixed(2)} KiB left); ${((gzip / FREE_PLAN_KIB) * 100).toFixed(1)}% of the 3 MiB free-plan limit`);
process.exit(gzip < TARGET_KIB ? 0 : 1);
