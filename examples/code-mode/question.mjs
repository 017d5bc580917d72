// The program a model writes in code mode to answer: "Which workflow runs on main failed in the
// last N pages, which job and step failed in each and with what first error line, and is there a
// Jira issue mentioning each failing workflow?" It reads only structuredContent (never the text meant for a model), follows
// nextPage, projects with jq so only the fields it needs travel, reads oversized pages back through
// artifact_read, and acts on `_meta.code` when the server refuses a call.

/** Fields kept from each run; everything else stays on the server. */
const RUNS_JQ = "workflow_runs[*].{id: id, number: run_number, workflow: name, conclusion: conclusion, title: display_title, sha: head_sha, created: created_at, url: html_url}";
/** Only the failed jobs of a run, and in each only the failed steps. */
const JOBS_JQ = "jobs[?conclusion=='failure'].{job: name, steps: steps[?conclusion=='failure'].name}";
/** Each failed job's steps (with their line ranges) and the log lines that look like errors. */
const LOGS_JQ = "jobs[*].{job: name, steps: log.steps[*].{step: name, first: firstLine, last: lastLine}, errors: log.grep.lines[*].{line: line, text: text}}";
/** What an error line looks like; the runner's own `##[error]` summary comes after the cause. */
const ERROR_GREP = "(?i)\\berror\\b|FAILED|panicked";
/** Issue key, summary and status of each search hit, and the next page's token. */
const ISSUES_JQ = "{issues: issues[*].{key: key, summary: fields.summary, status: fields.status.name}, next: nextPageToken}";

/** A call the server refused on policy grounds; `code` and `decision` come from `_meta`. */
export class Refusal extends Error {
  constructor(tool, result) {
    super(`${tool} refused (${result._meta.code}): ${result._meta.decision?.reason ?? ""}`);
    this.code = result._meta.code;
    this.decision = result._meta.decision ?? {};
  }
}

/**
 * Answers the question for owner/repo over at most `pages` pages of `perPage` runs on main.
 * `fileMissing` files a Jira issue (project `jiraProject`) for each failing workflow nothing
 * mentions; a refusal of that write is reported in the answer, not thrown.
 */
export async function failingRunsOnMain(client, { owner, repo, pages = 3, perPage = 100, fileMissing = false, jiraProject = "OPS" }) {
  const { tools } = await client.listTools();
  const runsTool = tools.find((t) => t.name === "github_list_workflow_runs");
  if (!runsTool?.outputSchema) throw new Error("the server does not offer structured output (MCP_STRUCTURED_OUTPUT is off)");

  const readArtifact = async (artifactId) => {
    const parts = [];
    for (let offset = 0; ;) {
      const r = await client.callTool({ name: "artifact_read", arguments: { artifactId, offset } });
      if (r.isError) throw new Error(`artifact_read: ${r.content[0]?.text}`);
      const chunk = JSON.parse(r.content[0].text);
      parts.push(Buffer.from(chunk.data, "base64"));
      if (chunk.eof) return JSON.parse(Buffer.concat(parts).toString("utf8"));
      offset = chunk.nextOffset;
    }
  };

  // One tool call; the whole structured value, read back from its artifact when it was oversized.
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) {
      if (r._meta?.code) throw new Refusal(name, r);
      throw new Error(`${name}: ${r.content?.[0]?.text}`);
    }
    // Write tools have no output schema; with outputFormat json their text is the upstream body.
    if (r.structuredContent === undefined) return args.outputFormat === "json" ? JSON.parse(r.content[0].text) : undefined;
    const value = r.structuredContent;
    if (!value.incomplete) return value;
    if (value.incomplete.reason !== "size" || !value.incomplete.artifactId) {
      throw new Error(`${name}: incomplete result (${value.incomplete.reason}) without an artifact`);
    }
    return readArtifact(value.incomplete.artifactId);
  };

  const runs = [];
  let scannedPages = 0;
  for (let page = 1; page !== null && scannedPages < pages; scannedPages++) {
    const { data, nextPage } = await call("github_list_workflow_runs", { owner, repo, branch: "main", perPage, page, jq: RUNS_JQ });
    runs.push(...data);
    page = nextPage;
  }

  const failures = [];
  for (const run of runs.filter((r) => r.conclusion === "failure")) {
    const failed = [];
    for (let page = 1; page !== null;) {
      const { data, nextPage } = await call("github_list_workflow_jobs", { owner, repo, runId: run.id, perPage: 100, page, jq: JOBS_JQ });
      for (const job of data) failed.push(...(job.steps.length ? job.steps : [null]).map((step) => ({ job: job.job, step })));
      page = nextPage;
    }
    // One step further: the first error line of each failed step, from the job logs' excerpts.
    const { data: logs } = await call("github_get_job_logs", { owner, repo, runId: run.id, tailLines: 0, grep: ERROR_GREP, context: 0, jq: LOGS_JQ });
    for (const entry of failed) {
      const job = logs.find((j) => j.job === entry.job);
      const step = job?.steps.find((s) => s.step === entry.step);
      const first = step && job.errors.find((e) => e.line >= step.first && e.line <= step.last);
      entry.firstError = first?.text ?? null;
    }
    failures.push({ run: run.id, number: run.number, workflow: run.workflow, title: run.title, created: run.created, url: run.url, failed });
  }

  const workflows = [];
  for (const name of [...new Set(failures.map((f) => f.workflow))].sort()) {
    const issues = [];
    for (let token; ;) {
      // A workflow name is free text: quotes and backslashes must not end the JQL string early.
      const phrase = `${name} workflow`.replace(/["\\]/g, "\\$&");
      const queryParams = { jql: `text ~ "${phrase}" ORDER BY updated DESC`, fields: "summary,status", maxResults: "50" };
      if (token) queryParams.nextPageToken = token;
      const { data } = await call("jira_get", { path: "/rest/api/3/search/jql", queryParams, jq: ISSUES_JQ });
      issues.push(...data.issues);
      if (!data.next) break;
      token = data.next;
    }
    // Runs come newest first, so the first finished one is the workflow's latest outcome on main.
    const latest = runs.find((r) => r.workflow === name && r.conclusion !== null);
    const entry = {
      workflow: name,
      failedRuns: failures.filter((f) => f.workflow === name).length,
      latestOnMain: { run: latest.id, conclusion: latest.conclusion },
      jiraIssues: issues,
    };
    if (fileMissing && issues.length === 0) entry.filing = await fileIssue(call, jiraProject, name, failures.filter((f) => f.workflow === name));
    workflows.push(entry);
  }

  return { repository: `${owner}/${repo}`, branch: "main", scanned: { pages: scannedPages, runs: runs.length }, failures, workflows };
}

/** Files one Jira issue for a failing workflow; a policy refusal becomes the outcome. */
async function fileIssue(call, project, workflow, failures) {
  const body = {
    fields: {
      project: { key: project }, issuetype: { name: "Bug" }, summary: `${workflow} workflow fails on main`,
      description: {
        type: "doc", version: 1,
        content: [{ type: "paragraph", content: [{ type: "text", text: `Failed runs: ${failures.map((f) => f.number).join(", ")}.` }] }],
      },
    },
  };
  try {
    const created = await call("jira_post", { path: "/rest/api/3/issue", body, outputFormat: "json" });
    return { outcome: "filed", key: created.key };
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    if (e.code === "approval_required") {
      const { id, status, expiresAt } = e.decision.approval ?? {};
      return { outcome: "awaiting approval", approvalId: id, status, expiresAt, approvers: e.decision.approvers, reason: e.decision.reason };
    }
    return { outcome: "refused", code: e.code, rule: e.decision.rule, reason: e.decision.reason };
  }
}
