// The fake upstream's own contract, so tests built on it can trust its paging and fault scripting.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFakeUpstream } from "./fake-upstream.mjs";

let upstream;
before(async () => { upstream = await startFakeUpstream(); });
after(() => upstream?.close());

const get = (p, init) => fetch(`${upstream.url}${p}`, { redirect: "manual", ...init });

/** Follows `nextOf(response, body)` from `first` to the end; returns the pages' items. */
async function walk(first, itemsOf, nextOf) {
  const items = [];
  let url = first;
  for (let pages = 0; url; pages++) {
    assert.ok(pages < 100, "paging ends");
    const r = await fetch(url.startsWith("http") ? url : `${upstream.url}${url}`);
    assert.equal(r.status, 200, url);
    const body = await r.json();
    items.push(...itemsOf(body));
    url = nextOf(r, body);
  }
  return items;
}

test("GitHub runs page with a Link header, and the pages add up to total_count", async () => {
  let total;
  // GitHub's Link URLs name the repository by id (/repositories/{id}/...); only their query is
  // followed here, on the owner/repo path the caller used.
  const runs = await walk("/repos/o/r/actions/runs?per_page=100",
    (b) => { total = b.total_count; return b.workflow_runs; },
    (r) => {
      const next = /<([^>]+)>; rel="next"/.exec(r.headers.get("link") ?? "")?.[1];
      return next && `/repos/o/r/actions/runs${new URL(next).search}`;
    });
  assert.ok(total > 100, "more than one page");
  assert.equal(new Set(runs.map((r) => r.id)).size, total);
});

test("job logs redirect to a blob URL", async () => {
  const r = await get("/repos/o/r/actions/jobs/42/logs");
  assert.equal(r.status, 302);
  const blob = await fetch(new URL(r.headers.get("location"), upstream.url));
  assert.equal(blob.status, 200);
  assert.ok((await blob.text()).length > 0);
});

test("each vendor's paging token leads through distinct pages to the end", async () => {
  const distinct = (items, key) => assert.equal(new Set(items.map(key)).size, items.length);
  const circle = await walk("/api/v2/project/gh/o/r/pipeline", (b) => b.items,
    (_, b) => b.next_page_token ? `/api/v2/project/gh/o/r/pipeline?page-token=${encodeURIComponent(b.next_page_token)}` : undefined);
  assert.ok(circle.length > 20);
  distinct(circle, (p) => p.id);

  const jira = await walk("/rest/api/3/search/jql?maxResults=50", (b) => b.issues,
    (_, b) => b.isLast ? undefined : `/rest/api/3/search/jql?maxResults=50&nextPageToken=${encodeURIComponent(b.nextPageToken)}`);
  assert.ok(jira.length > 50);
  distinct(jira, (i) => i.key);

  const pages = await walk("/wiki/api/v2/pages?limit=25", (b) => b.results, (_, b) => b._links?.next);
  assert.ok(pages.length > 25);
  distinct(pages, (p) => p.id);

  const pipelines = await walk("/2.0/repositories/w/r/pipelines/?pagelen=10", (b) => b.values, (_, b) => b.next);
  assert.ok(pipelines.length > 10);
  distinct(pipelines, (p) => p.uuid);
});

test("faults answer instead of the route, `times` bounds them, requests are recorded", async () => {
  upstream.reset();
  const fault = upstream.fault({ path: /\/actions\/runs$/, status: 503, body: { message: "down" }, times: 1 });
  const first = await get("/repos/o/r/actions/runs", { headers: { Authorization: "Bearer x" } });
  assert.equal(first.status, 503);
  assert.deepEqual(await first.json(), { message: "down" });
  assert.equal(fault.times, 0);
  assert.equal((await get("/repos/o/r/actions/runs")).status, 200);
  assert.equal(upstream.requests.length, 2);
  assert.equal(upstream.requests[0].headers.authorization, "Bearer x");

  upstream.fault({ path: "/big", bodyBytes: 1000 });
  assert.equal((await (await get("/big")).arrayBuffer()).byteLength, 1000);
  upstream.fault({ path: "/gone", hangUp: true });
  await assert.rejects(get("/gone"));
  upstream.reset();
});
