// Differential tests of the renderers against their oracles: `@toon-format/toon` 2.0.1
// `encode(v, { indent: 2 })` for TOON, `JSON.stringify(v, null, 2)` for JSON, and the reference
// servers' truncation rule. The Rust side is `examples/render_oracle.rs`, built once here.
// Run from the repository root: node --test tests/oracle/render.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from '@toon-format/toon';
import { prng, randomValue, VENDOR_DOCUMENTS } from './render_corpus.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Builds the oracle CLI (debug profile: shares `cargo test`'s build) and returns its path. */
function buildOracle() {
  const out = execFileSync('cargo', ['build', '--quiet', '--example', 'render_oracle', '--message-format=json'], {
    cwd: ROOT, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'],
  });
  for (const line of out.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    const msg = JSON.parse(line);
    if (msg.reason === 'compiler-artifact' && msg.target?.name === 'render_oracle' && msg.executable) return msg.executable;
  }
  throw new Error('cargo did not report the render_oracle executable');
}

const ORACLE = buildOracle();

/** Runs the Rust CLI over JSON texts (one per line) and returns its parsed output lines. */
function rust(texts, args = []) {
  const r = spawnSync(ORACLE, args, { input: texts.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(r.status, 0, `render_oracle failed: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  lines.pop();
  assert.equal(lines.length, texts.length, 'one output line per input line');
  return lines.map((l) => JSON.parse(l));
}

function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at index ${i}:\n  expected …${JSON.stringify(a.slice(Math.max(0, i - 40), i + 40))}\n  got      …${JSON.stringify(b.slice(Math.max(0, i - 40), i + 40))}`;
}

/** Compares both renderings of every text with the oracles; fails on the first difference. */
function assertSameRenderings(label, texts) {
  const got = rust(texts);
  let compared = 0;
  for (let i = 0; i < texts.length; i++) {
    const value = JSON.parse(texts[i]);
    assert.ok(Array.isArray(got[i]), `${label} #${i}: Rust rejected the input: ${JSON.stringify(got[i])}\n  input: ${texts[i].slice(0, 500)}`);
    const [toon, json] = got[i];
    const wantToon = encode(value, { indent: 2 });
    const wantJson = JSON.stringify(value, null, 2);
    if (toon !== wantToon) assert.fail(`${label} #${i}: TOON differs ${firstDifference(wantToon, toon)}\n  input: ${texts[i].slice(0, 2000)}`);
    if (json !== wantJson) assert.fail(`${label} #${i}: JSON differs ${firstDifference(wantJson, json)}\n  input: ${texts[i].slice(0, 2000)}`);
    compared += 2;
  }
  return compared;
}

test('hand-picked hard cases render identically', () => {
  const texts = [
    '{}', '[]', '""', '"x"', '0', '-0', '1e21', '1.5e-7', '1E400', 'null', 'true', '[[]]', '[{}]', '{"":""}',
    '{"":[1,2]}', '{"":[{"a":1}]}', '[{"":[1]}]', '[{"":[{"x":1}],"y":2}]', '{"a":{"":{}}}',
    '{"b":1,"2":2,"a":3,"1":4,"01":5,"4294967295":6,"4294967294":7}', '{"a":1,"b":2,"a":3}',
    '{"__proto__":{"x":1},"y":2}', '{"__proto__":null,"y":[]}', '[{"a":1,"b":2},{"__proto__":{"a":9},"b":3,"c":4}]',
    '[{"length":1,"b":2},{"__proto__":[5],"b":3,"c":4}]', '[{"toString":1,"b":2},{"b":3,"c":4}]',
    '[1,[2,3],{"a":4}]', '[[1,[2]],[3]]', '[[{"a":1}],[{"a":2}]]', '{"t":[{"a":1,"b":2},{"b":3,"a":4}]}',
    '{"t":[{"a":[]},{"a":[]}]}', '{"t":[{"a":{}},{"a":{}}]}', '[{"t":[],"u":1}]', '[{"t":[[1],[2]],"u":1}]',
    '[{"t":[{"x":[1]}],"u":1}]', '[{"t":{"x":1},"u":{}}]', '["-","- x"," ","a\\u2028"]',
    '{"k":"\\u00a0","l":"\\ufeff","m":"\\u0085","n":"\\u180e"}', '[0.1,0.2,0.30000000000000004,123e-20,5e-324]',
    '[100,1e2,1.0,1.50,-1.5e+3,9007199254740993,123456789012345678901234567890]',
    '{"s":["true","false","null","1","-1","1.5","1e5","05","0x1","1.","Infinity"]}',
  ];
  assertSameRenderings('hard case', texts);
});

test('random nested values render identically (generated corpus)', () => {
  const rng = prng(20260426);
  const texts = Array.from({ length: 6000 }, () => randomValue(rng));
  const compared = assertSameRenderings('random', texts);
  assert.equal(compared, 12000);
});

test('real-shaped vendor responses render identically', () => {
  const texts = [];
  for (const [name, make] of Object.entries(VENDOR_DOCUMENTS)) {
    for (const n of [0, 1, 2, 3, 7, 25]) {
      for (let seed = 1; seed <= 4; seed++) {
        const doc = make(prng(seed * 1000 + n), n);
        texts.push(JSON.stringify(doc));
        // Common projections of the same data: the list alone and one element.
        const list = Object.values(doc).find(Array.isArray);
        if (list?.length) texts.push(JSON.stringify(list), JSON.stringify(list[0]));
      }
    }
    assert.ok(texts.length > 0, name);
  }
  assertSameRenderings('vendor', texts);
});

test('random doubles print as String(n) does', () => {
  const rng = prng(99);
  const view = new DataView(new ArrayBuffer(8));
  const texts = [];
  for (let doc = 0; doc < 40; doc++) {
    const nums = [];
    for (let i = 0; i < 2500; i++) {
      view.setUint32(0, Math.floor(rng() * 2 ** 32));
      view.setUint32(4, Math.floor(rng() * 2 ** 32));
      let d = view.getFloat64(0);
      if (!Number.isFinite(d)) d = 0;
      // Half the cases near 2^50..2^53, where ties between two shortest candidates occur.
      if (i % 2) d = (2 ** 50 + Math.floor(rng() * 2 ** 52)) / 4;
      nums.push(String(d));
    }
    texts.push(`[${nums.join(',')}]`);
  }
  assertSameRenderings('doubles', texts);
});

/** The reference servers' rule, transcribed from their published description. */
function referenceTruncate(content, max) {
  if (content.length <= max) return content;
  let at = max;
  const lastNewline = content.lastIndexOf('\n', max);
  if (lastNewline > Math.max(0, max - 500)) at = lastNewline;
  const kept = content.substring(0, at);
  const pct = Math.round((kept.length / content.length) * 100);
  return kept + ['', '---', '## Response Truncated', '',
    `This response was truncated to ~${Math.round(kept.length / 4000)}k tokens (${pct}% of original ${Math.round(content.length / 1000)}k chars).`,
    '', '**To access the complete data:**',
    '- Consider refining your request with more specific filters or selecting fewer fields',
    '- For paginated data, use smaller page sizes or specific identifiers',
    '- When searching, use more targeted queries to reduce result sets'].join('\n');
}

test('truncation matches the reference rule around the bound', () => {
  const rng = prng(7);
  const cases = [];
  const max = 40000;
  for (const len of [max - 1, max, max + 1, max + 2, 2 * max, 100000]) {
    for (const nl of [null, max - 501, max - 500, max - 499, max - 1, max, max + 1, 10]) {
      const chars = Array.from({ length: len }, () => (chance(rng) ? 'é' : 'a'));
      if (nl !== null && nl < len) chars[nl] = '\n';
      cases.push(chars.join(''));
    }
  }
  // Astral characters around the cut: the reference would split a pair; we keep it whole.
  for (let offset = -3; offset <= 3; offset++) {
    const head = 'x'.repeat(max - 2 + offset);
    cases.push(head + '😀😀😀' + 'y'.repeat(50));
  }
  for (let i = 0; i < 200; i++) {
    const lines = [];
    let n = 0;
    while (n < max + 3000) {
      const line = Array.from({ length: int(rng, 120) }, () => pick(rng, ['a', 'é', '😀', ' ', '日'])).join('');
      lines.push(line);
      n += line.length + 1;
    }
    cases.push(lines.join('\n'));
  }
  const got = rust(cases.map((c) => JSON.stringify(c)), ['--truncate', String(max)]);
  for (let i = 0; i < cases.length; i++) {
    const want = referenceTruncate(cases[i], max);
    const splitsPair = want !== cases[i] && /[\ud800-\udbff](?=\n---\n## Response Truncated)/.test(want);
    if (splitsPair) {
      // Ours drops the straddling character: one unit fewer, otherwise the same.
      const expected = referenceTruncate(cases[i], max - 1).replace(/\(\d+% of/, (m) => m);
      assert.equal(got[i].split('\n---\n')[0], expected.split('\n---\n')[0], `case ${i}: pair-safe cut`);
      assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(got[i]), `case ${i}: no lone surrogate`);
      continue;
    }
    if (got[i] !== want) assert.fail(`truncation case ${i} differs ${firstDifference(want, got[i])}`);
  }

  function chance(r) { return r() < 0.3; }
  function int(r, n) { return Math.floor(r() * n); }
  function pick(r, xs) { return xs[int(r, xs.length)]; }
});
