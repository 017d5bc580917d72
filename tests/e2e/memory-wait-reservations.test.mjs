// A waiting call holds one poll's memory, however many polls it makes. Each poll's body reserved
// on the call's memory and what it covered stayed held until the call ended, so a wait reserved
// poll-count times one body: with a 10 MiB run body, another principal's 3.9 MB call was refused
// 503 from the third poll (t=17 s) and its small calls from the fourth (t=36 s). Now each poll gives
// back what the poll before it reserved once its value is replaced (src/tools/ciloop.rs `wait`).
//
// How: two static tokens. The fake GitHub answers run 4242 as in_progress with a 10 MiB
// head_commit message. The "waiter" calls github_get_workflow_run with waitSeconds 40; meanwhile
// the "other" principal sends, every ~2 s, a 3.9 MB jira_get and a small jira_get. Every one of the
// other's calls should be answered 200.
//
// Runs alone: node --test --test-timeout=180000 tests/e2e/memory-wait-reservations.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { startLoadStack, toolCall, postAs, TOKEN, mib } from "../../bench/load/common.mjs";

const OTHER = "other-token-0123456789abcdef01234";
const BODY_BYTES = 10 * 1048576;
const WAIT_S = 40;

test("a waiting call's reservations do not grow with its polls and lock other callers out", async (t) => {
  const stack = await startLoadStack({ MCP_AUTH_TOKENS: JSON.stringify({ waiter: TOKEN, other: OTHER }) });
  let polls = 0;
  const message = "m".repeat(BODY_BYTES);
  stack.upstream.route("GET", /^\/repos\/octo-org\/hello-world\/actions\/runs\/4242$/, (_req, res, _m, { json }) => {
    polls++;
    json(res, 200, { id: 4242, name: "CI", run_attempt: 1, workflow_id: 1001, status: "in_progress", conclusion: null,
      event: "push", head_branch: "main", head_sha: "0123abc", head_commit: { id: "0123abc", message } });
  });
  try {
    const t0 = Date.now();
    const waiting = postAs(stack.mcpUrl, toolCall("github_get_workflow_run",
      { owner: "octo-org", repo: "hello-world", runId: 4242, waitSeconds: WAIT_S }), TOKEN);
    const big = toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId", pad: "y".repeat(3_900_000) });
    const small = toolCall("jira_get", { path: "/rest/api/3/myself", jq: ".accountId" });
    const seen = [];
    const refused = [];
    while (Date.now() - t0 < (WAIT_S - 2) * 1000) {
      const a = await postAs(stack.mcpUrl, big, OTHER);
      const b = await postAs(stack.mcpUrl, small, OTHER);
      const at = `${Math.round((Date.now() - t0) / 1000)}s/poll${polls}`;
      seen.push(`${at}:${a.status},${b.status}`);
      if (a.status !== 200 || b.status !== 200) refused.push(at);
      await new Promise((r) => setTimeout(r, 2000));
    }
    const waited = await waiting;
    t.diagnostic(`waiter: HTTP ${waited.status} after ${polls} polls; other (large, small): ${seen.join(" ")}; ` +
      `wasm ${mib(await stack.wasmBytes())} MiB`);
    assert.equal(waited.status, 200);
    assert.deepEqual(refused, [], "the other principal's calls were refused while one call waited");
  } finally {
    await stack.close();
  }
});
