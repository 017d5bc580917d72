// Differential test: our JMESPath interpreter (examples/projection_oracle.rs) against the
// reference's library, npm jmespath 0.16.0, over the seeded corpus in projection_corpus.mjs.
// Run from the repository root: node --test tests/oracle/projection.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import jmespath from 'jmespath';
import { corpus, caseLine } from './projection_corpus.mjs';

const targetDir = process.env.CARGO_TARGET_DIR || 'target';

function buildOracle() {
  execFileSync('cargo', ['build', '--quiet', '--example', 'projection_oracle'], { stdio: 'inherit' });
  const bin = path.join(targetDir, 'debug', 'examples', 'projection_oracle');
  assert.ok(existsSync(bin), `missing ${bin}`);
  return bin;
}

/** Our strings hold no lone surrogates (docs/decisions/0002): compare the reference's the same way. */
function wellFormed(v) {
  if (typeof v === 'string') return v.toWellFormed();
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toWellFormed(), wellFormed(x)]));
  }
  return v;
}

/** The reference servers' applyJqFilter (src/utils/jq.util.ts in @aashari/mcp-server-atlassian-*). */
function applyJqFilter(data, filter) {
  if (!filter || filter.trim() === '') return data;
  try {
    return jmespath.search(data, filter);
  } catch {
    return { _jqError: `Invalid JMESPath expression: ${filter}`, _originalData: data };
  }
}

/** JSON of a value as our Value model holds it: undefined becomes null, as TOON shows it. */
const asValue = (v) => JSON.stringify(wellFormed(v), (_k, x) => (x === undefined ? null : x)) ?? 'null';

/** What the reference computes for one expression, in the driver's output shape. */
export function reference(data, expression) {
  try {
    jmespath.compile(expression);
  } catch {
    return { e: 'compile' };
  }
  let result;
  try {
    result = jmespath.search(data, expression);
  } catch {
    return { e: 'runtime' };
  }
  if (result === undefined) return { u: 1 };
  return { r: JSON.stringify(wellFormed(result)) };
}

test('JMESPath matches npm jmespath 0.16.0 on the generated corpus', () => {
  const bin = buildOracle();
  // PROJECTION_SEED=<n> runs a different corpus of the same shape (for exploring).
  const cases = corpus(Number(process.env.PROJECTION_SEED) || undefined);
  const input = cases.map(caseLine).join('\n') + '\n';
  const output = execFileSync(bin, { input, maxBuffer: 1 << 30 }).toString().trim().split('\n');
  assert.equal(output.length, cases.length);
  const diffs = [];
  let total = 0;
  const tally = { r: 0, u: 0, compile: 0, runtime: 0 };
  cases.forEach((c, i) => {
    const ours = JSON.parse(output[i]);
    const data = JSON.parse(caseLine(c)).data;
    c.expressions.forEach((expression, j) => {
      total++;
      const want = reference(data, expression);
      tally[want.e ?? (want.u ? 'u' : 'r')]++;
      const { l, p, ...got } = ours[j];
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        diffs.push({ expression, want, got, data: caseLine(c).slice(0, 200) });
      }
      // The public API: identical to applyJqFilter unless the expression was read as jq.
      tally[l] = (tally[l] ?? 0) + 1;
      if (l !== 'jq') {
        const wantP = asValue(applyJqFilter(data, expression));
        if (p !== wantP) diffs.push({ expression, api: true, want: wantP, got: p });
      }
    });
  });
  console.log(`projection oracle: ${total} cases`, tally);
  assert.ok(total > 5000, `corpus too small: ${total}`);
  assert.ok(tally.r > 2000 && tally.compile > 100 && tally.runtime > 100 && tally.u > 5, JSON.stringify(tally));
  assert.ok(tally.jq > 20 && tally.none > 50, JSON.stringify(tally));
  if (process.env.PROJECTION_DIFFS) {
    writeFileSync(process.env.PROJECTION_DIFFS, JSON.stringify(diffs, null, 1));
  }
  assert.deepEqual(diffs.slice(0, 15), [], `${diffs.length} differences`);
});
