// GitHub Actions REST routes of the fake upstream: workflow runs (per repository and per workflow),
// one run, a run's jobs and job logs. Objects carry the fields GitHub documents for
// "workflow-run" and "job" (a page of 100 runs is about 300 KB, like a real one); paging follows
// GitHub: `per_page` (default 30, capped at 100) and `page`, with an RFC 8288 Link header written
// the way api.github.com writes it (rel order prev, next, last, first; URLs under
// /repositories/{id}/..., the caller's query kept and `page` set).

import { at, json, intParam, sha } from "./util.mjs";

/** How many runs every repository has; run ids count down from here on page 1. */
export const GITHUB_RUNS = 250;

/** Most runs a `history-<n>` repository can have. */
const MAX_HISTORY_RUNS = 5000;

/**
 * How many runs owner/repo has: `history-<n>` repositories have n (1..5000), so measurements can
 * scale the data; every other repository has GITHUB_RUNS.
 */
export function runCount(owner, repo) {
  const m = /^history-(\d+)$/.exec(repo);
  const n = m ? Number(m[1]) : 0;
  return n >= 1 && n <= MAX_HISTORY_RUNS ? n : GITHUB_RUNS;
}

/** The workflows every repository has, by id; `workflowId` may also be the file name. */
export const WORKFLOWS = [
  { id: 1000, name: "CI", file: "ci.yml" },
  { id: 1001, name: "Release", file: "release.yml" },
  { id: 1002, name: "Nightly", file: "nightly.yml" },
];

const ACTORS = ["octocat", "hubot", "monalisa"];
const NOT_FOUND_DOC = "https://docs.github.com/rest/actions/workflow-runs";

function notFound(res, doc = NOT_FOUND_DOC) {
  json(res, 404, { message: "Not Found", documentation_url: doc, status: "404" });
}

/** A stable numeric repository id, as GitHub's Link URLs use /repositories/{id}. */
export function repoId(owner, repo) {
  let h = 7;
  for (const c of `${owner}/${repo}`) h = (h * 31 + c.charCodeAt(0)) % 900_000_000;
  return 100_000_000 + h;
}

function user(base, login) {
  const id = 583231 + ACTORS.indexOf(login);
  return {
    login, id, node_id: `MDQ6VXNlcj${id}`, avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: "", url: `${base}/users/${login}`, html_url: `https://github.com/${login}`,
    type: "User", site_admin: false,
  };
}

function repository(base, owner, repo) {
  const api = `${base}/repos/${owner}/${repo}`;
  return {
    id: repoId(owner, repo), node_id: `R_kgDO${repoId(owner, repo)}`, name: repo, full_name: `${owner}/${repo}`,
    private: false, owner: user(base, "octocat"), html_url: `https://github.com/${owner}/${repo}`,
    description: "A repository with workflows", fork: false, url: api,
    commits_url: `${api}/commits{/sha}`, pulls_url: `${api}/pulls{/number}`,
  };
}

/** A runs page of octo-org/big of about `bytes` (just over), for tests of large bodies. */
export function bigRunsPage(base, bytes) {
  const runs = [];
  let size = 40;
  for (let id = 1; size < bytes; id++) {
    const run = JSON.stringify(githubRun(base, "octo-org", "big", id));
    runs.push(run);
    size += run.length + 1;
  }
  return Buffer.from(`{"total_count":${runs.length},"workflow_runs":[${runs.join(",")}]}`);
}

/** Run `id` of owner/repo; the newest run (id runCount) is still in progress. */
export function githubRun(base, owner, repo, id) {
  const conclusions = ["success", "failure", "cancelled", "success", "success"];
  const workflow = WORKFLOWS[id % WORKFLOWS.length];
  const actor = ACTORS[id % ACTORS.length];
  const branch = id % 4 === 0 ? "feature/x" : "main";
  const event = id % 5 === 0 ? "pull_request" : "push";
  const attempt = id % 7 === 0 ? 2 : 1;
  const head = sha(id);
  const api = `${base}/repos/${owner}/${repo}`;
  const running = id === runCount(owner, repo);
  return {
    id, name: workflow.name, node_id: `WFR_kwLO${id}`, head_branch: branch, head_sha: head,
    path: `.github/workflows/${workflow.file}`, display_title: `Change number ${id}`, run_number: id, event,
    status: running ? "in_progress" : "completed", conclusion: running ? null : conclusions[id % conclusions.length],
    workflow_id: workflow.id, check_suite_id: 9_000_000 + id, check_suite_node_id: `CS_kwDO${9_000_000 + id}`,
    url: `${api}/actions/runs/${id}`, html_url: `https://github.com/${owner}/${repo}/actions/runs/${id}`,
    pull_requests: event === "pull_request"
      ? [{ url: `${api}/pulls/${id}`, id: 700_000 + id, number: id, head: { ref: branch, sha: head }, base: { ref: "main", sha: sha(id + 1) } }]
      : [],
    created_at: at(id * 7), updated_at: at(id * 7 + 4), actor: user(base, actor), run_attempt: attempt,
    referenced_workflows: [], run_started_at: at(id * 7), triggering_actor: user(base, actor),
    jobs_url: `${api}/actions/runs/${id}/jobs`, logs_url: `${api}/actions/runs/${id}/logs`,
    check_suite_url: `${api}/check-suites/${9_000_000 + id}`, artifacts_url: `${api}/actions/runs/${id}/artifacts`,
    cancel_url: `${api}/actions/runs/${id}/cancel`, rerun_url: `${api}/actions/runs/${id}/rerun`,
    previous_attempt_url: attempt > 1 ? `${api}/actions/runs/${id}/attempts/1` : null,
    workflow_url: `${api}/actions/workflows/${workflow.id}`,
    head_commit: {
      id: head, tree_id: sha(id + 100_000), message: `Change number ${id}\n\nWith a body line.`, timestamp: at(id * 7 - 1),
      author: { name: "Octo Cat", email: "octocat@github.com" }, committer: { name: "GitHub", email: "noreply@github.com" },
    },
    repository: repository(base, owner, repo),
    head_repository: { id: repoId(owner, repo), name: repo, full_name: `${owner}/${repo}`, private: false, url: api },
  };
}

/**
 * The jobs of one attempt of run `runId`: 3, or a 25-job matrix for every tenth run. In the latest
 * attempt of a failed run, job `failingJob(runId)` fails at its `Run <job>` step and every other
 * job succeeds, so "which job and step failed" has one answer per failed run.
 */
function attemptJobs(base, owner, repo, runId, attempt) {
  const names = runId % 10 === 0
    ? Array.from({ length: 25 }, (_, i) => `test (node ${i + 1})`)
    : ["build", "test", "lint"];
  const api = `${base}/repos/${owner}/${repo}`;
  const run = githubRun(base, owner, repo, runId);
  return names.map((name, i) => {
    const id = runId * 1000 + attempt * 100 + i + 1;
    const failsHere = attempt === run.run_attempt && run.conclusion === "failure" && name === failingJob(runId);
    const failed = (attempt === 1 && run.run_attempt > 1 && i === 0) || failsHere;
    const running = run.status !== "completed";
    return {
      id, run_id: runId, workflow_name: run.name, head_branch: run.head_branch, run_url: `${api}/actions/runs/${runId}`,
      run_attempt: attempt, node_id: `CR_kwDO${id}`, head_sha: run.head_sha, url: `${api}/actions/jobs/${id}`,
      html_url: `https://github.com/${owner}/${repo}/actions/runs/${runId}/job/${id}`,
      status: running ? "in_progress" : "completed", conclusion: running ? null : failed ? "failure" : "success",
      created_at: at(runId * 7), started_at: at(runId * 7), completed_at: running ? null : at(runId * 7 + i + 1), name,
      steps: ["Set up job", "Run actions/checkout@v4", `Run ${name}`, "Complete job"].map((step, n) => ({
        name: step, status: "completed", conclusion: failsHere && n === 2 ? "failure" : "success", number: n + 1,
        started_at: at(runId * 7), completed_at: at(runId * 7 + 1),
      })),
      check_run_url: `${api}/check-runs/${id}`, labels: ["ubuntu-latest"], runner_id: 10 + i,
      runner_name: `GitHub Actions ${10 + i}`, runner_group_id: 2, runner_group_name: "GitHub Actions",
    };
  });
}

/** The first error line of a failing job's `Run <job>` step in its log. */
export function jobError(runId, name) {
  return `error: ${name} failed: expected status 200, got 500 in test_run_${runId}`;
}

/**
 * The log of job `jobId` of owner/repo, runner-stamped like GitHub's: a header group per step,
 * and in the failing step of a failed job an error line and the runner's `##[error]`.
 */
export function githubJobLog(base, owner, repo, jobId) {
  const runId = Math.floor(jobId / 1000);
  const attempt = Math.floor((jobId % 1000) / 100);
  const job = runId >= 1 && runId <= runCount(owner, repo) ? attemptJobs(base, owner, repo, runId, attempt)[(jobId % 100) - 1] : undefined;
  const name = job?.name ?? `job ${jobId}`;
  const stamp = `${(job?.started_at ?? at(1)).replace("Z", "")}.5000000Z`;
  const failing = job?.steps.some((s) => s.conclusion === "failure");
  const lines = [
    "Current runner version: '2.321.0'", "##[group]Run actions/checkout@v4", "with:", "##[endgroup]",
    "Syncing repository: octo-org/hello-world", `##[group]Run ${name}`, `${name}`, "##[endgroup]",
    `running ${name} for run ${runId}`,
    ...(failing ? [jobError(runId, name), "##[error]Process completed with exit code 1."] : [`${name} passed`]),
    "Cleaning up orphan processes",
  ];
  return lines.map((l) => `${stamp} ${l}\r\n`).join("");
}

/** The job that fails in the latest attempt of failed run `runId` (failed runs have 3 jobs). */
export function failingJob(runId) {
  return ["build", "test", "lint"][runId % 3];
}

/** GitHub's Link header for `page` of `last`: prev, next, last, first, as api.github.com orders them. */
export function githubLink(base, query, page, last) {
  const link = (p, rel) => {
    const q = new URLSearchParams(query);
    q.set("page", String(p));
    return `<${base}?${q}>; rel="${rel}"`;
  };
  const parts = [];
  if (page > 1) parts.push(link(Math.min(page - 1, last), "prev"));
  if (page < last) parts.push(link(page + 1, "next"), link(last, "last"));
  if (page > 1) parts.push(link(1, "first"));
  return parts.join(", ");
}

/** Answers one page of `items` under `key`, with total_count and a Link header when there is more than one page. */
function paged(req, res, linkBase, key, items) {
  const perPage = intParam(req.query, "per_page", 30, 100);
  const page = intParam(req.query, "page", 1, 1_000_000);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = githubLink(linkBase, req.query, page, last);
  json(res, 200, { total_count: items.length, [key]: items.slice((page - 1) * perPage, page * perPage) },
    link ? { Link: link } : {});
}

function runsMatching(base, owner, repo, query, workflow) {
  const runs = [];
  for (let id = runCount(owner, repo); id >= 1; id--) {
    const run = githubRun(base, owner, repo, id);
    const status = query.get("status");
    if (workflow && run.workflow_id !== workflow.id) continue;
    if (status && run.status !== status && run.conclusion !== status) continue;
    if (query.get("branch") && run.head_branch !== query.get("branch")) continue;
    if (query.get("event") && run.event !== query.get("event")) continue;
    if (query.get("actor") && run.actor.login !== query.get("actor")) continue;
    runs.push(run);
  }
  return runs;
}

/** The GitHub routes; `ctx.url` is the fake's own base URL, used in URLs inside bodies. */
export function githubRoutes(ctx) {
  return [
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs$/, (req, res, m) => {
      const [, owner, repo] = m;
      const runs = runsMatching(ctx.url, owner, repo, req.query, null);
      paged(req, res, `${ctx.url}/repositories/${repoId(owner, repo)}/actions/runs`, "workflow_runs", runs);
    }],
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/workflows\/([^/]+)\/runs$/, (req, res, m) => {
      const [, owner, repo] = m;
      const key = decodeURIComponent(m[3]);
      const workflow = WORKFLOWS.find((w) => String(w.id) === key || w.file === key);
      if (!workflow) return notFound(res, "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow");
      const runs = runsMatching(ctx.url, owner, repo, req.query, workflow);
      paged(req, res, `${ctx.url}/repositories/${repoId(owner, repo)}/actions/workflows/${m[3]}/runs`, "workflow_runs", runs);
    }],
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)$/, (req, res, m) => {
      const id = Number(m[3]);
      if (id < 1 || id > runCount(m[1], m[2])) return notFound(res);
      json(res, 200, githubRun(ctx.url, m[1], m[2], id));
    }],
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/jobs$/, (req, res, m) => {
      const [, owner, repo] = m;
      const id = Number(m[3]);
      if (id < 1 || id > runCount(owner, repo)) return notFound(res, "https://docs.github.com/rest/actions/workflow-jobs");
      const attempts = githubRun(ctx.url, owner, repo, id).run_attempt;
      const filter = req.query.get("filter") ?? "latest";
      if (filter !== "latest" && filter !== "all") {
        return json(res, 422, { message: "Validation Failed", errors: [{ resource: "Job", field: "filter", code: "invalid" }],
          documentation_url: "https://docs.github.com/rest/actions/workflow-jobs", status: "422" });
      }
      const jobs = [];
      for (let a = attempts; a >= (filter === "all" ? 1 : attempts); a--) jobs.push(...attemptJobs(ctx.url, owner, repo, id, a));
      paged(req, res, `${ctx.url}/repositories/${repoId(owner, repo)}/actions/runs/${id}/jobs`, "jobs", jobs);
    }],
    // Logs answer with a redirect to a short-lived URL on the blob store (a second loopback
    // host, tests/e2e/fake/logs.mjs), as GitHub does.
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/jobs\/(\d+)\/logs$/, (req, res, m) => {
      res.writeHead(302, { Location: `${ctx.logHosts.blobs.url}/job-logs/${m[1]}/${m[2]}/${m[3]}?sp=r&sig=FAKE` });
      res.end();
    }],
  ];
}

/** Headers of GitHub's primary rate-limit 403, with the reset at `resetEpochSeconds`. */
export function githubRateLimitHeaders(resetEpochSeconds) {
  return {
    "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
    "X-RateLimit-Reset": String(resetEpochSeconds), "X-RateLimit-Resource": "core",
  };
}

/** The body GitHub sends with a primary rate-limit 403. */
export const GITHUB_RATE_LIMIT_BODY = {
  message: "API rate limit exceeded for user ID 583231. If you reach out to GitHub Support for help, please include the request ID 0000:1111:2222:3333:4444.",
  documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
  status: "403",
};
