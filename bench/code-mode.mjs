// Code mode versus direct tool calls (decision 0018): the same question answered (a) by the code-mode
// program of examples/code-mode/ and (b) as a direct-call transcript, where a model makes the same
// tool calls and reads every result's text (TOON, the default, and JSON). For three data sizes it
// reports tool calls, bytes and o200k_base tokens that reach the model, tokens the model writes,
// and wall time. Method and results: docs/structured-output.md, "Code mode versus direct calls".
//
//   node bench/code-mode.mjs        (after `make build`; `make bench` runs it)

import { readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startExampleServer } from "../examples/code-mode/local.mjs";
import { connect } from "../examples/code-mode/connect.mjs";
import { failingRunsOnMain } from "../examples/code-mode/question.mjs";

/** 1000 runs, 750 of them on main: pages of 100 runs on main. */
const REPO = { owner: "octo-org", repo: "history-1000" };
const PER_PAGE = 100;
/** The data sizes: how many pages of runs on main the question covers. */
const SIZES = [1, 3, 7];
/** Each mode runs this many times per size; wall time is the median (the machine is shared). */
const REPEATS = 3;
const PROGRAM = readFileSync(new URL("../examples/code-mode/question.mjs", import.meta.url), "utf8");
/** The artifact a truncated text names, which a direct-call model would then read. */
const NAMED_ARTIFACT = /artifact `([0-9a-f-]{36})`/;

const textOf = (result) => (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
const kb = (bytes) => (bytes / 1024).toFixed(1);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs `measure` REPEATS times; the last run's counts with the median wall time. */
async function repeated(measure) {
  const runs = [];
  for (let i = 0; i < REPEATS; i++) runs.push(await measure());
  const last = runs[runs.length - 1];
  const row = last.row ?? last;
  row.ms = median(runs.map((r) => (r.row ?? r).ms));
  return last;
}

/** Runs the program once; every tool call it made, with its result, is in `calls`. */
async function codeMode(server, pages) {
  const calls = [];
  const client = await connect(server.mcpUrl, server.token, { onResult: (name, args, result) => calls.push({ name, args, result }) });
  const started = performance.now();
  const answer = await failingRunsOnMain(client, { ...REPO, pages, perPage: PER_PAGE, fileMissing: true });
  const ms = performance.now() - started;
  await client.close();
  const text = JSON.stringify(answer);
  return {
    answer, calls, ms,
    row: { calls: calls.length, bytes: Buffer.byteLength(text), tokens: countTokens(text), written: countTokens(PROGRAM), ms },
  };
}

/**
 * The direct-call transcript: the program's calls (artifact reads aside, since a direct-call model
 * gets the whole text unless it is truncated) replayed with `format`, counting each result's text,
 * and reading any artifact a truncated text names, chunk by chunk, as such a model would.
 */
async function direct(server, calls, format) {
  const client = await connect(server.mcpUrl, server.token);
  const row = { calls: 0, bytes: 0, tokens: 0, written: 0, ms: 0 };
  const read = async (name, args) => {
    row.written += countTokens(JSON.stringify({ name, arguments: args }));
    const started = performance.now();
    const result = await client.callTool({ name, arguments: args });
    row.ms += performance.now() - started;
    const text = textOf(result);
    row.calls += 1;
    row.bytes += Buffer.byteLength(text);
    row.tokens += countTokens(text);
    return text;
  };
  for (const { name, args } of calls.filter((c) => c.name !== "artifact_read")) {
    const { outputFormat, ...rest } = args;
    const text = await read(name, format === "json" ? { ...rest, outputFormat: "json" } : rest);
    const named = NAMED_ARTIFACT.exec(text);
    for (let offset = 0; named;) {
      const chunk = JSON.parse(await read("artifact_read", { artifactId: named[1], offset }));
      if (chunk.eof) break;
      offset = chunk.nextOffset;
    }
  }
  await client.close();
  return row;
}

const server = await startExampleServer();
try {
  // Warm the isolate so the first measured mode does not pay for it.
  const warm = await connect(server.mcpUrl, server.token);
  await warm.callTool({ name: "github_list_workflow_runs", arguments: { ...REPO, perPage: 1 } });
  await warm.close();

  const rows = [];
  for (const pages of SIZES) {
    const code = await repeated(() => codeMode(server, pages));
    const toon = await repeated(() => direct(server, code.calls, "toon"));
    const json = await repeated(() => direct(server, code.calls, "json"));
    const oversized = code.calls.filter((c) => c.result.structuredContent?.incomplete).length;
    rows.push({ pages, runs: code.answer.scanned.runs, failures: code.answer.failures.length, oversized, code: code.row, toon, json });
  }

  console.log(`code mode vs direct calls, ${REPO.owner}/${REPO.repo}, pages of ${PER_PAGE} runs on main; tokens: o200k_base (gpt-tokenizer)`);
  console.log("| pages (runs, failed) | mode | tool calls | bytes to model | tokens to model | tokens written | tool wall time |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const label = `${r.pages} (${r.runs}, ${r.failures})`;
    for (const [mode, m] of [["code mode (answer)", r.code], ["direct, TOON", r.toon], ["direct, JSON", r.json]]) {
      console.log(`| ${label} | ${mode} | ${m.calls} | ${kb(m.bytes)} KiB | ${m.tokens} | ${m.written} | ${(m.ms / 1000).toFixed(2)} s |`);
    }
  }
  for (const r of rows) {
    console.log(`${r.pages} pages: ${r.oversized} oversized page(s) read back; direct TOON / code-mode tokens to model ${(r.toon.tokens / r.code.tokens).toFixed(1)}x, JSON ${(r.json.tokens / r.code.tokens).toFixed(1)}x; JSON / TOON ${(r.json.tokens / r.toon.tokens).toFixed(2)}`);
  }
} finally {
  await server.close();
}
