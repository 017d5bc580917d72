// Shared set-up for the enterprise-policy end-to-end specs (tests/e2e/policy-*.test.mjs): a policy
// document exercising every rule feature (docs/policy.md), the principals and named-identity
// secrets it refers to, the worker started under it (MCP_POLICY or a KV-held copy) against the
// fake upstream, and assertions on the refusal and identity `_meta` shapes.

import assert from "node:assert/strict";
import { startStack, CREDENTIALS, basic } from "./tools-common.mjs";

/** The KV namespace holding approvals and a KV-held policy (docs/policy.md). */
export const POLICY_BINDING = "POLICY";
/** The `_meta` key naming the upstream identity that acted. */
export const UPSTREAM_META = "mcp-devtools/upstream";

/**
 * The MCP principals: alice and bob are in `platform`, carol in `release-managers`, mallory in no
 * group. Alice is also named as an approver directly, so self-approval can be tried.
 */
export const POLICY_PRINCIPALS = {
  alice: "e2e-policy-alice-0123456789abcdef",
  bob: "e2e-policy-bob-0123456789abcdef01",
  carol: "e2e-policy-carol-0123456789abcdef",
  mallory: "e2e-policy-mallory-0123456789abcd",
};

/** The secrets the named identities read; distinct from the default CREDENTIALS. */
export const IDENTITY_SECRETS = {
  GITHUB_BOT_TOKEN: "ghp_e2ePolicyBotToken0123456789abcdefABCD",
  CIRCLECI_TEAM_TOKEN: "CCIPAT_e2ePolicyTeamToken_0123456789abcd",
  JIRA_PLATFORM_EMAIL: "platform-bot@devtools.example",
  JIRA_PLATFORM_TOKEN: "ATATT3xE2ePolicyJiraPlatformToken012345",
  BB_RELEASE_USER: "e2e-bb-release-bot",
  BB_RELEASE_APP_PASSWORD: "ATBBe2ePolicyReleaseAppPassword0123456",
};

/** The Authorization (or Circle-Token) value each identity must send, by identity name. */
export const IDENTITY_AUTH = {
  "gh-bot": `Bearer ${IDENTITY_SECRETS.GITHUB_BOT_TOKEN}`,
  "circle-team": IDENTITY_SECRETS.CIRCLECI_TEAM_TOKEN,
  "jira-platform": basic(IDENTITY_SECRETS.JIRA_PLATFORM_EMAIL, IDENTITY_SECRETS.JIRA_PLATFORM_TOKEN),
  "bb-release": basic(IDENTITY_SECRETS.BB_RELEASE_USER, IDENTITY_SECRETS.BB_RELEASE_APP_PASSWORD),
};

/** The default credentials' header values, per vendor (identity "default"). */
export const DEFAULT_AUTH = {
  github: `Bearer ${CREDENTIALS.GITHUB_TOKEN}`,
  circleci: CREDENTIALS.CIRCLECI_TOKEN,
  // Jira, Confluence and Bitbucket all take the Atlassian pair when it is set (docs/parity.md).
  atlassian: basic(CREDENTIALS.ATLASSIAN_USER_EMAIL, CREDENTIALS.ATLASSIAN_API_TOKEN),
};

/** The Bitbucket merge path the approval rule guards, for pull request `n` of acme/web. */
export const mergePath = (n, prefix = "/2.0") => `${prefix}/repositories/acme/web/pullrequests/${n}/merge`;

/** The reason of the first rule, checked verbatim in refusals. */
export const ADMIN_REASON = "Administrative endpoints are never reachable through this server.";
/** The reason of the approval rule. */
export const MERGE_REASON = "Merging a pull request needs a release manager's approval.";

/** The test policy; rule order matters (first match decides). */
export const POLICY = {
  identities: [
    { name: "gh-bot", vendor: "github", secret: "GITHUB_BOT_TOKEN" },
    { name: "circle-team", vendor: "circleci", secret: "CIRCLECI_TEAM_TOKEN" },
    { name: "jira-platform", vendor: "jira", userSecret: "JIRA_PLATFORM_EMAIL", tokenSecret: "JIRA_PLATFORM_TOKEN" },
    { name: "bb-release", vendor: "bitbucket", userSecret: "BB_RELEASE_USER", tokenSecret: "BB_RELEASE_APP_PASSWORD" },
  ],
  groups: { platform: ["alice", "bob"], "release-managers": ["carol"] },
  rules: [
    { id: "no-admin", match: { paths: ["/**/admin/**"] }, effect: "deny", reason: ADMIN_REASON },
    // artifact_read is never governed by rules (docs/policy.md): these two must change nothing.
    { id: "alice-no-artifacts", match: { principals: ["alice"], tools: ["artifact_read"] }, effect: "deny" },
    { id: "everyone-reads-artifacts", match: { tools: ["artifact_*"] }, effect: "allow" },
    {
      id: "merges-need-approval",
      match: { groups: ["platform"], tools: ["bb_post"], paths: ["/2.0/repositories/acme/*/pullrequests/*/merge"] },
      effect: "approval_required",
      approvers: { groups: ["release-managers"], principals: ["alice"] },
      identities: { bitbucket: "bb-release" },
      reason: MERGE_REASON,
    },
    {
      id: "platform-jira",
      match: { groups: ["platform"], tools: ["jira_*"], methods: ["GET", "POST"], paths: ["/rest/api/3/issue/**", "/rest/api/3/search/**"] },
      effect: "allow",
      identities: { jira: "jira-platform" },
    },
    {
      id: "alice-ci-bot",
      match: { principals: ["alice"], tools: ["github_*", "circleci_get"] },
      effect: "allow",
      identities: { github: "gh-bot", circleci: "circle-team" },
    },
    { id: "everyone-reads-ci", match: { tools: ["github_*", "circleci_get"], methods: ["GET"] }, effect: "allow" },
    { id: "platform-reads-bitbucket", match: { groups: ["platform"], tools: ["bb_get"] }, effect: "allow" },
  ],
};

/** Every string that must never reach a result or a log line, beyond what startStack checks. */
export const POLICY_SECRET_STRINGS = [
  ...Object.values(IDENTITY_SECRETS).filter((s) => !s.includes("@")),
  IDENTITY_AUTH["jira-platform"].slice("Basic ".length),
  IDENTITY_AUTH["bb-release"].slice("Basic ".length),
];

/**
 * Starts the fake upstream and the worker under `policy` (default POLICY) with the policy
 * principals, identity secrets and the POLICY KV namespace. `policy: null` starts without
 * MCP_POLICY (e.g. for a KV-held policy set through `vars`); a string is passed as is.
 */
export async function startPolicyStack({ policy = POLICY, vars = {}, ...options } = {}) {
  const policyVar = policy === null ? {} : { MCP_POLICY: typeof policy === "string" ? policy : JSON.stringify(policy) };
  const stack = await startStack({
    principals: POLICY_PRINCIPALS,
    secrets: IDENTITY_SECRETS,
    kvNamespaces: [POLICY_BINDING],
    vars: { ...policyVar, ...vars },
    ...options,
  });
  const assertNoSecrets = stack.assertNoSecrets;
  return {
    ...stack,
    /** The POLICY KV namespace, through Miniflare (a promise). */
    kv: () => stack.worker.mf.getKVNamespace(POLICY_BINDING),
    /** startStack's check plus the identities' Basic values and tokens. */
    assertNoSecrets() {
      const counts = assertNoSecrets();
      const haystack = [...stack.results.map((r) => JSON.stringify(r)), ...stack.logs].join("\n");
      for (const secret of POLICY_SECRET_STRINGS) {
        assert.ok(!haystack.includes(secret), `an identity credential (${secret.slice(0, 6)}...) leaked into a result or log line`);
      }
      return counts;
    },
    /** The JSON log lines whose `event` is `event`, parsed. */
    events(event) {
      return stack.logs.flatMap((line) => {
        try {
          const parsed = JSON.parse(line);
          return parsed?.event === event ? [parsed] : [];
        } catch {
          return [];
        }
      });
    },
  };
}

/** The decision keys every refusal carries (docs/policy.md, "Refusals"). */
const DECISION_KEYS = ["effect", "rule", "reason", "principal", "tool", "product", "method", "path"];

/**
 * Asserts that `result` is a policy refusal with `code` and returns its decision: an error result
 * with one text block and no structuredContent, `_meta.code`, and a decision holding at least the
 * documented keys (with `expected` values, when given).
 */
export function assertRefusal(result, code, expected = {}) {
  assert.equal(result.isError, true, `a refusal is an error result: ${JSON.stringify(result).slice(0, 400)}`);
  assert.equal(result.structuredContent, undefined, "a refusal carries no structuredContent");
  const texts = (result.content ?? []).filter((b) => b.type === "text");
  assert.equal(texts.length, 1, "one text block explains the refusal");
  assert.ok(texts[0].text.length > 20, `the text explains the refusal: ${texts[0].text}`);
  assert.equal(result._meta?.code, code, `_meta.code: ${JSON.stringify(result._meta)}`);
  const decision = result._meta.decision;
  assert.equal(typeof decision, "object");
  for (const key of DECISION_KEYS) assert.ok(key in decision, `decision.${key} is present: ${JSON.stringify(decision)}`);
  assert.equal(typeof decision.reason, "string");
  assert.ok(decision.reason.length > 0);
  for (const [key, value] of Object.entries(expected)) {
    assert.deepEqual(decision[key], value, `decision.${key}: ${JSON.stringify(decision)}`);
  }
  assert.equal(result._meta[UPSTREAM_META], undefined, "no upstream acted for a refused call");
  return decision;
}

/** Asserts that `result` ran upstream as `vendor`'s `identity` and returns the result. */
export function assertActedAs(result, vendor, identity) {
  assert.deepEqual(result._meta?.[UPSTREAM_META], { vendor, identity }, `_meta: ${JSON.stringify(result._meta)}`);
  assert.equal(result._meta.code, undefined);
  assert.equal(result._meta.decision, undefined);
  return result;
}

/** Asserts an approval object {id, status, expiresAt} with `status`, expiring about `ttlSeconds` from now. */
export function assertApproval(approval, status, ttlSeconds = 3600) {
  assert.equal(typeof approval, "object", "decision.approval is an object");
  assert.match(approval.id, /^apr_[A-Za-z0-9_-]{8,}$/, `approval id: ${approval.id}`);
  assert.equal(approval.status, status);
  assert.match(approval.expiresAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/, "expiresAt is an RFC 3339 UTC time");
  const inMs = Date.parse(approval.expiresAt) - Date.now();
  assert.ok(Math.abs(inMs - ttlSeconds * 1000) < 120_000, `expiresAt is about ${ttlSeconds}s away (got ${Math.round(inMs / 1000)}s)`);
  return approval;
}
