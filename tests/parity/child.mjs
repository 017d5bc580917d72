// Runs one reference package's MCP tools in-process against scripted upstream responses.
//
// Started by record.mjs as `node child.mjs <spec.json>` with HOME, TMPDIR and the working directory pointing at a
// throwaway sandbox. Everything nondeterministic or external the reference code touches is replaced before the
// package loads: `fetch` (serves the scripted response, records the request), the wall clock (frozen), the 4 random
// bytes of the raw-response file name (derived from the case name), writes under /tmp/mcp (redirected into the
// sandbox; any other write outside it aborts the run) and sockets (any connect attempt throws). Results go to a JSON
// file, never stdout, because the reference logger prints to the console.

import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const sandbox = fs.realpathSync(spec.sandbox);

// The instant every `new Date()` / `Date.now()` reports, so the raw-response file name is stable.
const FROZEN_MS = Date.parse('2026-01-02T03:04:05.678Z');
// The fixed directory response.util.js writes to (it ignores TMPDIR); redirected into the sandbox.
const REFERENCE_RAW_DIR = '/tmp/mcp/';
const REDIRECTED_RAW_DIR = path.join(sandbox, 'tmp-mcp') + path.sep;

freezeClock();
let currentCase = null;
seedRandomBytes();
guardFilesystem();
refuseSockets();
installFakeFetch();

const results = [];
try {
  const call = await connect(spec.packageDir, spec.toolModule);
  for (const c of spec.cases) {
    currentCase = { c, requests: [] };
    const res = await call(c.tool, c.args);
    if (currentCase.requests.length !== 1) {
      throw new Error(`case ${c.name}: expected exactly one upstream request, saw ${currentCase.requests.length}`);
    }
    results.push({ name: c.name, request: currentCase.requests[0], response: res });
  }
  fs.writeFileSync(spec.out, JSON.stringify(results));
} catch (err) {
  fs.writeFileSync(spec.out, JSON.stringify({ fatal: String(err && err.stack ? err.stack : err) }));
  process.exitCode = 1;
}

function freezeClock() {
  const RealDate = Date;
  class FrozenDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(FROZEN_MS);
      else super(...args);
    }
    static now() {
      return FROZEN_MS;
    }
  }
  globalThis.Date = FrozenDate;
}

function seedRandomBytes() {
  // response.util.js names the saved file `<iso-time>-<randomBytes(4) hex>.txt`. Deriving those bytes from the case
  // name keeps each golden independent of case order. Other sizes (UUIDs etc.) keep real randomness.
  const real = crypto.randomBytes;
  crypto.randomBytes = function patchedRandomBytes(size, cb) {
    if (size === 4 && currentCase && typeof cb !== 'function') {
      return crypto.createHash('sha256').update(currentCase.c.name).digest().subarray(0, 4);
    }
    return real.call(crypto, size, cb);
  };
}

function guardFilesystem() {
  const redirect = (p) => {
    if (typeof p !== 'string') return p;
    const abs = path.resolve(p);
    if (abs.startsWith(REFERENCE_RAW_DIR)) return REDIRECTED_RAW_DIR + abs.slice(REFERENCE_RAW_DIR.length);
    if (abs === REFERENCE_RAW_DIR.slice(0, -1)) return REDIRECTED_RAW_DIR.slice(0, -1);
    return p;
  };
  const mustStayInside = (p, op) => {
    const abs = path.resolve(String(p));
    if (abs !== sandbox && !abs.startsWith(sandbox + path.sep)) {
      throw new Error(`parity sandbox: refused ${op} outside ${sandbox}: ${abs}`);
    }
  };
  for (const op of ['writeFileSync', 'appendFileSync', 'mkdirSync']) {
    const real = fs[op];
    fs[op] = function guarded(p, ...rest) {
      const target = redirect(p);
      mustStayInside(target, op);
      return real.call(fs, target, ...rest);
    };
  }
  for (const op of ['existsSync', 'readFileSync']) {
    const real = fs[op];
    fs[op] = function redirected(p, ...rest) {
      return real.call(fs, redirect(p), ...rest);
    };
  }
  for (const op of ['writeFile', 'appendFile', 'mkdir', 'createWriteStream', 'rmSync', 'unlinkSync', 'renameSync']) {
    const real = fs[op];
    fs[op] = function guarded(p, ...rest) {
      mustStayInside(redirect(p), op);
      return real.call(fs, redirect(p), ...rest);
    };
  }
}

function refuseSockets() {
  // The scripted fetch replaces the only network path the tools use; this makes any other attempt fail loudly.
  net.Socket.prototype.connect = function refusedConnect() {
    throw new Error('parity sandbox: network access refused');
  };
}

function installFakeFetch() {
  globalThis.fetch = async function scriptedFetch(input, init = {}) {
    if (!currentCase) throw new TypeError('fetch failed: no scripted case is active');
    const url = typeof input === 'string' ? input : input.url;
    const headers = {};
    for (const [k, v] of Object.entries(init.headers || {})) {
      headers[k] = k.toLowerCase() === 'authorization' ? v.replace(/^(\S+)\s.*$/, '$1 <redacted>') : v;
    }
    currentCase.requests.push({
      method: init.method || 'GET',
      url,
      headers,
      body: init.body === undefined ? null : init.body,
    });
    const up = currentCase.c.upstream;
    const noBody = up.status === 204 || up.status === 205 || up.status === 304;
    return new Response(noBody ? null : up.body, {
      status: up.status,
      statusText: up.statusText,
      headers: up.headers,
    });
  };
}

async function connect(packageDir, toolModule) {
  // Resolve the SDK from the reference package's own dependency tree so its schema handling is the one it ships with.
  const req = createRequire(path.join(packageDir, 'package.json'));
  const { McpServer } = req('@modelcontextprotocol/sdk/server/mcp.js');
  const { Client } = req('@modelcontextprotocol/sdk/client/index.js');
  const { InMemoryTransport } = req('@modelcontextprotocol/sdk/inMemory.js');
  req('./dist/utils/config.util.js').config.load();
  const tools = req(toolModule);
  const server = new McpServer({ name: 'parity-reference', version: '0.0.0' });
  tools.default.registerTools(server);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'parity-recorder', version: '0.0.0' });
  await client.connect(clientSide);
  return (name, args) => client.callTool({ name, arguments: args });
}
