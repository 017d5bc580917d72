// TOON versus JSON tokens (o200k_base) for each tool's typical result, and versus what the
// best-known alternative servers return for the same data (decision 0018):
// - GitHub: github/github-mcp-server answers list_workflow_runs / list_workflow_jobs with the
//   compact JSON (Go json.Marshal) of its trimmed types MinimalWorkflowRunsResult and
//   MinimalWorkflowJobsResult (pkg/github/minimal_types.go: convertToMinimalWorkflowRun,
//   convertToMinimalWorkflowJob, convertToMinimalUser). `minimalRuns`/`minimalJobs` below rebuild
//   that shape, field order and omitempty rules, from the same upstream body our tool reads.
// - Atlassian: the reference servers' own outputs, recorded in tests/golden/atlassian (their
//   recorded upstream bodies are replayed through our worker for our side).
// Results: docs/structured-output.md, "Code mode versus direct calls".
//
//   node bench/code-mode-formats.mjs        (after `make build`; `make bench` runs it)

import { readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startStack } from "../tests/e2e/tools-common.mjs";
import { ROOT } from "../tests/e2e/worker.mjs";

const REPO = { owner: "octo-org", repo: "hello-world" };
/** Golden cases whose (default TOON) reference text is a typical result of each Atlassian tool. */
const GOLDEN_CASES = {
  jira: ["get-issue-toon", "search-full-toon"],
  confluence: ["pages-list-toon", "search-cql"],
  bitbucket: ["pullrequests-paging", "commits"],
};

const textOf = (result) => (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
/** Adds `key: value` unless Go's omitempty would leave it out (empty string, 0, nil, empty list). */
const put = (o, key, value) => {
  if (value === undefined || value === null || value === "" || value === 0 || (Array.isArray(value) && value.length === 0)) return o;
  o[key] = value;
  return o;
};

function minimalUser(u) {
  if (!u) return undefined;
  const o = { login: u.login ?? "" };
  put(o, "id", u.id);
  put(o, "profile_url", u.html_url);
  return put(o, "avatar_url", u.avatar_url);
}

/** github-mcp-server's MinimalWorkflowRun, fields in struct order. */
function minimalRun(r) {
  const o = { id: r.id, name: r.name ?? "" };
  put(o, "display_title", r.display_title);
  o.workflow_id = r.workflow_id;
  o.run_number = r.run_number;
  o.run_attempt = r.run_attempt;
  put(o, "event", r.event);
  o.status = r.status ?? "";
  put(o, "conclusion", r.conclusion);
  put(o, "head_branch", r.head_branch);
  put(o, "head_sha", r.head_sha);
  if (r.head_commit?.message) o.head_commit = { message: r.head_commit.message };
  put(o, "path", r.path);
  put(o, "html_url", r.html_url);
  put(o, "pull_requests", (r.pull_requests ?? []).map((p) => p.number).filter(Boolean));
  put(o, "actor", minimalUser(r.actor));
  put(o, "triggering_actor", minimalUser(r.triggering_actor));
  put(o, "referenced_workflows", (r.referenced_workflows ?? []).map((w) => put(put(put({}, "path", w.path), "sha", w.sha), "ref", w.ref)));
  put(o, "created_at", r.created_at);
  put(o, "updated_at", r.updated_at);
  return put(o, "run_started_at", r.run_started_at);
}

/** github-mcp-server's MinimalWorkflowJob, fields in struct order. */
function minimalJob(j) {
  const o = { id: j.id, run_id: j.run_id, name: j.name ?? "" };
  put(o, "workflow_name", j.workflow_name);
  o.status = j.status ?? "";
  for (const k of ["conclusion", "head_branch", "head_sha", "html_url", "run_attempt", "runner_id", "runner_name", "runner_group_id", "runner_group_name", "labels"]) put(o, k, j[k]);
  put(o, "steps", (j.steps ?? []).map((s) => {
    const step = { name: s.name ?? "", status: s.status ?? "" };
    put(step, "conclusion", s.conclusion);
    step.number = s.number;
    put(step, "started_at", s.started_at);
    return put(step, "completed_at", s.completed_at);
  }));
  for (const k of ["created_at", "started_at", "completed_at"]) put(o, k, j[k]);
  return o;
}

const minimalRuns = (body) => JSON.stringify({ total_count: body.total_count, workflow_runs: body.workflow_runs.map(minimalRun) });
const minimalJobs = (body) => JSON.stringify({ total_count: body.total_count, jobs: body.jobs.map(minimalJob) });

const rows = [];
/** One table row: our TOON and JSON texts, and the alternative's text (or null). */
function row(tool, what, toon, json, alternative, altName) {
  const t = countTokens(toon);
  const j = countTokens(json);
  const a = alternative === null ? null : countTokens(alternative);
  rows.push({ tool, what, toon: t, json: j, alt: a, altName });
}

// Texts are compared whole: MCP_TEXT_MAX_CHARS at its maximum, so no rendering is cut.
const stack = await startStack({ vars: { MCP_TEXT_MAX_CHARS: "1000000", ATLASSIAN_SITE_NAME: "parity-site" } });
try {
  const both = async (name, args) => [textOf((await stack.call(name, args)).result), textOf((await stack.call(name, { ...args, outputFormat: "json" })).result)];
  const upstream = async (path) => (await fetch(`${stack.upstream.url}${path}`)).json();
  const api = `/repos/${REPO.owner}/${REPO.repo}/actions`;

  {
    const [toon, json] = await both("github_list_workflow_runs", { ...REPO, perPage: 30 });
    row("github_list_workflow_runs", "a page of 30 runs", toon, json, minimalRuns(await upstream(`${api}/runs?per_page=30`)), "github-mcp-server list_workflow_runs");
  }
  {
    // The fields github-mcp-server keeps, through our jq: the same information in each format.
    const user = (k) => `${k}: {login: ${k}.login, id: ${k}.id, profile_url: ${k}.html_url, avatar_url: ${k}.avatar_url}`;
    const jq = "{total_count: total_count, workflow_runs: workflow_runs[*].{id: id, name: name, display_title: display_title, "
      + "workflow_id: workflow_id, run_number: run_number, run_attempt: run_attempt, event: event, status: status, conclusion: conclusion, "
      + "head_branch: head_branch, head_sha: head_sha, head_commit: {message: head_commit.message}, path: path, html_url: html_url, "
      + `pull_requests: pull_requests[*].number, ${user("actor")}, ${user("triggering_actor")}, created_at: created_at, updated_at: updated_at, run_started_at: run_started_at}}`;
    const [toon, json] = await both("github_list_workflow_runs", { ...REPO, perPage: 30, jq });
    row("github_list_workflow_runs", "the same, jq to github-mcp-server's fields", toon, json, minimalRuns(await upstream(`${api}/runs?per_page=30`)), "github-mcp-server list_workflow_runs");
  }
  {
    const jq = "workflow_runs[*].{id: id, workflow: name, branch: head_branch, conclusion: conclusion, title: display_title, url: html_url}";
    const [toon, json] = await both("github_list_workflow_runs", { ...REPO, perPage: 30, jq });
    row("github_list_workflow_runs", "the same, jq to 6 fields", toon, json, null, "(no projection)");
  }
  for (const [runId, what] of [[21, "a failed run's 3 jobs"], [240, "a 25-job matrix"]]) {
    const [toon, json] = await both("github_list_workflow_jobs", { ...REPO, runId, perPage: 30 });
    row("github_list_workflow_jobs", what, toon, json, minimalJobs(await upstream(`${api}/runs/${runId}/jobs?per_page=30`)), "github-mcp-server list_workflow_jobs");
  }
  {
    const [toon, json] = await both("circleci_get", { path: "/project/gh/octo-org/hello-world/pipeline" });
    row("circleci_get", "a page of pipelines", toon, json, null, "(not measured)");
  }

  for (const [vendor, names] of Object.entries(GOLDEN_CASES)) {
    const entries = JSON.parse(readFileSync(`${ROOT}/tests/golden/atlassian/${vendor}.json`, "utf8"));
    for (const name of names) {
      const entry = entries.find((e) => e.name === name);
      if (!entry) throw new Error(`golden case ${vendor}/${name} is missing`);
      const texts = [];
      for (const outputFormat of ["toon", "json"]) {
        stack.upstream.reset();
        stack.upstream.fault({
          path: new URL(entry.request.url).pathname, method: entry.request.method, times: 1, exactHeaders: true,
          status: entry.upstream.status, statusText: entry.upstream.statusText, headers: entry.upstream.headers ?? {}, body: entry.upstream.body,
        });
        const { outputFormat: _, ...args } = entry.args;
        texts.push(textOf((await stack.call(entry.tool, { ...args, outputFormat })).result));
      }
      // The Confluence goldens are derived (tests/golden/atlassian/manifest.json); name the server they stand for.
      const reference = entry.reference.startsWith("derived") ? "@aashari/mcp-server-atlassian-confluence@3.3.0 (derived)" : entry.reference;
      row(entry.tool, `${vendor} golden "${name}"`, texts[0], texts[1], entry.result.text, reference);
    }
  }
} finally {
  await stack.close();
}

const ratio = (a, b) => (b ? (a / b).toFixed(2) : "-");
console.log("tokens (o200k_base, gpt-tokenizer) of one result's text; ratios are ours / alternative");
console.log("| tool | result | TOON | JSON | JSON / TOON | alternative | alternative tokens | TOON / alt | JSON / alt |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(`| ${r.tool} | ${r.what} | ${r.toon} | ${r.json} | ${ratio(r.json, r.toon)} | ${r.altName} | ${r.alt ?? "-"} | ${r.alt === null ? "-" : ratio(r.toon, r.alt)} | ${r.alt === null ? "-" : ratio(r.json, r.alt)} |`);
}
