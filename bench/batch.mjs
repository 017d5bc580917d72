// JSON-RPC batches (2025-03-26) in workerd: what a batch may take against one request, each case
// in a fresh workerd (Miniflare; wasm linear memory never shrinks, so the figure after a case is
// the Rust side's peak). Docs: docs/reliability.md, Batches.
//
// - reads: one artifact_read of 1 MiB alone (the reference), then a batch of 50 of them (the
//   most a batch may hold), with another principal's tools/list sent while the batch is answered
//   (and alone before it, for reference). Figures: wall ms, workerd CPU ms (/proc, user + system,
//   the whole process: the fake upstream and R2 simulator included), the response's MiB, the
//   wasm linear memory after, the calls served and refused.
// - jq: one call whose projection spends about 60% of one request's fuel, alone, then a batch of
//   five of them: a batch spends one request's fuel (1 / 0.6 of one call's), so its CPU is under
//   that of two calls, not five.
//
//   node bench/batch.mjs     # prints both tables; exits 1 when wasm memory reaches the budget, a
//                            # call is lost, or the jq batch takes more than 2.5 calls' CPU

import os from "node:os";
import { startLoadStack, cpuMs, mib } from "./load/common.mjs";
import {
  BUDGET, JQ_PROGRAM, MAX_BATCH, TOKENS, call, largeArtifact, post, readsBatch, routeBatchPages,
} from "../tests/e2e/batch-common.mjs";

async function withStack(run) {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify(TOKENS) });
  try {
    routeBatchPages(stack.upstream);
    return await run(stack);
  } finally {
    await stack.close();
  }
}

/** Runs `send` on `stack`: its reply and wall ms, workerd CPU ms, and the wasm memory after. */
async function measure(stack, send) {
  const cpu0 = cpuMs(stack.pid);
  const reply = await send();
  return { reply, ms: reply.ms, cpu: cpuMs(stack.pid) - cpu0, wasm: await stack.wasmBytes() };
}

const listTools = (stack) => post(stack, { jsonrpc: "2.0", id: 1, method: "tools/list" }, "bob");

console.log(`machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
let failed = false;

const rows = [];
rows.push(await withStack(async (stack) => {
  const id = await largeArtifact(stack);
  const m = await measure(stack, () => post(stack, call(1, "artifact_read", { artifactId: id, maxBytes: 1048576 })));
  return { kind: "one 1 MiB read (reference)", ...m, served: m.reply.json.result ? 1 : 0, refused: 0, bob: null };
}));
rows.push(await withStack(async (stack) => {
  const id = await largeArtifact(stack);
  const bobAlone = (await listTools(stack)).ms;
  const bob = listTools(stack);
  const m = await measure(stack, () => post(stack, readsBatch(id, MAX_BATCH)));
  const replies = m.reply.json;
  const served = replies.filter((r) => r.result).length;
  const refused = replies.filter((r) => r.error?.data?.code === "batch_budget_exceeded").length;
  if (served + refused !== MAX_BATCH) failed = true;
  const other = await bob;
  if (other.status !== 200) failed = true;
  return { kind: `batch of ${MAX_BATCH} 1 MiB reads`, ...m, served, refused, bob: `${other.ms.toFixed(0)} (alone ${bobAlone.toFixed(0)})` };
}));
console.log("\n| case | wall ms | workerd CPU ms | response MiB | wasm MiB after | served | refused | other principal's tools/list ms |");
console.log("|---|---:|---:|---:|---:|---:|---:|---|");
for (const r of rows) {
  console.log(`| ${r.kind} | ${r.ms.toFixed(0)} | ${r.cpu.toFixed(0)} | ${mib(r.reply.bytes)} | ${mib(r.wasm)} | ${r.served} | ${r.refused} | ${r.bob ?? "-"} |`);
  if (r.wasm >= BUDGET) failed = true;
}

const jq = await withStack(async (stack) => {
  await post(stack, call(0, "circleci_get", { path: "/budget/0" }));
  const alone = await measure(stack, () => post(stack, call(1, "circleci_get", { path: "/budget/1", jq: JQ_PROGRAM })));
  const batch = await measure(stack, () => post(stack, [2, 3, 4, 5, 6].map((id) => call(id, "circleci_get", { path: `/budget/${id}`, jq: JQ_PROGRAM }))));
  return { alone, batch };
});
const ratio = jq.batch.cpu / jq.alone.cpu;
console.log("\n| jq case | wall ms | workerd CPU ms | x alone |");
console.log("|---|---:|---:|---:|");
console.log(`| one call, ~60% of a request's fuel | ${jq.alone.ms.toFixed(0)} | ${jq.alone.cpu.toFixed(0)} | 1.00 |`);
console.log(`| batch of 5 such calls | ${jq.batch.ms.toFixed(0)} | ${jq.batch.cpu.toFixed(0)} | ${ratio.toFixed(2)} |`);
if (ratio > 2.5) failed = true;
process.exit(failed ? 1 : 0);
