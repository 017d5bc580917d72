// The approval ledger at its bounds: the built worker (make build) in workerd (Miniflare) with
// the APPROVALS Durable Object in its isolate, filled through ledger ops sent straight to the
// object (src/ledger.rs `Op`, as the worker sends them) until it refuses: 2,000 records of about
// 4 KB each by 100 requesters (20 pending each), just under the default 8 MiB of records.
//
// Reported: the isolate's wasm linear memory (it never shrinks, so it is the peak) with an empty
// ledger (the reference), after filling it, and after an approver has read every page; and the
// median time of one op (a page of approval_list, a decision, a refused call) on the empty
// ledger and on the full one, as a ratio, all in the same run.
//
//   node bench/ledger.mjs [rounds, default 21]

import os from "node:os";
import { performance } from "node:perf_hooks";
import { startLoadStack, mib, cpuMs } from "./load/common.mjs";

const ROUNDS = Number.parseInt(process.argv[2] ?? "21", 10);
const RECORDS = 2000; // src/ledger.rs MAX_RECORDS
const PER_REQUESTER = 20; // MAX_PENDING_PER_REQUESTER
const BODY = 3600; // characters of arguments: about 4 KB a record
const HOUR = 3_600_000;

let serial = 0;
/** Ledger op: requester `who` asks for a call of `body` characters. */
function call(who, now, body = BODY) {
  const id = `apr_${(serial++).toString(16).padStart(32, "0")}`;
  return {
    op: "call",
    nowMs: now,
    request: {
      entry: {
        id, requester: who, tool: "bb_post", argumentsHash: id.slice(4).padStart(64, "0"), rule: "merges",
        identity: "bb-release", approvers: ["carol", "github:acme"], status: "pending", createdAtMs: now,
        expiresAtMs: now + HOUR, decidedBy: null, decisionReason: null,
      },
      details: {
        arguments: { path: `/repositories/acme/web/pullrequests/${serial}/merge`, body: { message: "m".repeat(body) } },
        method: "POST", path: `/2.0/repositories/acme/web/pullrequests/${serial}/merge`, reason: "Merging needs approval.",
      },
    },
  };
}

const page = (now, after) => ({ op: "pending", nowMs: now, approver: "carol", ...(after ? { after } : {}) });

/**
 * `ROUNDS` runs of `op()` (a fresh op each time): the median wall-clock ms, and workerd's CPU ms
 * per op (the process's user + system time, Miniflare's loopback included: an upper bound).
 */
async function timed(stack, op, check) {
  const ms = [];
  const cpu0 = cpuMs(stack.pid);
  for (let i = 0; i < ROUNDS; i++) {
    const body = op();
    const t0 = performance.now();
    const reply = await stack.ledgerOp(body);
    ms.push(performance.now() - t0);
    check(reply);
  }
  ms.sort((a, b) => a - b);
  return { ms: ms[ms.length >> 1], cpu: (cpuMs(stack.pid) - cpu0) / ROUNDS };
}

/** The three ops' medians on the ledger as it is; decides `decidable` ids (one per round). */
async function ops(stack, now, decidable) {
  const pageMs = await timed(stack, () => page(now), (r) => {
    if (r.reply !== "pending") throw new Error(JSON.stringify(r).slice(0, 200));
  });
  const decideMs = await timed(stack, () => ({ op: "decide", nowMs: now, id: decidable.pop(), approver: "carol", approve: false }), (r) => {
    if (r.reply !== "decided" || r.result.Ok === undefined) throw new Error(JSON.stringify(r).slice(0, 200));
  });
  const callMs = await timed(stack, () => call(`c${serial}`, now), (r) => {
    if (r.reply !== "call") throw new Error(JSON.stringify(r).slice(0, 200));
  });
  return { pageMs, decideMs, callMs };
}

const stack = await startLoadStack({}, { ledger: true });
try {
  const now = Date.now();
  // Reference: an empty ledger (loaded), and the same ops on it, once to warm up.
  const reference = [];
  for (let i = 0; i < 2 * ROUNDS; i++) reference.push((await stack.ledgerOp(call(`r${i}`, now, 10))).outcome.record.id);
  await ops(stack, now, reference);
  const empty = await ops(stack, now, reference);
  const wasmEmpty = await stack.wasmBytes();

  // Fill: past the last pending places of the reference requesters, to the record bound.
  let refused = null;
  const made = [];
  for (let i = 0; !refused && i < RECORDS * 2; i++) {
    const r = await stack.ledgerOp(call(`p${Math.floor(i / PER_REQUESTER)}`, now));
    if (r.outcome.outcome === "wait") made.push(r.outcome.record.id);
    else refused = r.outcome.refusal;
  }
  const wasmFull = await stack.wasmBytes();
  let pages = 0;
  let after;
  do {
    const r = await stack.ledgerOp(page(now, after));
    after = r.nextCursor ?? undefined;
    pages++;
  } while (after);
  const wasmListed = await stack.wasmBytes();
  const full = await ops(stack, now, made);

  console.log(`approval ledger, ${new Date().toISOString()}, ${os.cpus().length} x ${os.cpus()[0].model}, load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  console.log(`filled to ${refused.records} records (${refused.held} bytes), then refused: ${refused.refusal}`);
  console.log(`wasm memory MiB: empty ${mib(wasmEmpty)}, full ${mib(wasmFull)}, after listing all ${pages} pages ${mib(wasmListed)}`);
  const row = (name, key) => console.log(`${name.padEnd(26)} median ms: empty ${empty[key].ms.toFixed(2).padStart(6)}, full ${full[key].ms.toFixed(2).padStart(6)} (x${(full[key].ms / empty[key].ms).toFixed(2)});  workerd CPU ms/op: empty ${empty[key].cpu.toFixed(2)}, full ${full[key].cpu.toFixed(2)}`);
  row("approval_list page", "pageMs");
  row("decide", "decideMs");
  row("call (refused when full)", "callMs");
} finally {
  await stack.close();
}
