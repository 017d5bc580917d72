// scripts/check-deployment.mjs against the built worker in workerd: every step passes with a
// principal's token and a vendor read, the run fails (exit 1) with a wrong token or a failing
// tool, and the token is never printed.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { startStack, PRINCIPALS } from "./tools-common.mjs";
import { ROOT } from "./worker.mjs";

const SCRIPT = path.join(ROOT, "scripts/check-deployment.mjs");

let stack;
before(async () => { stack = await startStack(); });
after(() => stack?.close());

/** Runs the script (without blocking the fake upstream in this process); returns { code, stdout }. */
async function check(...args) {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT, ...args]);
    return { code: 0, stdout };
  } catch (e) {
    return { code: e.code, stdout: e.stdout };
  }
}

test("a healthy deployment passes every step", async () => {
  const { code, stdout } = await check(stack.worker.mcpUrl, PRINCIPALS.alice, "--tool", "circleci_get", "--args", '{"path":"/me"}');
  assert.equal(code, 0, stdout);
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 5, stdout);
  assert.ok(lines.every((l) => l.startsWith("ok ")), stdout);
  assert.match(stdout, /devtools-mcp-edge/);
  assert.match(stdout, /tools\/list: \d+ tools/);
  assert.ok(!stdout.includes(PRINCIPALS.alice), "the token is not printed");
  assert.equal(stack.upstream.count("GET", "/api/v2/me"), 1);
});

test("a wrong token or a failing tool fails the check", async () => {
  const wrong = await check(stack.worker.mcpUrl, "not-a-valid-token-0123456789");
  assert.equal(wrong.code, 1);
  assert.match(wrong.stdout, /FAIL initialize/);
  stack.upstream.fault({ path: "/api/v2/me", status: 500, times: 1 });
  const broken = await check(stack.worker.mcpUrl, PRINCIPALS.alice, "--tool", "circleci_get", "--args", '{"path":"/me","fresh":true}');
  assert.equal(broken.code, 1);
  assert.match(broken.stdout, /FAIL tools\/call circleci_get/);
});
