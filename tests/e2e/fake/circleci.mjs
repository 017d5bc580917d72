// CircleCI v2 routes of the fake upstream, under /api/v2 (so CIRCLECI_API_URL is `<fake>/api/v2`):
// the current user, a project, its pipelines (opaque `page-token` / `next_page_token` paging, 20
// per page), a pipeline, its workflows, a workflow, its jobs, a job, and the insights summaries.
// Project slugs are `vcs/org/repo` (e.g. gh/octo-org/hello-world); an unknown org answers 404
// with CircleCI's `{message}` body.

import { at, json, sha } from "./util.mjs";

const PIPELINES = 45;
const PAGE = 20;

function token(offset) {
  return Buffer.from(`offset:${offset}`).toString("base64url");
}

function offsetOf(pageToken) {
  if (!pageToken) return 0;
  const m = /^offset:(\d+)$/.exec(Buffer.from(pageToken, "base64url").toString("utf8"));
  return m ? Number(m[1]) : null;
}

function pipelineId(n) {
  return `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
}

function pipeline(slug, n) {
  return {
    id: pipelineId(n), errors: [], project_slug: slug, updated_at: at(1000 + n * 10 + 5), number: n,
    trigger_parameters: {}, state: "created", created_at: at(1000 + n * 10),
    trigger: { received_at: at(1000 + n * 10), type: "webhook", actor: { login: "octocat", avatar_url: "https://avatars.githubusercontent.com/u/583231" } },
    vcs: {
      provider_name: "GitHub", origin_repository_url: `https://github.com/${slug.split("/").slice(1).join("/")}`,
      target_repository_url: `https://github.com/${slug.split("/").slice(1).join("/")}`, revision: sha(n),
      branch: n % 2 ? "main" : "dev", commit: { subject: `Change ${n}`, body: "" },
    },
  };
}

const missing = (res, what) => json(res, 404, { message: `${what} not found` });
const knownOrg = (slug) => !slug.split("/")[1]?.startsWith("missing");

function pageOf(req, res, items) {
  const start = offsetOf(req.query.get("page-token"));
  if (start === null) return json(res, 400, { message: "Invalid page-token." });
  const next = start + PAGE < items.length ? token(start + PAGE) : null;
  json(res, 200, { items: items.slice(start, start + PAGE), next_page_token: next });
}

function metrics(n) {
  return {
    total_runs: 40 + n, successful_runs: 35 + n, mttr: 1800 + n, total_credits_used: 1200 * n, failed_runs: 5,
    success_rate: (35 + n) / (40 + n), duration_metrics: { min: 60, mean: 180 + n, median: 170 + n, p95: 300, max: 420, standard_deviation: 30.5 },
    total_recoveries: 4, throughput: 1.5 + n / 10,
  };
}

/** The CircleCI routes. */
export function circleRoutes() {
  const slugRe = "([^/]+/[^/]+/[^/]+)";
  return [
    ["GET", /^\/api\/v2\/me$/, (req, res) => json(res, 200, { id: "5d4b1c1a-0000-4000-8000-000000000001", login: "octocat", name: "Octo Cat" })],
    ["GET", new RegExp(`^/api/v2/project/${slugRe}$`), (req, res, m) => {
      if (!knownOrg(m[1])) return missing(res, "Project");
      const [vcs, org, repo] = m[1].split("/");
      json(res, 200, {
        slug: m[1], name: repo, id: "6f5b7c9a-0000-4000-8000-000000000002", organization_name: org,
        organization_slug: `${vcs}/${org}`, organization_id: "7a1b2c3d-0000-4000-8000-000000000003",
        vcs_info: { vcs_url: `https://github.com/${org}/${repo}`, provider: "GitHub", default_branch: "main" },
      });
    }],
    ["GET", new RegExp(`^/api/v2/project/${slugRe}/pipeline$`), (req, res, m) => {
      if (!knownOrg(m[1])) return missing(res, "Project");
      const items = [];
      for (let n = PIPELINES; n >= 1; n--) {
        const p = pipeline(m[1], n);
        if (!req.query.get("branch") || p.vcs.branch === req.query.get("branch")) items.push(p);
      }
      pageOf(req, res, items);
    }],
    ["GET", new RegExp(`^/api/v2/project/${slugRe}/job/(\\d+)$`), (req, res, m) => {
      json(res, 200, {
        web_url: `https://app.circleci.com/pipelines/${m[1]}/1/workflows/wf/jobs/${m[2]}`, project: { slug: m[1], name: m[1].split("/")[2] },
        parallel_runs: [{ index: 0, status: "success" }], started_at: at(5), latest_workflow: { id: "wf-1", name: "build-and-test" },
        name: "test", executor: { resource_class: "medium", type: "docker" }, parallelism: 1, status: "success",
        number: Number(m[2]), pipeline: { id: pipelineId(1) }, duration: 180000, created_at: at(4), messages: [], contexts: [],
        organization: { name: m[1].split("/")[1] }, queued_at: at(4), stopped_at: at(8),
      });
    }],
    ["GET", /^\/api\/v2\/pipeline\/([^/]+)$/, (req, res, m) => {
      const n = Number(m[1].split("-").pop());
      if (!/^[0-9a-f-]{36}$/.test(m[1]) || !(n >= 1 && n <= PIPELINES)) return missing(res, "Pipeline");
      json(res, 200, pipeline("gh/octo-org/hello-world", n));
    }],
    ["GET", /^\/api\/v2\/pipeline\/([^/]+)\/workflow$/, (req, res, m) => {
      json(res, 200, { items: [{
        pipeline_id: m[1], id: `wf-${m[1]}`, name: "build-and-test", project_slug: "gh/octo-org/hello-world", status: "success",
        started_by: "5d4b1c1a-0000-4000-8000-000000000001", pipeline_number: 1, created_at: at(5), stopped_at: at(9),
      }], next_page_token: null });
    }],
    ["GET", /^\/api\/v2\/workflow\/([^/]+)$/, (req, res, m) => {
      json(res, 200, { pipeline_id: pipelineId(1), id: m[1], name: "build-and-test", project_slug: "gh/octo-org/hello-world", status: "running", created_at: at(5), stopped_at: null });
    }],
    ["GET", /^\/api\/v2\/workflow\/([^/]+)\/job$/, (req, res, m) => {
      json(res, 200, { items: [
        { dependencies: [], job_number: 7, id: `job-${m[1]}-1`, started_at: at(5), name: "build", project_slug: "gh/octo-org/hello-world", status: "success", type: "build", stopped_at: at(7) },
        { dependencies: [`job-${m[1]}-1`], job_number: 8, id: `job-${m[1]}-2`, started_at: at(7), name: "test", project_slug: "gh/octo-org/hello-world", status: "failed", type: "build", stopped_at: at(8) },
      ], next_page_token: null });
    }],
    ["GET", new RegExp(`^/api/v2/insights/${slugRe}/workflows$`), (req, res, m) => {
      if (!knownOrg(m[1])) return missing(res, "Project");
      json(res, 200, { next_page_token: null, items: ["build-and-test", "nightly"].map((name, i) => ({
        project_id: "6f5b7c9a-0000-4000-8000-000000000002", name, metrics: metrics(i), window_start: at(0), window_end: at(60 * 24 * 90),
      })) });
    }],
    ["GET", new RegExp(`^/api/v2/insights/${slugRe}/workflows/([^/]+)$`), (req, res, m) => {
      json(res, 200, { next_page_token: null, items: [1, 2, 3].map((n) => ({
        id: `run-${n}`, branch: "main", duration: 170 + n, created_at: at(n * 60), stopped_at: at(n * 60 + 3), credits_used: 400 + n, status: "success", is_approval: false,
      })) });
    }],
    ["GET", /^\/api\/v2\/insights\/([^/]+\/[^/]+)\/summary$/, (req, res, m) => {
      json(res, 200, { org_data: { metrics: { total_runs: 500, total_duration_secs: 90000, total_credits_used: 120000, success_rate: 0.93, throughput: 5.5 }, trends: { total_runs: 1.1 } }, org_project_data: [], all_projects: ["hello-world"], org: m[1] });
    }],
  ];
}
