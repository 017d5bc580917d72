// Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, server
// scenarios) against the built worker in workerd, and fails when a scenario that applies to this
// server fails. `make conformance`; `node tests/e2e/conformance.mjs --all` also runs (and only
// reports) the scenarios that need the suite's reference tools, resources or prompts.
//
// The suite sends no Authorization header, so the worker runs with MCP_ALLOW_ANONYMOUS=true,
// which admits credential-less requests addressed to a loopback host only; it is never on by
// default. The suite needs Node 22: scripts/tools.sh installs one under .tools/node22.

import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { ROOT, startWorker } from "./worker.mjs";

/** Scenarios a server without the suite's reference tools/resources/prompts must pass. */
export const APPLICABLE = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

/**
 * Scenarios that test features this server does not offer (logging, completion, resources,
 * prompts, SSE streams, sampling/elicitation) or call the suite's reference tools by name.
 */
export const NOT_APPLICABLE = [
  "logging-set-level", "completion-complete", "tools-call-simple-text", "tools-call-image",
  "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content",
  "tools-call-with-logging", "tools-call-error", "tools-call-with-progress", "tools-call-sampling",
  "tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
  "server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums",
  "resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
  "resources-subscribe", "resources-unsubscribe", "prompts-list", "prompts-get-simple",
  "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function node22() {
  const r = spawnSync(path.join(ROOT, "scripts/tools.sh"), ["node22"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) throw new Error("could not install Node 22 (scripts/tools.sh node22)");
  return r.stdout.trim();
}

const all = process.argv.includes("--all");
const node = node22();
const cli = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
// A fixed port lets the allow list name the loopback origins the DNS-rebinding scenario sends.
const port = await freePort();
const worker = await startWorker({
  port,
  vars: {
    MCP_ALLOW_ANONYMOUS: "true",
    MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${port},http://localhost:${port}`,
  },
});

const results = [];
try {
  for (const scenario of all ? [...APPLICABLE, ...NOT_APPLICABLE] : APPLICABLE) {
    const r = spawnSync(node, [cli, "server", "--url", worker.mcpUrl, "--scenario", scenario], {
      encoding: "utf8",
      timeout: 120_000,
    });
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(r.stdout);
    results.push({
      scenario,
      applicable: APPLICABLE.includes(scenario),
      ok: r.status === 0,
      checks: summary ? `${summary[1]}/${summary[2]}` : "?",
    });
    if (r.status !== 0 && APPLICABLE.includes(scenario)) {
      process.stdout.write(r.stdout + r.stderr);
    }
  }
} finally {
  await worker.close();
}

for (const { scenario, applicable, ok, checks } of results) {
  console.log(`${ok ? "PASS" : "FAIL"}  ${scenario.padEnd(32)} checks ${checks.padEnd(6)}${applicable ? "" : " (not applicable)"}`);
}
const failed = results.filter((r) => r.applicable && !r.ok);
console.log(`${results.filter((r) => r.applicable && r.ok).length}/${APPLICABLE.length} applicable scenarios pass`);
process.exit(failed.length ? 1 : 0);
