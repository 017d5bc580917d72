// jq's time functions in workerd, which run on jiff: with no time zone database in the bundle
// (decision 0060) the UTC ones keep working (the local-time ones, which would read the host's
// zone, are not offered at all).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startStack } from "./tools-common.mjs";

const stack = await startStack();
after(() => stack.close());

const project = async (jq) =>
  (await stack.callJson("github_list_workflow_runs", { owner: "octo-org", repo: "hello-world", perPage: 1, jq })).data;

test("UTC time functions work without a time zone database", async () => {
  const created = ".workflow_runs[0].created_at";
  const iso = await project(`${created}`);
  assert.match(iso, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const out = await project(`${created} | fromdate | [todate, (gmtime | mktime | todate), strftime("%Y-%m-%dT%H:%M:%SZ"), (gmtime | strftime("%A %B %d %Y %Z"))]`);
  const [again, roundTrip, formatted, words] = out;
  assert.equal(again, iso);
  assert.equal(roundTrip, iso);
  assert.equal(formatted, iso);
  assert.match(words, /^[A-Z][a-z]+day [A-Z][a-z]+ \d\d \d{4} UTC$/);
  const local = await project(`${created} | fromdate | localtime`);
  assert.match(local._jqError ?? "", /the jq builtin `localtime` is not offered: it reads the host.s time zone/, "localtime is not offered");
});
