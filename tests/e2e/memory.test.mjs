// The isolate's memory budget in workerd: a burst of large runs pages beside small calls. The
// large pages' headers come at once and their bodies a while later, so the large calls hold
// their reservations while the small ones are made. Small calls answer before any large one; with
// the default budget every large call gets its page, and with a budget that holds one large page
// the others wait, then get the retryable busy error. Every call answers.

import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { startStack } from "./tools-common.mjs";
import { startFakeUpstream } from "./fake-upstream.mjs";
import { bigRunsPage } from "./fake/github.mjs";

const MiB = 1024 * 1024;
/** How long a large page's body takes to follow its headers. */
const BODY_DELAY_MS = 1500;
const LARGE = 6;
const SMALL = 6;

let upstream;
let page;
before(async () => {
  upstream = await startFakeUpstream();
  page = bigRunsPage(upstream.url, 2 * MiB);
});
beforeEach(() => {
  upstream.reset();
  upstream.route("GET", /^\/repos\/octo-org\/big\/actions\/runs$/, (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": page.length });
    res.flushHeaders();
    setTimeout(() => res.end(page), BODY_DELAY_MS);
  });
});
after(() => upstream?.close());

/** Starts `LARGE` large calls, then, once their headers are in, `SMALL` small ones. */
async function burst(stack) {
  const timed = async (kind, name, args) => {
    const t0 = performance.now();
    const r = await stack.call(name, args);
    return { kind, ...r, ms: performance.now() - t0, at: performance.now() };
  };
  const large = Array.from({ length: LARGE }, () =>
    timed("large", "github_list_workflow_runs", { owner: "octo-org", repo: "big", perPage: 100 }));
  // Headers are written at once; give every large call time to reach its reservation.
  await new Promise((r) => setTimeout(r, 300));
  const small = Array.from({ length: SMALL }, () => timed("small", "circleci_get", { path: "/me" }));
  return Promise.all([...large, ...small]);
}

test("small calls answer while a burst of large pages is in flight, and every large page arrives", async () => {
  const stack = await startStack({ upstream });
  try {
    const calls = await burst(stack);
    const small = calls.filter((c) => c.kind === "small");
    const large = calls.filter((c) => c.kind === "large");
    for (const c of calls) assert.equal(c.isError, false, `${c.kind}: ${c.text.slice(0, 300)}`);
    const firstLarge = Math.min(...large.map((c) => c.at));
    for (const c of small) {
      assert.ok(c.at < firstLarge, "a small call waited for the large ones");
      assert.ok(c.ms < BODY_DELAY_MS, `a small call took ${c.ms.toFixed(0)} ms`);
    }
    assert.equal(upstream.requests.filter((r) => r.path.endsWith("/big/actions/runs")).length, LARGE);
  } finally {
    await stack.close();
  }
});

test("with a budget that holds one large page, the others get the busy error and none is lost", async () => {
  // One ~2 MiB page costs ~8 MiB of the budget: a second does not fit beside it.
  const stack = await startStack({ upstream, vars: { MEMORY_BUDGET_BYTES: String(10 * MiB) } });
  try {
    const calls = await burst(stack);
    assert.equal(calls.length, LARGE + SMALL);
    const small = calls.filter((c) => c.kind === "small");
    const large = calls.filter((c) => c.kind === "large");
    for (const c of small) assert.equal(c.isError, false, c.text);
    const busy = large.filter((c) => c.isError);
    const served = large.filter((c) => !c.isError);
    // The refusals come early (after a short wait); no small call waits for a page to be served.
    const firstServed = Math.min(...served.map((c) => c.at));
    for (const c of small) assert.ok(c.at < firstServed, "a small call waited for the large ones");
    assert.ok(served.length >= 1, "the first large page is served");
    assert.ok(busy.length >= 1, "some large pages are refused");
    for (const c of busy) {
      assert.equal(c.result._meta?.code, "server_busy", JSON.stringify(c.result._meta));
      assert.match(c.text, /busy with other large results/);
      assert.match(c.text, /Retry in a few seconds, or narrow the request/);
    }
    for (const c of served) assert.match(c.text, /workflow_runs|total_count|Build/);
    assert.ok(stack.logs.some((l) => l.includes('"outcome":"busy"')), "the refusal is logged");
    // Once the burst is over, the budget is free again: a large page is served.
    const again = await stack.call("github_list_workflow_runs", { owner: "octo-org", repo: "big", perPage: 100 });
    assert.equal(again.isError, false, again.text.slice(0, 300));
  } finally {
    await stack.close();
  }
});
