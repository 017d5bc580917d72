// What the tool list costs a model: the o200k_base tokens (gpt-tokenizer) of every tool's
// definition and of the whole `tools` array of tools/list, as the built worker in workerd lists
// it, for every tool (`/mcp`), each toolset alone (`/mcp/x/<toolset>`) and read-only mode, with
// MCP_STRUCTURED_OUTPUT off (the default) and on (output schemas listed). A definition is
// counted as its compact JSON, which is what a client hands the model give or take its framing.
//
//   node bench/tools-tokens.mjs [--json]

import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startWorker } from "../tests/e2e/worker.mjs";

const TOKEN = "bench-token-0123456789abcdef";
const TOOLSETS = ["github", "circleci", "jira", "confluence", "bitbucket"];
/**
 * The budget for a connection that takes the `github` toolset alone: the CI loop's tools (the
 * run and its wait, re-run, cancel, dispatch) fit under 3,000 (decision 0102); the end-to-end
 * spec tools-ciloop.test.mjs holds it.
 */
const GITHUB_TARGET = 3000;

async function list(worker, path) {
  const r = await fetch(`${worker.url}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json",
      Authorization: `Bearer ${TOKEN}`,
      "MCP-Protocol-Version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  const body = await r.json();
  if (r.status !== 200 || !body.result) throw new Error(`${path}: HTTP ${r.status} ${JSON.stringify(body)}`);
  return body.result.tools;
}

const tokens = (value) => countTokens(JSON.stringify(value));

async function measure(structured) {
  const worker = await startWorker({
    vars: { MCP_AUTH_TOKENS: JSON.stringify({ bench: TOKEN }), MCP_STRUCTURED_OUTPUT: String(structured) },
  });
  try {
    const all = await list(worker, "/mcp");
    const perTool = all.map((t) => ({ name: t.name, tokens: tokens(t), description: countTokens(t.description) }));
    const lists = [["all tools (/mcp)", "/mcp"], ...TOOLSETS.map((t) => [`${t} alone`, `/mcp/x/${t}`]), ["read-only (/mcp/readonly)", "/mcp/readonly"], ["github, read-only", "/mcp/x/github/readonly"]];
    const rows = [];
    for (const [label, path] of lists) {
      const tools = await list(worker, path);
      rows.push({ label, path, tools: tools.length, tokens: tokens(tools) });
    }
    return { structured, perTool, rows };
  } finally {
    await worker.close();
  }
}

const results = [await measure(false), await measure(true)];
if (process.argv.includes("--json")) {
  console.log(JSON.stringify(results, null, 2));
} else {
  console.log("tokens (o200k_base, gpt-tokenizer) of tool definitions as tools/list sends them (compact JSON)");
  const [off, on] = results;
  console.log(`\n${"tool".padEnd(28)} ${"definition".padStart(10)} ${"(description)".padStart(13)} ${"structured on".padStart(13)}`);
  for (const t of off.perTool) {
    const s = on.perTool.find((u) => u.name === t.name);
    console.log(`${t.name.padEnd(28)} ${String(t.tokens).padStart(10)} ${String(t.description).padStart(13)} ${String(s.tokens).padStart(13)}`);
  }
  console.log(`\n${"tools/list".padEnd(28)} ${"tools".padStart(5)} ${"tokens".padStart(7)} ${"structured on".padStart(13)}`);
  for (const r of off.rows) {
    const s = on.rows.find((u) => u.path === r.path);
    console.log(`${r.label.padEnd(28)} ${String(r.tools).padStart(5)} ${String(r.tokens).padStart(7)} ${String(s.tokens).padStart(13)}`);
  }
  const github = off.rows.find((r) => r.path === "/mcp/x/github");
  console.log(`\ngithub alone: ${github.tokens} tokens (target under ${GITHUB_TARGET}): ${github.tokens < GITHUB_TARGET ? "met" : "MISSED"}`);
}
