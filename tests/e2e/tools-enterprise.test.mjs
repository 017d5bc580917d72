// GitHub Enterprise Server (decision 0108) in workerd through the official client: GITHUB_API_URL
// on the server's own host, the job-log tool taking that server's run and job URLs, its job-log
// redirect to the server's own host allowed by default (LOG_REDIRECT_HOSTS unset) while the
// cloud's blob host it does not use stays off the list, and a URL on another host refused.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { LOGS_REPO, JOBS, githubLogText } from "./fake/logs.mjs";

const TOOL = "github_get_job_logs";
let upstream;
let stack;
before(async () => {
  upstream = await startFakeUpstream();
  // The fake's own address stands for the Enterprise host; the default log hosts apply.
  stack = await startStack({ upstream, vars: { GITHUB_API_URL: upstream.url, LOG_REDIRECT_HOSTS: "" } });
});
after(async () => { await stack?.close(); await upstream?.close(); });

const host = () => new URL(upstream.url).host;

test("a job URL on the Enterprise host; its log redirect to that host is fetched by default", async () => {
  const { owner, repo } = LOGS_REPO;
  upstream.route("GET", /^\/repos\/octo-org\/logs\/actions\/jobs\/501\/logs$/, (req, res) => {
    res.writeHead(302, { Location: `${upstream.url}/_services/pipelines/logs/501?sig=GHES` });
    res.end();
  });
  upstream.route("GET", /^\/_services\/pipelines\/logs\/501$/, (req, res, m, { text }) => text(res, 200, githubLogText(501)));
  const r = await stack.callJson(TOOL, { url: `https://${host()}/${owner}/${repo}/actions/runs/900/job/501` });
  const [build] = r.jobs;
  assert.equal(build.logError ?? null, null, JSON.stringify(build).slice(0, 400));
  assert.ok(build.log.steps[0].tail.some((l) => l.text.includes(JOBS[501].decisive)));
  const fetched = upstream.matching("GET", "/_services/pipelines/logs/501");
  assert.equal(fetched.length, 1);
  assert.equal(fetched[0].headers.authorization, undefined, "a log document goes without the token");
  stack.assertNoSecrets();
});

test("the cloud's blob host is not the Enterprise server's: a redirect there is refused", async () => {
  const [j] = (await stack.callJson(TOOL, { ...LOGS_REPO, jobId: 502 })).jobs;
  assert.match(j.logError, /127\.0\.0\.2:\d+, which is not in LOG_REDIRECT_HOSTS; nothing was sent there/);
});

test("a URL on another host than the Enterprise server's is refused before any request", async () => {
  const before = upstream.requests.length;
  const text = await stack.callError(TOOL, { url: "https://ghe.elsewhere.example/octo-org/logs/actions/runs/900" });
  assert.match(text, /this server's GitHub Enterprise host/);
  assert.equal(upstream.requests.length, before);
});
