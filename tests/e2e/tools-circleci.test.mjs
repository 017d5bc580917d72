// circleci_get in workerd against the fake CircleCI, with the KV cache (HTTP_CACHE) in Miniflare:
// hit / miss / fresh / never-cached paths counted at the upstream, fetchedAt and ageMs, principal
// partitioning, queries in the cache key, jq after the cache, errors never cached, paging tokens
// passed through, the Circle-Token header, and every error status.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { startStack, CREDENTIALS } from "./tools-common.mjs";
import { cached, cacheEntries, cacheChanges, eventually } from "./worker.mjs";

const TOOL = "circleci_get";
const SLUG = "gh/octo-org/hello-world";
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let stack;
let n = 0;
before(async () => { stack = await startStack(); });
beforeEach(() => stack.upstream.reset());
after(() => stack?.close());

/** A path no earlier test has cached: a fresh project slug per call site. */
const uniqueProject = () => `/project/gh/octo-org/repo-${++n}`;
const get = (args, principal) => stack.callJson(TOOL, args, principal);
const upstreamCount = (path) => stack.upstream.count("GET", `/api/v2${path.split("?")[0]}`);

// Cache writes run after the response (ctx.waitUntil, decision 0003), so a test waits for them
// in KV before it relies on them, and never merely pauses.
/** `get`, then waits until the entry it writes is in KV. */
const getCached = (args, principal) => cached(stack.worker.mf, () => get(args, principal));

/**
 * Runs `call`, which must cache nothing, then a cacheable call of its own and waits for that
 * later entry: by then an entry of `call` would be in KV too. Asserts the later entry is the
 * only change and returns what `call` returned.
 */
async function cachesNothing(call) {
  const before = await cacheEntries(stack.worker.mf);
  const result = await call();
  await getCached({ path: uniqueProject() });
  assert.equal(cacheChanges(before, await cacheEntries(stack.worker.mf)).length, 1, "only the later call wrote an entry");
  return result;
}

/** Waits until `ms` have passed since the ISO time `at`. */
const passed = (at, ms) => eventually(() => Date.now() - Date.parse(at) >= ms, `${ms} ms since ${at}`);

test("a first call misses, reads upstream with the Circle-Token header, and says when it fetched", async () => {
  const before = Date.now();
  const out = await get({ path: "/me" });
  assert.deepEqual(Object.keys(out), ["data", "cache"]);
  assert.equal(out.data.login, "octocat");
  assert.equal(out.cache.hit, false);
  assert.match(out.cache.fetchedAt, ISO_MS);
  const fetched = Date.parse(out.cache.fetchedAt);
  assert.ok(fetched >= before - 1000 && fetched <= Date.now() + 1000, "fetchedAt is now");
  assert.equal(out.cache.ageMs, 0);
  const [req] = stack.upstream.requests;
  assert.equal(req.path, "/api/v2/me");
  assert.equal(req.headers["circle-token"], CREDENTIALS.CIRCLECI_TOKEN);
  assert.ok(!String(req.headers.authorization ?? "").includes(CREDENTIALS.GITHUB_TOKEN));
});

test("a second call is a hit: no upstream request, the stored fetchedAt, ageMs since then", async () => {
  const path = uniqueProject();
  const first = await getCached({ path });
  await passed(first.cache.fetchedAt, 100);
  const second = await get({ path });
  assert.equal(first.cache.hit, false);
  assert.equal(second.cache.hit, true);
  assert.equal(second.cache.fetchedAt, first.cache.fetchedAt);
  assert.ok(second.cache.ageMs >= 100 && second.cache.ageMs < 60_000, `ageMs ${second.cache.ageMs}`);
  assert.deepEqual(second.data, first.data);
  assert.equal(upstreamCount(path), 1);
});

test("fresh: true bypasses and replaces the entry, and is never sent upstream", async () => {
  const path = uniqueProject();
  const first = await getCached({ path });
  await passed(first.cache.fetchedAt, 1);
  const fresh = await getCached({ path, fresh: true });
  assert.equal(fresh.cache.hit, false);
  assert.ok(Date.parse(fresh.cache.fetchedAt) > Date.parse(first.cache.fetchedAt));
  assert.equal(upstreamCount(path), 2);
  const after = await get({ path });
  assert.equal(after.cache.hit, true);
  assert.equal(after.cache.fetchedAt, fresh.cache.fetchedAt, "the fresh read replaced the entry");
  for (const req of stack.upstream.requests) assert.ok(!req.url.includes("fresh"), `fresh is not forwarded: ${req.url}`);
  assert.equal(upstreamCount(path), 2);
});

test("pipeline, workflow and job paths are never served from cache", async () => {
  const paths = [
    `/project/${SLUG}/pipeline`, "/pipeline/00000000-0000-4000-8000-000000000007",
    "/pipeline/00000000-0000-4000-8000-000000000007/workflow", "/workflow/wf-1", "/workflow/wf-1/job", `/project/${SLUG}/job/7`,
  ];
  for (const path of paths) {
    const a = await cachesNothing(() => get({ path }));
    const b = await get({ path });
    assert.equal(a.cache.hit, false, path);
    assert.equal(b.cache.hit, false, `${path} is never a hit`);
    assert.equal(upstreamCount(path), 2, `${path} goes upstream every time`);
  }
});

test("project and insights paths are cached", async () => {
  for (const path of [`/project/${SLUG}`, `/insights/${SLUG}/workflows`]) {
    await getCached({ path });
    assert.equal((await get({ path })).cache.hit, true, path);
    assert.equal(upstreamCount(path), 1, path);
  }
});

test("queryParams are part of the cache key and sent form-encoded", async () => {
  const path = `/insights/${SLUG}/workflows/build-and-test`;
  await getCached({ path, queryParams: { branch: "main", "reporting-window": "last-7-days" } });
  const other = await get({ path, queryParams: { branch: "release/1 0" } });
  assert.equal(other.cache.hit, false, "another query is another entry");
  const again = await get({ path, queryParams: { branch: "main", "reporting-window": "last-7-days" } });
  assert.equal(again.cache.hit, true);
  assert.equal(upstreamCount(path), 2);
  const urls = stack.upstream.requests.map((r) => r.url);
  assert.ok(urls.includes(`/api/v2${path}?branch=main&reporting-window=last-7-days`), urls.join(" "));
  assert.ok(urls.includes(`/api/v2${path}?branch=release%2F1+0`), urls.join(" "));
});

test("principals never share entries: each misses once, then hits its own", async () => {
  const path = uniqueProject();
  const alice = await getCached({ path }, "alice");
  const bob = await getCached({ path }, "bob");
  assert.equal(bob.cache.hit, false, "bob does not see alice's entry");
  assert.equal(upstreamCount(path), 2);
  const bob2 = await get({ path }, "bob");
  const alice2 = await get({ path }, "alice");
  assert.equal(bob2.cache.hit, true);
  assert.equal(bob2.cache.fetchedAt, bob.cache.fetchedAt);
  assert.equal(alice2.cache.hit, true);
  assert.equal(alice2.cache.fetchedAt, alice.cache.fetchedAt);
  assert.equal(upstreamCount(path), 2);
});

test("jq runs after the cache: one upstream read serves different projections", async () => {
  const path = uniqueProject();
  const names = await getCached({ path, jq: "name" });
  const slug = await get({ path, jq: "{slug: slug, branch: vcs_info.default_branch}" });
  assert.equal(names.data, path.split("/").pop());
  assert.deepEqual(slug.data, { slug: path.slice("/project/".length), branch: "main" });
  assert.equal(slug.cache.hit, true);
  assert.equal(upstreamCount(path), 1);
});

test("errors are not cached", async () => {
  const path = uniqueProject();
  stack.upstream.fault({ path: `/api/v2${path}`, status: 500, body: { message: "Internal server error" }, times: 1 });
  await cachesNothing(() => stack.callError(TOOL, { path }));
  const ok = await get({ path });
  assert.equal(ok.cache.hit, false);
  assert.equal(upstreamCount(path), 2);
});

test("next_page_token passes through: page-token in queryParams reads the next page", async () => {
  const path = `/project/${SLUG}/pipeline`;
  const first = await get({ path });
  assert.equal(first.data.items.length, 20);
  assert.equal(typeof first.data.next_page_token, "string");
  const second = await get({ path, queryParams: { "page-token": first.data.next_page_token } });
  assert.equal(second.data.items[0].number, first.data.items[19].number - 1);
  const third = await get({ path, queryParams: { "page-token": second.data.next_page_token } });
  assert.equal(third.data.items.length, 5);
  assert.equal(third.data.next_page_token, null);
});

test("path injection is refused before any request", async () => {
  const attempts = [
    "https://evil.example/api/v2/me", "//evil.example/me", "/me/../../../../etc/passwd", "/../me", "/me@evil.example",
    "/me\\..\\x", "/me\u0000", "/me\r\nX-Injected: 1", "http:/evil.example", "%2e%2e/%2e%2e/x",
  ];
  for (const path of attempts) await stack.callError(TOOL, { path });
  assert.equal(stack.upstream.requests.length, 0, stack.upstream.requests.map((r) => r.url).join(" "));
});

test("every error status is an error result naming CircleCI, with retry hints for 429", async () => {
  const cases = [
    [400, { message: "Invalid page-token." }], [401, { message: "You must log in first." }], [403, { message: "Permission denied" }],
    [404, { message: "Project not found" }], [409, { message: "Conflict" }], [429, { message: "Rate limit exceeded" }, { "Retry-After": "42" }],
    [500, { message: "Internal server error" }], [502, "<html>Bad Gateway</html>"], [503, ""],
  ];
  for (const [status, body, headers = {}] of cases) {
    const path = uniqueProject();
    stack.upstream.fault({ path: `/api/v2${path}`, status, body, headers, times: 1 });
    const text = await stack.callError(TOOL, { path });
    assert.match(text, /CircleCI/, `${status} names the vendor: ${text}`);
    const said = typeof body === "object" ? body.message : String(status);
    assert.ok(text.includes(said) || text.includes(String(status)), `${status}: says what went wrong: ${text}`);
    if (headers["Retry-After"]) assert.match(text, /42/, "the Retry-After delay is given");
  }
});

test("no credential appears in any result or log line", () => {
  assert.ok(stack.assertNoSecrets().results > 30);
});
