// Differential test: our URLSearchParams encoding (examples/form_oracle.rs, src/js/form.rs) against
// Node's URLSearchParams, which the reference servers use to append queryParams, over hand-picked
// and seeded random names and values (ASCII, controls, every reserved character, non-ASCII,
// astral characters and lone surrogates, which both sides turn into U+FFFD).
// Run from the repository root: node --test tests/oracle/form.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const targetDir = process.env.CARGO_TARGET_DIR || 'target';

function buildOracle() {
  execFileSync('cargo', ['build', '--quiet', '--example', 'form_oracle'], { stdio: 'inherit' });
  const bin = path.join(targetDir, 'debug', 'examples', 'form_oracle');
  assert.ok(existsSync(bin), `missing ${bin}`);
  return bin;
}

/** A small deterministic generator (mulberry32), so a failure names a reproducible case. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ASCII = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join('');
const OTHER = ['é', 'ß', '€', '\u00a0', '\u2028', '\ufeff', '\uffff', '😀', '\u{10ffff}', '\ud800', '\udfff', '中'];

function randomString(next) {
  const len = Math.floor(next() * 12);
  let s = '';
  for (let i = 0; i < len; i++) {
    s += next() < 0.75 ? ASCII[Math.floor(next() * ASCII.length)] : OTHER[Math.floor(next() * OTHER.length)];
  }
  return s;
}

function cases() {
  const out = [
    [],
    [['jql', 'project = PROJ ORDER BY key'], ['maxResults', '50'], ['fields', 'summary,status']],
    [['', ''], [' ', ' '], ['+', '%20'], ['a&b', 'c=d']],
    [['q', "~()!'*-._"], ['path', '/a/b?c#d']],
    [['every', ASCII]],
    [['other', OTHER.join('')]],
  ];
  const next = rng(20261202);
  for (let i = 0; i < 2000; i++) {
    const pairs = Array.from({ length: 1 + Math.floor(next() * 4) }, () => [randomString(next), randomString(next)]);
    out.push(pairs);
  }
  return out;
}

test('queryParams encode as URLSearchParams does', () => {
  const bin = buildOracle();
  const all = cases();
  const stdout = execFileSync(bin, { input: all.map((c) => JSON.stringify(c)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 64 << 20 });
  const lines = stdout.split('\n');
  assert.equal(lines.length, all.length + 1, 'one line per case');
  for (const [i, pairs] of all.entries()) {
    const want = new URLSearchParams(pairs).toString();
    assert.equal(lines[i], want, `case ${i}: ${JSON.stringify(pairs)}`);
  }
});
