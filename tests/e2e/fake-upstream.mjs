// A fake of the upstream APIs (GitHub, CircleCI, Jira, Confluence, Bitbucket) on 127.0.0.1, for
// end-to-end tests and benchmarks. Routes return deterministic data shaped like the real APIs,
// including each vendor's paging style; tests can script faults and inspect what was requested.
//
//   const upstream = await startFakeUpstream();
//   upstream.url                      // http://127.0.0.1:PORT
//   upstream.fault({ path: /actions\/runs$/, status: 503, times: 1 });
//   upstream.requests                 // [{ method, path, query, headers, body }]
//   upstream.route("GET", /^\/custom$/, (req, res, ctx) => ctx.json(res, 200, {...}));
//   await upstream.close();

import http from "node:http";

const EPOCH = Date.UTC(2026, 0, 1);

/** ISO timestamp `minutes` after 2026-01-01T00:00:00Z. */
function at(minutes) {
  return new Date(EPOCH + minutes * 60_000).toISOString().replace(".000Z", "Z");
}

function json(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function text(res, status, body, headers = {}) {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

function intParam(query, name, fallback, max) {
  const n = Number.parseInt(query.get(name) ?? "", 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, max) : fallback;
}

// ---- GitHub Actions: page/per_page paging with an RFC 8288 Link header ----

const GITHUB_RUNS = 250;

function githubRun(owner, repo, id) {
  const conclusions = ["success", "failure", "cancelled", "success", "success"];
  return {
    id,
    name: id % 3 === 0 ? "Release" : "CI",
    head_branch: id % 4 === 0 ? "feature/x" : "main",
    head_sha: id.toString(16).padStart(40, "0"),
    run_number: id,
    event: id % 5 === 0 ? "pull_request" : "push",
    status: id === GITHUB_RUNS ? "in_progress" : "completed",
    conclusion: id === GITHUB_RUNS ? null : conclusions[id % conclusions.length],
    workflow_id: 1000 + (id % 3),
    html_url: `https://github.com/${owner}/${repo}/actions/runs/${id}`,
    created_at: at(id * 7),
    updated_at: at(id * 7 + 4),
    run_attempt: 1,
    actor: { login: "octocat", id: 583231 },
  };
}

function githubLink(base, query, page, last) {
  const link = (p, rel) => {
    const q = new URLSearchParams(query);
    q.set("page", String(p));
    return `<${base}?${q}>; rel="${rel}"`;
  };
  const parts = [];
  if (page < last) parts.push(link(page + 1, "next"), link(last, "last"));
  if (page > 1) parts.push(link(1, "first"), link(page - 1, "prev"));
  return parts.join(", ");
}

function githubRoutes(ctx) {
  return [
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs$/, (req, res, m) => {
      const perPage = intParam(req.query, "per_page", 30, 100);
      const page = intParam(req.query, "page", 1, 1_000_000);
      const all = [];
      for (let id = GITHUB_RUNS; id >= 1; id--) all.push(id);
      const ids = all.filter((id) => !req.query.get("status") || githubRun(m[1], m[2], id).status === req.query.get("status"));
      const last = Math.max(1, Math.ceil(ids.length / perPage));
      const slice = ids.slice((page - 1) * perPage, page * perPage);
      const link = githubLink(`${ctx.url}${req.path}`, req.query, page, last);
      json(res, 200, { total_count: ids.length, workflow_runs: slice.map((id) => githubRun(m[1], m[2], id)) },
        link ? { Link: link } : {});
    }],
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)$/, (req, res, m) => {
      const id = Number(m[3]);
      if (id < 1 || id > GITHUB_RUNS) return json(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
      json(res, 200, githubRun(m[1], m[2], id));
    }],
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/jobs$/, (req, res, m) => {
      const run = Number(m[3]);
      const jobs = [1, 2, 3].map((n) => ({
        id: run * 10 + n, run_id: run, name: ["build", "test", "lint"][n - 1], status: "completed",
        conclusion: n === 2 && run % 5 === 1 ? "failure" : "success", started_at: at(run * 7), completed_at: at(run * 7 + n),
        steps: [{ name: "checkout", status: "completed", conclusion: "success", number: 1 }],
      }));
      json(res, 200, { total_count: jobs.length, jobs });
    }],
    // Logs answer with a redirect to a short-lived blob URL, as GitHub does.
    ["GET", /^\/repos\/([^/]+)\/([^/]+)\/actions\/jobs\/(\d+)\/logs$/, (req, res, m) => {
      res.writeHead(302, { Location: `${ctx.url}/_blobs/job-${m[3]}.log` });
      res.end();
    }],
    ["GET", /^\/_blobs\/job-(\d+)\.log$/, (req, res, m) => {
      const lines = [];
      for (let i = 1; i <= 50; i++) lines.push(`${at(i)} step ${i} of job ${m[1]}`);
      text(res, 200, lines.join("\n") + "\n");
    }],
  ];
}

// ---- CircleCI v2: next_page_token paging ----

function circleRoutes() {
  const pipelines = Array.from({ length: 45 }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`,
    number: 45 - i,
    state: "created",
    created_at: at(1000 - i * 10),
    trigger: { type: "webhook", actor: { login: "octocat" } },
    vcs: { branch: i % 2 ? "main" : "dev", revision: (i + 1).toString(16).padStart(40, "a") },
  }));
  return [
    ["GET", /^\/api\/v2\/project\/([^/]+\/[^/]+\/[^/]+)\/pipeline$/, (req, res, m) => {
      const start = Number.parseInt(req.query.get("page-token") ?? "0", 10) || 0;
      const items = pipelines.slice(start, start + 20).map((p) => ({ ...p, project_slug: m[1] }));
      const next = start + 20 < pipelines.length ? String(start + 20) : null;
      json(res, 200, { items, next_page_token: next });
    }],
    ["GET", /^\/api\/v2\/pipeline\/([^/]+)\/workflow$/, (req, res, m) => {
      json(res, 200, { items: [{ id: `wf-${m[1]}`, name: "build-and-test", status: "success", pipeline_id: m[1], created_at: at(5), stopped_at: at(9) }], next_page_token: null });
    }],
    ["GET", /^\/api\/v2\/workflow\/([^/]+)\/job$/, (req, res, m) => {
      json(res, 200, { items: [{ id: `job-${m[1]}`, job_number: 7, name: "test", status: "failed", type: "build", started_at: at(5), stopped_at: at(8) }], next_page_token: null });
    }],
    ["GET", /^\/api\/v2\/me$/, (req, res) => json(res, 200, { id: "u-1", login: "octocat", name: "Octo Cat" })],
  ];
}

// ---- Jira Cloud REST v3: startAt/maxResults and nextPageToken paging ----

function jiraIssue(n) {
  return {
    id: String(10000 + n),
    key: `PROJ-${n}`,
    self: `https://example.atlassian.net/rest/api/3/issue/${10000 + n}`,
    fields: {
      summary: `Issue number ${n}`,
      status: { name: n % 3 === 0 ? "Done" : "In Progress", statusCategory: { key: n % 3 === 0 ? "done" : "indeterminate" } },
      assignee: n % 2 ? { displayName: "Ada Lovelace", accountId: "acc-1" } : null,
      priority: { name: "Medium" },
      created: at(n * 60).replace("Z", ".000+0000"),
      updated: at(n * 60 + 30).replace("Z", ".000+0000"),
      labels: n % 4 === 0 ? ["backend", "ci"] : [],
    },
  };
}

function jiraRoutes() {
  const total = 120;
  return [
    ["GET", /^\/rest\/api\/3\/search\/jql$/, (req, res) => {
      const max = intParam(req.query, "maxResults", 50, 100);
      const start = Number.parseInt(req.query.get("nextPageToken") ?? "0", 10) || 0;
      const issues = [];
      for (let n = start + 1; n <= Math.min(total, start + max); n++) issues.push(jiraIssue(n));
      const body = { issues, isLast: start + max >= total };
      if (!body.isLast) body.nextPageToken = String(start + max);
      json(res, 200, body);
    }],
    ["GET", /^\/rest\/api\/3\/issue\/([A-Z]+-\d+|\d+)$/, (req, res, m) => {
      const n = Number(m[1].split("-").pop()) % 10000;
      if (n < 1 || n > total) return json(res, 404, { errorMessages: ["Issue does not exist or you do not have permission to see it."], errors: {} });
      json(res, 200, jiraIssue(n));
    }],
    ["GET", /^\/rest\/api\/3\/myself$/, (req, res) => json(res, 200, { accountId: "acc-1", displayName: "Ada Lovelace", active: true })],
  ];
}

// ---- Confluence Cloud REST v2: cursor paging with _links.next (and a Link header) ----

function confluenceRoutes(ctx) {
  const total = 60;
  const page = (n) => ({
    id: String(2000 + n), status: "current", title: `Runbook ${n}`, spaceId: "42", parentId: null,
    authorId: "acc-1", createdAt: at(n * 90).replace("Z", ".000Z"), version: { number: n % 5 + 1 },
    _links: { webui: `/spaces/OPS/pages/${2000 + n}` },
  });
  return [
    ["GET", /^\/wiki\/api\/v2\/pages$/, (req, res) => {
      const limit = intParam(req.query, "limit", 25, 250);
      const start = Number.parseInt(req.query.get("cursor") ?? "0", 10) || 0;
      const results = [];
      for (let n = start + 1; n <= Math.min(total, start + limit); n++) results.push(page(n));
      const links = { base: `${ctx.url}/wiki` };
      const headers = {};
      if (start + limit < total) {
        const q = new URLSearchParams(req.query);
        q.set("cursor", String(start + limit));
        links.next = `/wiki/api/v2/pages?${q}`;
        headers.Link = `<${links.next}>; rel="next", <${ctx.url}/wiki>; rel="base"`;
      }
      json(res, 200, { results, _links: links }, headers);
    }],
    ["GET", /^\/wiki\/api\/v2\/pages\/(\d+)$/, (req, res, m) => {
      const n = Number(m[1]) - 2000;
      if (n < 1 || n > total) return json(res, 404, { errors: [{ status: 404, code: "NOT_FOUND", title: "Not Found", detail: null }] });
      json(res, 200, { ...page(n), body: { storage: { value: `<p>Step ${n}</p>`, representation: "storage" } } });
    }],
    ["GET", /^\/wiki\/api\/v2\/spaces$/, (req, res) => {
      json(res, 200, { results: [{ id: "42", key: "OPS", name: "Operations", type: "global", status: "current" }], _links: { base: `${ctx.url}/wiki` } });
    }],
  ];
}

// ---- Bitbucket Cloud 2.0: page/pagelen with an absolute `next` URL ----

function bitbucketRoutes(ctx) {
  const total = 35;
  const pipeline = (ws, repo, n) => ({
    type: "pipeline", uuid: `{00000000-0000-4000-9000-${String(n).padStart(12, "0")}}`, build_number: n,
    created_on: at(n * 30).replace("Z", ".000000+00:00"), duration_in_seconds: 60 + n,
    state: { name: "COMPLETED", type: "pipeline_state_completed", result: { name: n % 4 ? "SUCCESSFUL" : "FAILED", type: "pipeline_state_completed_successful" } },
    target: { type: "pipeline_ref_target", ref_type: "branch", ref_name: "main" },
    repository: { full_name: `${ws}/${repo}`, type: "repository" },
  });
  const paged = (req, res, items) => {
    const pagelen = intParam(req.query, "pagelen", 10, 100);
    const pageNo = intParam(req.query, "page", 1, 1_000_000);
    const body = { pagelen, size: items.length, page: pageNo, values: items.slice((pageNo - 1) * pagelen, pageNo * pagelen) };
    if (pageNo * pagelen < items.length) {
      const q = new URLSearchParams(req.query);
      q.set("page", String(pageNo + 1));
      body.next = `${ctx.url}${req.path}?${q}`;
    }
    json(res, 200, body);
  };
  return [
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pipelines\/?$/, (req, res, m) => {
      const items = [];
      for (let n = total; n >= 1; n--) items.push(pipeline(m[1], m[2], n));
      paged(req, res, items);
    }],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/?$/, (req, res, m) => {
      const items = Array.from({ length: 12 }, (_, i) => ({
        type: "pullrequest", id: 12 - i, title: `Change ${12 - i}`, state: "OPEN",
        author: { display_name: "Grace Hopper" }, source: { branch: { name: `topic-${12 - i}` } },
        destination: { branch: { name: "main" } }, created_on: at(i * 45).replace("Z", ".000000+00:00"),
        links: { html: { href: `https://bitbucket.org/${m[1]}/${m[2]}/pull-requests/${12 - i}` } },
      }));
      paged(req, res, items);
    }],
    ["GET", /^\/2\.0\/user$/, (req, res) => json(res, 200, { display_name: "Grace Hopper", uuid: "{u-1}", type: "user" })],
  ];
}

/**
 * Starts the fake upstream on 127.0.0.1 (a free port unless `port` is given).
 * Faults: `fault({ path, method?, status?, body?, headers?, delayMs?, bodyBytes?, hangUp?, times? })`
 * matches requests whose path matches `path` (string prefix or RegExp) and answers instead of the
 * route: after `delayMs`, with `status`/`headers`/`body` (or `bodyBytes` filler bytes), or by
 * destroying the socket when `hangUp` is set. `times` (default unlimited) bounds how often it fires.
 */
export async function startFakeUpstream({ port = 0 } = {}) {
  const ctx = { url: "" };
  const extra = [];
  const builtIn = [...githubRoutes(ctx), ...circleRoutes(), ...jiraRoutes(), ...confluenceRoutes(ctx), ...bitbucketRoutes(ctx)];
  let faults = [];
  const requests = [];

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks)));
  });
  const sockets = new Set();
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });

  async function handle(req, res, body) {
    const url = new URL(req.url, ctx.url);
    const entry = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body: body.toString("utf8") };
    requests.push(entry);
    const fault = faults.find((f) => f.times !== 0 && (!f.method || f.method === req.method) &&
      (f.path instanceof RegExp ? f.path.test(url.pathname) : url.pathname.startsWith(f.path)));
    if (fault) {
      if (fault.times > 0) fault.times--;
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.hangUp) return req.socket.destroy();
      const payload = fault.bodyBytes !== undefined ? Buffer.alloc(fault.bodyBytes, 0x61) : Buffer.from(
        typeof fault.body === "string" ? fault.body : JSON.stringify(fault.body ?? { message: "injected fault" }));
      res.writeHead(fault.status ?? 500, { "Content-Type": "application/json", "Content-Length": payload.length, ...fault.headers });
      return res.end(payload);
    }
    const request = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body };
    for (const [method, pattern, fn] of [...extra, ...builtIn]) {
      const m = method === req.method || (method === "GET" && req.method === "HEAD") ? pattern.exec(url.pathname) : null;
      if (m) return fn(request, res, m);
    }
    json(res, 404, { message: "Not Found" });
  }

  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  ctx.url = `http://127.0.0.1:${server.address().port}`;

  return {
    get url() { return ctx.url; },
    requests,
    /** Adds a fault; returns it so a test can check `times` afterwards. */
    fault(spec) { const f = { times: -1, ...spec }; faults.push(f); return f; },
    /** Adds a route checked before the built-in ones; `fn(req, res, match, helpers)`. */
    route(method, pattern, fn) { extra.push([method, pattern, (req, res, m) => fn(req, res, m, { json, text })]); },
    /** Forgets faults, extra routes and recorded requests. */
    reset() { faults = []; extra.length = 0; requests.length = 0; },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// `node tests/e2e/fake-upstream.mjs [port]` serves it standalone for `make dev` experiments.
if (import.meta.url === `file://${process.argv[1]}`) {
  const upstream = await startFakeUpstream({ port: Number(process.argv[2] ?? 0) });
  console.log(`fake upstream listening on ${upstream.url}`);
}
