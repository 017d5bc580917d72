// Every parity case, keyed by the golden file it is recorded into (tests/golden/atlassian/<vendor>.json).
//
// A case is { name, tool, args, upstream: { status, statusText, headers, body } }. `body` is the exact text the fake
// upstream sends (null for none), so number literals, key order and whitespace reach the reference parser verbatim.

import { jiraCases } from './cases-jira.mjs';
import { confluenceCases } from './cases-confluence.mjs';
import { bitbucketCases } from './cases-bitbucket.mjs';

/** All cases, keyed by vendor file name. */
export const VENDORS = {
  jira: jiraCases,
  confluence: confluenceCases,
  bitbucket: bitbucketCases,
};
