// Runs the code-mode example against the local server: the built worker in workerd (Miniflare)
// pointed at the test fake upstream, with structured output on, a low structured-size bound (so a
// page of 100 projected runs is oversized and comes back through artifact_read) and an enterprise
// policy under which filing a Jira issue needs approval.
//
//   node examples/code-mode/local.mjs [--repo history-400] [--pages 3] [--per-page 100] [--no-file-missing]
//
// Prints the answer as JSON. Needs `make build` first (`make example` does both).

import { parseArgs } from "node:util";
import { startStack } from "../../tests/e2e/tools-common.mjs";
import { connect } from "./connect.mjs";
import { failingRunsOnMain } from "./question.mjs";

/** The principals: alice runs the program; carol may approve what the policy holds back. */
export const EXAMPLE_PRINCIPALS = {
  alice: "example-alice-token-0123456789abcdef",
  carol: "example-carol-token-0123456789abcdef",
};

/** Why filing an issue is held back, as the refusal states it. */
export const FILING_REASON = "Filing a Jira issue needs a triager's approval.";

/** The policy of the example: reads are allowed, creating a Jira issue needs carol's approval. */
export const EXAMPLE_POLICY = {
  identities: [],
  groups: { triagers: ["carol"] },
  rules: [
    {
      id: "filing-needs-approval",
      match: { tools: ["jira_post"], paths: ["/rest/api/3/issue"] },
      effect: "approval_required",
      approvers: { groups: ["triagers"] },
      reason: FILING_REASON,
    },
    { id: "read-ci", match: { tools: ["github_*"], methods: ["GET"] }, effect: "allow" },
    { id: "read-jira", match: { tools: ["jira_get"], methods: ["GET"], paths: ["/rest/api/3/search/**", "/rest/api/3/issue/**"] }, effect: "allow" },
  ],
};

/** The smallest structured bound the server accepts: a page of 100 projected runs exceeds it. */
export const EXAMPLE_MAX_BYTES = 16384;

/**
 * Starts the fake upstream and the worker for the example. `policy: null` runs without a policy
 * (the measurement does, so refusals do not depend on approval state); `vars` override settings.
 * Returns startStack's stack plus `mcpUrl` and `token` (alice's).
 */
export async function startExampleServer({ policy = EXAMPLE_POLICY, vars = {}, upstream } = {}) {
  const stack = await startStack({
    principals: EXAMPLE_PRINCIPALS,
    kvNamespaces: ["POLICY"],
    upstream,
    vars: {
      MCP_STRUCTURED_OUTPUT: "true",
      MCP_STRUCTURED_MAX_BYTES: String(EXAMPLE_MAX_BYTES),
      ...(policy ? { MCP_POLICY: JSON.stringify(policy) } : {}),
      ...vars,
    },
  });
  return { ...stack, mcpUrl: stack.worker.mcpUrl, token: EXAMPLE_PRINCIPALS.alice };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      owner: { type: "string", default: "octo-org" },
      repo: { type: "string", default: "history-400" },
      pages: { type: "string", default: "3" },
      "per-page": { type: "string", default: "100" },
      "no-file-missing": { type: "boolean", default: false },
    },
  });
  const server = await startExampleServer();
  try {
    const client = await connect(server.mcpUrl, server.token);
    const answer = await failingRunsOnMain(client, {
      owner: values.owner, repo: values.repo, pages: Number(values.pages), perPage: Number(values["per-page"]),
      fileMissing: !values["no-file-missing"],
    });
    console.log(JSON.stringify(answer, null, 2));
    await client.close();
  } finally {
    await server.close();
  }
}
