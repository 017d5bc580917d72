// Jira Cloud (REST v3), Confluence Cloud (REST v2 pages, v1 CQL search) and Bitbucket Cloud (2.0)
// routes of the fake upstream, with each API's paging style and the answers its writes give:
// Jira 201 with {id,key,self} on create and 204 on update/delete/transition; Confluence 200 on
// page create/update and 204 on delete; Bitbucket 201 on create, 204 on delete, and diffs as
// text/plain.

import { at, json, text, noContent, intParam, bodyJson } from "./util.mjs";

const JIRA_ISSUES = 120;
const JIRA_NOT_FOUND = { errorMessages: ["Issue does not exist or you do not have permission to see it."], errors: {} };

function jiraIssue(base, n) {
  return {
    expand: "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
    id: String(10000 + n), self: `${base}/rest/api/3/issue/${10000 + n}`, key: `PROJ-${n}`,
    fields: {
      summary: `Issue number ${n}`,
      status: { name: n % 3 === 0 ? "Done" : "In Progress", id: n % 3 === 0 ? "10002" : "3", statusCategory: { key: n % 3 === 0 ? "done" : "indeterminate", colorName: n % 3 === 0 ? "green" : "yellow" } },
      assignee: n % 2 ? { accountId: "5b10a2844c20165700ede21g", displayName: "Ada Lovelace", active: true } : null,
      reporter: { accountId: "5b10ac8d82e05b22cc7d4ef5", displayName: "Grace Hopper", active: true },
      priority: { name: "Medium", id: "3" }, issuetype: { name: n % 5 === 0 ? "Bug" : "Task", subtask: false },
      project: { key: "PROJ", name: "Project", id: "10000" },
      created: at(n * 60).replace("Z", ".000+0000"), updated: at(n * 60 + 30).replace("Z", ".000+0000"),
      labels: n % 4 === 0 ? ["backend", "ci"] : [],
      description: { type: "doc", version: 1, content: [{ type: "paragraph", content: [{ type: "text", text: `Steps for issue ${n}.` }] }] },
    },
  };
}

/**
 * Issues of project OPS that mention GitHub workflows by name (tests/e2e/fake/github.mjs: CI,
 * Release, Nightly): Release and Nightly are mentioned, CI is not. Only a text search finds them,
 * so listings of PROJ stay as they were.
 */
const OPS_MENTIONS = [
  { n: 7, summary: "Release workflow fails on main", text: "The Release workflow has failed on main since the signing key rotated." },
  { n: 12, summary: "Nightly workflow: flaky lint step", text: "Lint in the Nightly workflow times out now and then." },
  { n: 15, summary: "Nightly workflow runs out of disk space", text: "Clean the cache before the build job of the Nightly workflow." },
];

function opsIssue(base, mention) {
  const issue = jiraIssue(base, mention.n);
  const id = String(20000 + mention.n);
  return {
    ...issue, id, self: `${base}/rest/api/3/issue/${id}`, key: `OPS-${mention.n}`,
    fields: {
      ...issue.fields, summary: mention.summary, project: { key: "OPS", name: "Operations", id: "10001" },
      description: { type: "doc", version: 1, content: [{ type: "paragraph", content: [{ type: "text", text: mention.text }] }] },
    },
  };
}

/** The plain text of an issue's summary and description, for the fake's `text ~` search. */
function issueText(issue) {
  const walk = (node) => (node?.text ?? "") + " " + (node?.content ?? []).map(walk).join(" ");
  return `${issue.fields.summary} ${walk(issue.fields.description)}`;
}

const words = (s) => new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/**
 * The issues a JQL `text ~ "phrase"` clause finds (every word of the phrase in the summary or
 * description, as Jira's word search does), or null when the JQL has no such clause.
 */
function textSearch(base, jql) {
  const m = /\btext\s*~\s*"((?:[^"\\]|\\.)*)"/i.exec(jql);
  if (!m) return null;
  const wanted = [...words(m[1].replace(/\\(.)/g, "$1"))];
  const all = [...Array.from({ length: JIRA_ISSUES }, (_, i) => jiraIssue(base, i + 1)), ...OPS_MENTIONS.map((o) => opsIssue(base, o))];
  return all.filter((issue) => {
    const have = words(issueText(issue));
    return wanted.every((w) => have.has(w));
  });
}

function jiraIssueNumber(keyOrId) {
  const n = /^PROJ-(\d+)$/.test(keyOrId) ? Number(keyOrId.slice(5)) : Number(keyOrId) - 10000;
  return n >= 1 && n <= JIRA_ISSUES ? n : null;
}

function jiraRoutes(ctx) {
  let created = JIRA_ISSUES;
  return [
    // Enhanced search: `nextPageToken` (opaque) and `isLast`, maxResults default 50, capped at 100.
    ["GET", /^\/rest\/api\/3\/search\/jql$/, (req, res) => {
      const max = intParam(req.query, "maxResults", 50, 100);
      const start = Number.parseInt(Buffer.from(req.query.get("nextPageToken") ?? "", "base64url").toString() || "0", 10) || 0;
      const jql = req.query.get("jql") ?? "";
      if (/\bORDER BY\s*$/i.test(jql) || /[=!<>]\s*$/.test(jql)) {
        return json(res, 400, { errorMessages: [`Error in the JQL Query: Expecting either a value, list or function but got 'EOF'. You must surround 'EOF' in quotation marks to use it as a value. (line 1, character ${jql.length + 1})`], errors: {}, warningMessages: [] });
      }
      const found = textSearch(ctx.url, jql);
      const total = found ? found.length : JIRA_ISSUES;
      const issues = [];
      for (let n = start + 1; n <= Math.min(total, start + max); n++) issues.push(found ? found[n - 1] : jiraIssue(ctx.url, n));
      const body = { issues, isLast: start + max >= total };
      if (!body.isLast) body.nextPageToken = Buffer.from(String(start + max)).toString("base64url");
      json(res, 200, body);
    }],
    ["GET", /^\/rest\/api\/3\/issue\/([^/]+)$/, (req, res, m) => {
      const ops = OPS_MENTIONS.find((o) => m[1] === `OPS-${o.n}` || m[1] === String(20000 + o.n));
      if (ops) return json(res, 200, opsIssue(ctx.url, ops));
      const n = jiraIssueNumber(m[1]);
      if (n === null) return json(res, 404, JIRA_NOT_FOUND);
      json(res, 200, jiraIssue(ctx.url, n));
    }],
    ["POST", /^\/rest\/api\/3\/issue$/, (req, res) => {
      const body = bodyJson(req);
      const errors = {};
      if (!body?.fields?.summary) errors.summary = "You must specify a summary of the issue.";
      if (!body?.fields?.project) errors.project = "Specify a valid project ID or key";
      if (Object.keys(errors).length) return json(res, 400, { errorMessages: [], errors });
      created += 1;
      json(res, 201, { id: String(10000 + created), key: `PROJ-${created}`, self: `${ctx.url}/rest/api/3/issue/${10000 + created}` });
    }],
    ["PUT", /^\/rest\/api\/3\/issue\/([^/]+)$/, (req, res, m) => (jiraIssueNumber(m[1]) === null ? json(res, 404, JIRA_NOT_FOUND) : noContent(res))],
    ["DELETE", /^\/rest\/api\/3\/issue\/([^/]+)$/, (req, res, m) => (jiraIssueNumber(m[1]) === null ? json(res, 404, JIRA_NOT_FOUND) : noContent(res))],
    ["POST", /^\/rest\/api\/3\/issue\/([^/]+)\/transitions$/, (req, res, m) => (jiraIssueNumber(m[1]) === null ? json(res, 404, JIRA_NOT_FOUND) : noContent(res))],
    ["POST", /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/, (req, res, m) => {
      if (jiraIssueNumber(m[1]) === null) return json(res, 404, JIRA_NOT_FOUND);
      json(res, 201, { id: "10100", self: `${ctx.url}/rest/api/3/issue/${m[1]}/comment/10100`, body: bodyJson(req)?.body ?? null, created: at(5).replace("Z", ".000+0000") });
    }],
    ["GET", /^\/rest\/api\/3\/myself$/, (req, res) => json(res, 200, {
      self: `${ctx.url}/rest/api/3/user?accountId=5b10a2844c20165700ede21g`, accountId: "5b10a2844c20165700ede21g",
      accountType: "atlassian", emailAddress: "ada@example.com", displayName: "Ada Lovelace", active: true, timeZone: "Europe/London",
    })],
  ];
}

function confluencePage(base, n) {
  return {
    id: String(2000 + n), status: "current", title: `Runbook ${n}`, spaceId: "42", parentId: null, parentType: null,
    authorId: "5b10a2844c20165700ede21g", ownerId: "5b10a2844c20165700ede21g", createdAt: at(n * 90).replace("Z", ".000Z"),
    version: { number: (n % 5) + 1, message: "", minorEdit: false, authorId: "5b10a2844c20165700ede21g", createdAt: at(n * 90 + 5).replace("Z", ".000Z") },
    _links: { webui: `/spaces/OPS/pages/${2000 + n}/Runbook+${n}`, editui: `/pages/resumedraft.action?draftId=${2000 + n}`, tinyui: `/x/${n}` },
  };
}

function confluenceRoutes(ctx) {
  const total = 60;
  return [
    // v2 cursor paging: `_links.next` relative to the site, and the same in a Link header.
    ["GET", /^\/wiki\/api\/v2\/pages$/, (req, res) => {
      const limit = intParam(req.query, "limit", 25, 250);
      const start = Number.parseInt(Buffer.from(req.query.get("cursor") ?? "", "base64url").toString() || "0", 10) || 0;
      const results = [];
      for (let n = start + 1; n <= Math.min(total, start + limit); n++) results.push(confluencePage(ctx.url, n));
      const links = { base: `${ctx.url}/wiki` };
      const headers = {};
      if (start + limit < total) {
        const q = new URLSearchParams(req.query);
        q.set("cursor", Buffer.from(String(start + limit)).toString("base64url"));
        links.next = `/wiki/api/v2/pages?${q}`;
        headers.Link = `<${links.next}>; rel="next", <${ctx.url}/wiki>; rel="base"`;
      }
      json(res, 200, { results, _links: links }, headers);
    }],
    ["GET", /^\/wiki\/api\/v2\/pages\/(\d+)$/, (req, res, m) => {
      const n = Number(m[1]) - 2000;
      if (n < 1 || n > total) return json(res, 404, { errors: [{ status: 404, code: "NOT_FOUND", title: "Not Found", detail: null }] });
      json(res, 200, { ...confluencePage(ctx.url, n), body: { storage: { value: `<p>Step ${n}</p>`, representation: "storage" } } });
    }],
    ["POST", /^\/wiki\/api\/v2\/pages$/, (req, res) => {
      const body = bodyJson(req);
      if (!body?.spaceId || !body?.title) return json(res, 400, { errors: [{ status: 400, code: "INVALID_REQUEST_PARAMETER", title: "spaceId and title are required", detail: null }] });
      json(res, 200, { ...confluencePage(ctx.url, 61), title: body.title, spaceId: String(body.spaceId) });
    }],
    ["PUT", /^\/wiki\/api\/v2\/pages\/(\d+)$/, (req, res, m) => {
      const body = bodyJson(req);
      json(res, 200, { ...confluencePage(ctx.url, Number(m[1]) - 2000), title: body?.title ?? "Untitled", version: { number: body?.version?.number ?? 2 } });
    }],
    ["DELETE", /^\/wiki\/api\/v2\/pages\/(\d+)$/, (req, res) => noContent(res)],
    ["GET", /^\/wiki\/api\/v2\/spaces$/, (req, res) => {
      json(res, 200, { results: [{ id: "42", key: "OPS", name: "Operations", type: "global", status: "current", homepageId: "2001" }], _links: { base: `${ctx.url}/wiki` } });
    }],
    // v1 CQL search: start/limit/size/totalSize, `_links.next` when more remain.
    ["GET", /^\/wiki\/rest\/api\/search$/, (req, res) => {
      const cql = req.query.get("cql");
      if (!cql) return json(res, 400, { statusCode: 400, data: { authorized: false, valid: true, errors: [], successful: false }, message: "CQL was not provided" });
      const limit = intParam(req.query, "limit", 25, 100);
      const start = Number.parseInt(req.query.get("start") ?? "0", 10) || 0;
      const results = [];
      for (let n = start + 1; n <= Math.min(total, start + limit); n++) {
        const page = confluencePage(ctx.url, n);
        results.push({
          content: { id: page.id, type: "page", status: "current", title: page.title, _links: { webui: page._links.webui, self: `${ctx.url}/wiki/rest/api/content/${page.id}` } },
          title: page.title, excerpt: `How to handle incident type ${n}`, url: page._links.webui,
          resultGlobalContainer: { title: "Operations", displayUrl: "/spaces/OPS" }, entityType: "content",
          lastModified: page.version.createdAt, friendlyLastModified: "Jan 01, 2026", score: 1 / n,
        });
      }
      const links = { base: `${ctx.url}/wiki`, context: "/wiki" };
      if (start + limit < total) {
        const q = new URLSearchParams(req.query);
        q.set("start", String(start + limit));
        links.next = `/rest/api/search?${q}`;
      }
      json(res, 200, { results, start, limit, size: results.length, totalSize: total, cqlQuery: cql, searchDuration: 42, _links: links });
    }],
  ];
}

function bitbucketRoutes(ctx) {
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
  const repo = (ws, slug) => ({
    type: "repository", full_name: `${ws}/${slug}`, name: slug, slug, is_private: true, uuid: `{r-${slug}}`,
    links: { html: { href: `https://bitbucket.org/${ws}/${slug}` }, self: { href: `${ctx.url}/2.0/repositories/${ws}/${slug}` } },
    mainbranch: { name: "main", type: "branch" }, language: "rust", updated_on: at(100).replace("Z", ".000000+00:00"),
  });
  const pr = (ws, slug, id) => ({
    type: "pullrequest", id, title: `Change ${id}`, state: "OPEN", author: { display_name: "Grace Hopper", type: "user" },
    source: { branch: { name: `topic-${id}` }, repository: { full_name: `${ws}/${slug}` } },
    destination: { branch: { name: "main" }, repository: { full_name: `${ws}/${slug}` } },
    created_on: at(id * 45).replace("Z", ".000000+00:00"), comment_count: id % 3, task_count: 0,
    links: { html: { href: `https://bitbucket.org/${ws}/${slug}/pull-requests/${id}` } },
  });
  const notFound = (res, what) => json(res, 404, { type: "error", error: { message: `${what} not found` } });
  return [
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/?$/, (req, res, m) => {
      if (m[1].startsWith("missing")) return notFound(res, "Workspace");
      paged(req, res, Array.from({ length: 23 }, (_, i) => repo(m[1], `repo-${String(i + 1).padStart(2, "0")}`)));
    }],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/?$/, (req, res, m) => json(res, 200, repo(m[1], m[2]))],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/?$/, (req, res, m) => {
      paged(req, res, Array.from({ length: 12 }, (_, i) => pr(m[1], m[2], 12 - i)));
    }],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/(\d+)$/, (req, res, m) => {
      const id = Number(m[3]);
      if (id < 1 || id > 12) return notFound(res, "Pull request");
      json(res, 200, pr(m[1], m[2], id));
    }],
    ["POST", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/?$/, (req, res, m) => {
      const body = bodyJson(req);
      if (!body?.title) return json(res, 400, { type: "error", error: { message: "title: This field is required.", fields: { title: ["This field is required."] } } });
      json(res, 201, { ...pr(m[1], m[2], 13), title: body.title });
    }],
    ["PUT", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/(\d+)$/, (req, res, m) => {
      json(res, 200, { ...pr(m[1], m[2], Number(m[3])), title: bodyJson(req)?.title ?? `Change ${m[3]}` });
    }],
    ["POST", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/(\d+)\/approve$/, (req, res) => {
      json(res, 200, { type: "participant", role: "REVIEWER", approved: true, state: "approved", user: { display_name: "Grace Hopper" } });
    }],
    ["DELETE", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pullrequests\/(\d+)\/approve$/, (req, res) => noContent(res)],
    ["DELETE", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/refs\/branches\/(.+)$/, (req, res) => noContent(res)],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/diff\/(.+)$/, (req, res, m) => {
      text(res, 200, [
        `diff --git a/src/main.rs b/src/main.rs`, `index 3b18e51..a9c2f1d 100644`, `--- a/src/main.rs`, `+++ b/src/main.rs`,
        `@@ -1,3 +1,4 @@`, ` fn main() {`, `-    println!("hello");`, `+    println!("hello, {}", "world");`, `+    // spec ${m[3]}`, ` }`, "",
      ].join("\n"));
    }],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/src\/([^/]+)\/(.+)$/, (req, res, m) => text(res, 200, `# ${m[4]} at ${m[3]}\n`)],
    ["GET", /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/pipelines\/?$/, (req, res, m) => {
      const items = [];
      for (let n = 35; n >= 1; n--) {
        items.push({
          type: "pipeline", uuid: `{00000000-0000-4000-9000-${String(n).padStart(12, "0")}}`, build_number: n,
          created_on: at(n * 30).replace("Z", ".000000+00:00"), duration_in_seconds: 60 + n,
          state: { name: "COMPLETED", type: "pipeline_state_completed", result: { name: n % 4 ? "SUCCESSFUL" : "FAILED", type: "pipeline_state_completed_successful" } },
          target: { type: "pipeline_ref_target", ref_type: "branch", ref_name: "main" }, repository: { full_name: `${m[1]}/${m[2]}`, type: "repository" },
        });
      }
      paged(req, res, items);
    }],
    ["GET", /^\/2\.0\/user$/, (req, res) => json(res, 200, { display_name: "Grace Hopper", uuid: "{u-1}", type: "user", account_id: "5b10ac8d82e05b22cc7d4ef5" })],
  ];
}

/** The Jira, Confluence and Bitbucket routes; `ctx.url` is the fake's own base URL. */
export function atlassianRoutes(ctx) {
  return [...jiraRoutes(ctx), ...confluenceRoutes(ctx), ...bitbucketRoutes(ctx)];
}
