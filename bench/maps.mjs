// JavaScript-ordered maps: the cost per key of building an object of 10^3 to 3·10^5 keys, in four
// key orders (named keys, integer-like keys ascending, descending and scattered), by assignment
// and by parsing its JSON text. Our side is examples/bench_maps.rs (host, release profile); the
// reference is V8 in this Node (`obj[key] = null` and `JSON.parse`) on the same keys, measured in
// the same run, alternating with ours row by row, best of ROUNDS rounds each. Both sides count CPU
// time, not wall-clock time: on a shared machine a run longer than a scheduler slice is interrupted
// (ours: the thread's CPU time; Node's: the process's, which also holds V8's helper threads). A cost per key that
// stays within a small factor as the object grows 300-fold is linear growth (a map with a linear
// insert would grow it about 300-fold).
//
//   node bench/maps.mjs [rounds, default 2]

import { execFileSync } from "node:child_process";
import os from "node:os";
import { performance } from "node:perf_hooks";

const ROUNDS = Number.parseInt(process.argv[2] ?? "2", 10);
const ORDERS = ["named", "integers ascending", "integers descending", "integers scattered"];
const SIZES = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000];

/** Cargo's JSON messages -> the path of the example binary. */
function build() {
  const out = execFileSync("cargo", ["build", "--quiet", "--release", "--example", "bench_maps", "--message-format=json"], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "inherit"] });
  for (const line of out.split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    const msg = JSON.parse(line);
    if (msg.reason === "compiler-artifact" && msg.target?.name === "bench_maps" && msg.executable) return msg.executable;
  }
  throw new Error("cargo did not report bench_maps");
}

/** The same keys as examples/bench_maps.rs. */
function keys(order, n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    if (order === "named") out[i] = `key${i}`;
    else if (order === "integers ascending") out[i] = String(i);
    else if (order === "integers descending") out[i] = String(n - 1 - i);
    else out[i] = String((i * 7919 + 13) % n);
  }
  return out;
}

/** CPU time of this process (user + system), in milliseconds. */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The fastest of enough runs to fill about 200 ms, in nanoseconds of CPU time per key. */
function fastest(n, run) {
  let best = Infinity;
  const started = performance.now();
  for (let runs = 0; runs < 3 || (performance.now() - started < 200 && runs < 50); runs++) {
    const t = cpuMs();
    const len = run();
    best = Math.min(best, cpuMs() - t);
    if (len !== n) throw new Error(`kept ${len} of ${n} keys`);
  }
  return (best * 1e6) / n;
}

const bin = build();
const rows = [];
for (const order of ORDERS) {
  for (const n of SIZES) {
    const ks = keys(order, n);
    const text = `{${ks.map((k) => `"${k}":0`).join(",")}}`;
    const row = { order, n, insert: Infinity, parse: Infinity, v8Insert: Infinity, v8Parse: Infinity };
    for (let round = 0; round < ROUNDS; round++) {
      const ours = JSON.parse(execFileSync(bin, [order, String(n)], { encoding: "utf8" }));
      row.insert = Math.min(row.insert, ours.insertNsPerKey);
      row.parse = Math.min(row.parse, ours.parseNsPerKey);
      row.v8Insert = Math.min(row.v8Insert, fastest(n, () => {
        const o = {};
        for (const k of ks) o[k] = null;
        return Object.keys(o).length;
      }));
      row.v8Parse = Math.min(row.v8Parse, fastest(n, () => Object.keys(JSON.parse(text)).length));
    }
    rows.push(row);
  }
}

console.log(`JavaScript-ordered map: CPU ns per key to build an object, ours (host, release) beside V8 (node ${process.version}), same keys, best of ${ROUNDS} alternating rounds`);
console.log(`machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model ?? "unknown CPU"}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log("");
const f = (x) => x.toFixed(1).padStart(8);
console.log(`${"order".padEnd(21)} ${"keys".padStart(7)} | ${"insert".padStart(8)} ${"V8".padStart(8)} ${"ratio".padStart(6)} | ${"parse".padStart(8)} ${"V8".padStart(8)} ${"ratio".padStart(6)}`);
for (const r of rows) {
  console.log(`${r.order.padEnd(21)} ${String(r.n).padStart(7)} | ${f(r.insert)} ${f(r.v8Insert)} ${(r.insert / r.v8Insert).toFixed(2).padStart(6)} | ${f(r.parse)} ${f(r.v8Parse)} ${(r.parse / r.v8Parse).toFixed(2).padStart(6)}`);
}
console.log("");
for (const order of ORDERS) {
  const [first, last] = [rows.find((r) => r.order === order), rows.findLast((r) => r.order === order)];
  console.log(`${order}: ${first.n} -> ${last.n} keys (x${last.n / first.n}), ns per key x${(last.insert / first.insert).toFixed(1)} insert (V8 x${(last.v8Insert / first.v8Insert).toFixed(1)}), x${(last.parse / first.parse).toFixed(1)} parse (V8 x${(last.v8Parse / first.v8Parse).toFixed(1)})`);
}
