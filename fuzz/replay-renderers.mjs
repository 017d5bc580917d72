// Replays the renderer fuzz corpora against the reference encoders: every input that is JSON is
// rendered by our renderers (examples/render_oracle.rs) and compared byte for byte with
// `@toon-format/toon` 2.0.1 `encode(v, { indent: 2 })` and `JSON.stringify(v, null, 2)`, and the
// reference's `decode` must read our TOON back as the value. The fuzz targets check invariants
// in-process at millions of executions per minute; this adds the exact oracle over the inputs
// the fuzzer found interesting.
//
//   node fuzz/replay-renderers.mjs [DIR...]   (default: fuzz/corpus/render_* and the scratch
//                                              corpora under target/fuzz-corpus/render_*)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { decode, encode } from '@toon-format/toon';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dirs = process.argv.length > 2
  ? process.argv.slice(2)
  : ['fuzz/corpus', 'target/fuzz-corpus'].flatMap((base) =>
    ['render_json', 'render_toon'].map((t) => join(ROOT, base, t))).filter(existsSync);

// Lone surrogate escapes are decoded differently on purpose (docs/decisions/0002).
const LONE_SURROGATE = /\\u[dD][89a-fA-F]/;

const texts = [];
let skipped = 0;
for (const dir of dirs) {
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8');
    let value;
    try { value = JSON.parse(text); } catch { continue; }
    if (LONE_SURROGATE.test(text) || text.includes('\uFFFD')) { skipped++; continue; }
    // Line breaks outside strings are JSON whitespace (inside strings they are invalid), so
    // each document fits on one line for the oracle CLI.
    texts.push({ line: text.replace(/[\r\n]/g, ' '), value });
  }
}

const out = execFileSync('cargo', ['build', '--quiet', '--example', 'render_oracle', '--message-format=json'], {
  cwd: ROOT, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'],
});
const oracle = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'render_oracle' && m.executable)?.executable;
if (!oracle) throw new Error('cargo did not report the render_oracle executable');

const r = spawnSync(oracle, [], { input: texts.map((t) => t.line).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 30 });
if (r.status !== 0) throw new Error(`render_oracle failed: ${r.stderr}`);
const lines = r.stdout.split('\n');
lines.pop();

let failures = 0;
const counts = {};
const gaps = {};
const fail = (what, t, detail) => {
  failures++;
  counts[what] = (counts[what] ?? 0) + 1;
  if (failures <= 10) console.error(`${what}: ${t.line.slice(0, 300)}\n  ${detail}`);
};
texts.forEach((t, i) => {
  const got = JSON.parse(lines[i]);
  if (!Array.isArray(got)) { fail('our parser refused', t, JSON.stringify(got)); return; }
  const [toon, json] = got;
  const wantToon = encode(t.value, { indent: 2 });
  const wantJson = JSON.stringify(t.value, null, 2);
  if (toon !== wantToon) fail('TOON differs', t, `ours ${JSON.stringify(toon.slice(0, 200))}\n  ref  ${JSON.stringify(wantToon.slice(0, 200))}`);
  if (json !== wantJson) fail('JSON differs', t, `ours ${JSON.stringify(json.slice(0, 200))}`);
  if (toon !== wantToon) return;
  // Our text is the reference's, so a value the reference's own decoder cannot read back is a
  // gap of the reference (reported, not failed): its encoder drops empty keys from array
  // headers and `__proto__` keys altogether, and its decoder (2.0.1) cannot read a quoted key
  // that ends in `:` among a list item's later fields.
  let decoded;
  try { decoded = decode(toon); } catch (e) { gap(t, `decode: ${e.message}`); return; }
  const want = JSON.parse(JSON.stringify(t.value), (k, v) => (Object.is(v, -0) ? 0 : v));
  if (!isDeepStrictEqual(decoded, want)) gap(t, `decodes to ${JSON.stringify(decoded).slice(0, 120)}`);
});

function gap(t, detail) {
  const kind = hasKey(t.value, (k) => k === '') ? 'empty key'
    : hasKey(t.value, (k) => k === '__proto__') ? '__proto__ key'
      : hasKey(t.value, (k) => k.endsWith(':')) ? 'key ending in a colon' : 'other';
  gaps[kind] = (gaps[kind] ?? 0) + 1;
  if (kind === 'other' && gaps.other <= 5) console.error(`round-trip gap: ${t.line.slice(0, 300)}\n  ${detail}`);
}

function hasKey(v, test) {
  if (Array.isArray(v)) return v.some((x) => hasKey(x, test));
  if (v && typeof v === 'object') return Object.keys(v).some((k) => test(k) || hasKey(v[k], test));
  return false;
}

console.log(`reference decode round-trip gaps (not failures): ${JSON.stringify(gaps)}`);
if (failures) console.log(`failures: ${JSON.stringify(counts)}`);
console.log(`replayed ${texts.length} JSON inputs from ${dirs.length} corpora (${skipped} skipped: lone surrogates), ${failures} failures`);
process.exit(failures ? 1 : 0);
