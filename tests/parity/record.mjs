#!/usr/bin/env node
// Records byte-exact outputs of the TypeScript reference Atlassian MCP servers as golden files.
//
//   node tests/parity/record.mjs                 rewrite tests/golden/atlassian/{jira,confluence,bitbucket}.json
//   node tests/parity/record.mjs --check         re-record in memory and report any difference (exit 1)
//   node tests/parity/record.mjs --vendor jira --only a,b --print
//                                                 print the entries for some cases as JSON (used by the test)
//
// The reference packages are installed at exact versions into a cache folder under the OS temp dir (never into this
// repository); each vendor then runs in a child process (child.mjs) whose HOME, TMPDIR and working directory are a
// fresh sandbox that is deleted afterwards. Exit code 3 means the packages could not be installed and the npm
// registry does not answer (offline); a failed install while the registry answers exits 1.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import { VENDORS } from './cases.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const GOLDEN_DIR = path.join(REPO, 'tests', 'golden', 'atlassian');

/** Exact versions of everything that shapes the reference output. */
export const PINS = {
  '@aashari/mcp-server-atlassian-jira': '3.3.0',
  '@aashari/mcp-server-atlassian-bitbucket': '3.1.0',
};
/**
 * Transitive dependencies that decide the rendered text, pinned through npm `overrides` so a re-run next year
 * resolves the same code. Both packages declare a caret range (jira `^2.0.1`, bitbucket `^2.1.0`); see docs/parity.md
 * for the versions compared.
 */
export const OVERRIDES = {
  '@toon-format/toon': process.env.PARITY_TOON_VERSION || '2.0.1',
  jmespath: '0.16.0',
  // Not part of the rendered text, but they validate the arguments and carry the result; pinned for reproducibility.
  '@modelcontextprotocol/sdk': '1.32.2',
  zod: '4.6.7',
};

/** Credentials handed to the reference packages: dummies, the fake fetch never forwards them anywhere. */
const DUMMY_ENV = {
  ATLASSIAN_SITE_NAME: 'parity-site',
  ATLASSIAN_USER_EMAIL: 'parity@example.com',
  ATLASSIAN_API_TOKEN: 'parity-dummy-token',
  ATLASSIAN_BITBUCKET_USERNAME: 'parity-user',
  ATLASSIAN_BITBUCKET_APP_PASSWORD: 'parity-dummy-app-password',
};

/** How each golden file is produced: which package, which tool module, and how the output is labelled. */
const SOURCES = {
  jira: { pkg: '@aashari/mcp-server-atlassian-jira', reference: '@aashari/mcp-server-atlassian-jira@3.3.0' },
  bitbucket: { pkg: '@aashari/mcp-server-atlassian-bitbucket', reference: '@aashari/mcp-server-atlassian-bitbucket@3.1.0' },
  // Not published on npm; its success path is shared code with jira 3.3.0 (docs/parity.md), so it runs through the
  // jira package with conf_* mapped onto jira_* and the raw-file directory renamed.
  confluence: {
    pkg: '@aashari/mcp-server-atlassian-jira',
    reference: 'derived: @aashari/mcp-server-atlassian-confluence@3.3.0 success path, run on @aashari/mcp-server-atlassian-jira@3.3.0',
    toolPrefix: ['conf_', 'jira_'],
    rawDir: ['/tmp/mcp/mcp-server-atlassian-jira/', '/tmp/mcp/mcp-server-atlassian-confluence/'],
  },
};

const SAVED_AT_PREFIX = '- The full raw API response is saved at: `';

function parseArgs(argv) {
  const opts = { check: false, print: false, vendors: Object.keys(VENDORS), only: null };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--check') opts.check = true;
    else if (a === '--print') opts.print = true;
    else if (a === '--vendor') opts.vendors = argv[(i += 1)].split(',');
    else if (a === '--only') opts.only = new Set(argv[(i += 1)].split(','));
    else throw new Error(`unknown argument ${a}`);
  }
  for (const v of opts.vendors) if (!VENDORS[v]) throw new Error(`unknown vendor ${v}`);
  // A subset must never overwrite a golden file.
  if ((opts.only || opts.vendors.length !== Object.keys(VENDORS).length) && !opts.print && !opts.check) {
    throw new Error('--only and --vendor record a subset: combine them with --print or --check');
  }
  return opts;
}

/**
 * Installs the pinned packages once per pin set; returns the prefix. When npm fails, exits 3 if the registry does
 * not answer either (offline: the caller may skip) and 1 otherwise (a broken pin or install is a failure).
 */
export function installReferences() {
  const pinsKey = crypto.createHash('sha256').update(JSON.stringify({ PINS, OVERRIDES })).digest('hex').slice(0, 12);
  const prefix = path.join(os.tmpdir(), 'devtools-mcp-edge-parity', `refs-${pinsKey}`);
  const marker = path.join(prefix, '.installed');
  if (fs.existsSync(marker)) return prefix;
  fs.mkdirSync(prefix, { recursive: true });
  const manifest = { name: 'parity-references', private: true, dependencies: PINS, overrides: OVERRIDES };
  fs.writeFileSync(path.join(prefix, 'package.json'), JSON.stringify(manifest, null, 2));
  const res = spawnSync(
    'npm',
    ['install', '--prefix', prefix, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: prefix, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (res.status !== 0) {
    process.stderr.write(`npm install of the reference packages failed:\n${res.stderr}\n`);
    const ping = spawnSync('npm', ['ping', '--loglevel=error'], { cwd: prefix, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (ping.status === 0) {
      process.stderr.write('the npm registry answers, so the install itself is broken\n');
      process.exit(1);
    }
    process.stderr.write(`the npm registry does not answer (offline):\n${ping.stderr}\n`);
    process.exit(3);
  }
  fs.writeFileSync(marker, new Date().toISOString());
  return prefix;
}

/** The installed version of a package inside the reference prefix (for the manifest). */
function installedVersion(prefix, name, from) {
  const base = from ? path.join(prefix, 'node_modules', from, 'node_modules', name) : null;
  for (const dir of [base, path.join(prefix, 'node_modules', name)]) {
    if (dir && fs.existsSync(path.join(dir, 'package.json'))) {
      return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
    }
  }
  return null;
}

/** Runs one vendor's cases in a sandboxed child and returns golden entries. */
function recordVendor(prefix, vendor, only) {
  const src = SOURCES[vendor];
  const cases = VENDORS[vendor].filter((c) => !only || only.has(c.name));
  if (cases.length === 0) return [];
  const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'parity-sandbox-'));
  try {
    const toTool = (tool) => (src.toolPrefix && tool.startsWith(src.toolPrefix[0]) ? src.toolPrefix[1] + tool.slice(src.toolPrefix[0].length) : tool);
    const packageDir = path.join(prefix, 'node_modules', src.pkg);
    const spec = {
      sandbox,
      packageDir,
      toolModule: './dist/tools/atlassian.api.tool.js',
      out: path.join(sandbox, 'results.json'),
      cases: cases.map((c) => ({ ...c, tool: toTool(c.tool) })),
    };
    const specPath = path.join(sandbox, 'spec.json');
    fs.writeFileSync(specPath, JSON.stringify(spec));
    const env = { PATH: process.env.PATH, HOME: sandbox, TMPDIR: sandbox, TMP: sandbox, TEMP: sandbox, ...DUMMY_ENV };
    const res = spawnSync(process.execPath, [path.join(HERE, 'child.mjs'), specPath], {
      cwd: sandbox,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
    const out = fs.existsSync(spec.out) ? JSON.parse(fs.readFileSync(spec.out, 'utf8')) : null;
    if (res.status !== 0 || !Array.isArray(out)) {
      throw new Error(`recording ${vendor} failed (exit ${res.status}): ${out && out.fatal ? out.fatal : res.stderr.slice(-4000)}`);
    }
    return cases.map((c, i) => toGolden(vendor, c, out[i]));
  } finally {
    fs.rmSync(sandbox, { recursive: true, force: true });
  }
}

function toGolden(vendor, c, rec) {
  const src = SOURCES[vendor];
  if (rec.name !== c.name) throw new Error(`result order mismatch: ${rec.name} != ${c.name}`);
  const res = rec.response;
  if (!Array.isArray(res.content) || res.content.length !== 1 || res.content[0].type !== 'text') {
    throw new Error(`case ${c.name}: unexpected result shape ${JSON.stringify(res).slice(0, 200)}`);
  }
  let text = res.content[0].text;
  if (src.rawDir) text = text.split(src.rawDir[0]).join(src.rawDir[1]);
  const lines = text.split('\n');
  const saved = lines.findIndex((l) => l.startsWith(SAVED_AT_PREFIX));
  return {
    name: c.name,
    reference: src.reference,
    tool: c.tool,
    args: c.args,
    upstream: c.upstream,
    request: rec.request,
    result: {
      text,
      isError: res.isError === undefined ? null : res.isError,
      errorResult: res.isError === true || res.metadata !== undefined,
      savedAtLine: saved < 0 ? null : saved,
    },
  };
}

/** Serialises a golden file: two-space JSON with a final newline, so re-recording is a byte-level no-op. */
export function serialiseGolden(entries) {
  return `${JSON.stringify(entries, null, 2)}\n`;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const prefix = installReferences();
  const recorded = {};
  for (const vendor of opts.vendors) recorded[vendor] = recordVendor(prefix, vendor, opts.only);
  if (opts.print) {
    process.stdout.write(JSON.stringify(recorded));
    return;
  }
  const manifest = {
    note: 'Written by tests/parity/record.mjs; see docs/parity.md. Do not edit by hand.',
    packages: PINS,
    overrides: OVERRIDES,
    resolved: {
      jira: { toon: installedVersion(prefix, '@toon-format/toon', SOURCES.jira.pkg), jmespath: installedVersion(prefix, 'jmespath', SOURCES.jira.pkg), sdk: installedVersion(prefix, '@modelcontextprotocol/sdk', SOURCES.jira.pkg), zod: installedVersion(prefix, 'zod', SOURCES.jira.pkg) },
      bitbucket: { toon: installedVersion(prefix, '@toon-format/toon', SOURCES.bitbucket.pkg), jmespath: installedVersion(prefix, 'jmespath', SOURCES.bitbucket.pkg), sdk: installedVersion(prefix, '@modelcontextprotocol/sdk', SOURCES.bitbucket.pkg), zod: installedVersion(prefix, 'zod', SOURCES.bitbucket.pkg) },
    },
    files: Object.fromEntries(Object.keys(VENDORS).map((v) => [v, { reference: SOURCES[v].reference, cases: VENDORS[v].length }])),
  };
  const files = { ...Object.fromEntries(Object.entries(recorded).map(([v, e]) => [`${v}.json`, serialiseGolden(e)])) };
  if (!opts.only && opts.vendors.length === Object.keys(VENDORS).length) files['manifest.json'] = `${JSON.stringify(manifest, null, 2)}\n`;
  let differences = 0;
  for (const [name, body] of Object.entries(files)) {
    const file = path.join(GOLDEN_DIR, name);
    const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
    if (opts.check) {
      if (old !== body) {
        differences += 1;
        process.stderr.write(`${name}: differs from a fresh recording\n`);
      }
    } else if (old !== body) {
      fs.mkdirSync(GOLDEN_DIR, { recursive: true });
      fs.writeFileSync(file, body);
      process.stderr.write(`wrote ${path.relative(REPO, file)}\n`);
    }
  }
  if (opts.check) {
    process.stderr.write(differences === 0 ? 'goldens match a fresh recording\n' : `${differences} golden file(s) differ\n`);
    if (differences) process.exitCode = 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
