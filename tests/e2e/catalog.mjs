// The tool catalog the end-to-end tests take their tool lists from: catalog.json, which a host test
// (`tools::tests::the_end_to_end_catalog_is_the_registrys`) holds equal to the registry, so adding
// a tool extends no list here (`UPDATE_CATALOG=1 make test-host` rewrites the file).

import { readFileSync } from "node:fs";

/** Every tool in registration order: name, toolset, readOnly, outputSchema. */
export const CATALOG = JSON.parse(readFileSync(new URL("./catalog.json", import.meta.url), "utf8"));

/** Every tool's name, in the order the worker lists them. */
export const TOOL_NAMES = CATALOG.map((t) => t.name);

/** The tools a connection choosing `toolset` gets without a policy: its own and artifact_read. */
export const toolsetNames = (toolset) =>
  CATALOG.filter((t) => t.toolset === toolset || t.toolset === "artifacts").map((t) => t.name);

/** The tools that advertise an outputSchema when structured output is on. */
export const SCHEMA_TOOL_NAMES = CATALOG.filter((t) => t.outputSchema).map((t) => t.name);
