// Helpers shared by the fake upstream's vendor routes: deterministic timestamps, response writers
// and query parsing that mirrors how the real APIs read their paging parameters.

const EPOCH = Date.UTC(2026, 0, 1);

/** ISO timestamp `minutes` after 2026-01-01T00:00:00Z, without milliseconds (GitHub's style). */
export function at(minutes) {
  return new Date(EPOCH + minutes * 60_000).toISOString().replace(".000Z", "Z");
}

/** A compact JSON response with an exact Content-Length. */
export function json(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A text response (a diff, a log, a raw file). */
export function text(res, status, body, headers = {}) {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** 204 No Content, as the Atlassian APIs answer successful updates and deletes. */
export function noContent(res) {
  res.writeHead(204);
  res.end();
}

/** A positive integer query parameter, capped at `max`; `fallback` when absent or not positive. */
export function intParam(query, name, fallback, max) {
  const n = Number.parseInt(query.get(name) ?? "", 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, max) : fallback;
}

/** The request body parsed as JSON, or undefined when it is empty or not JSON. */
export function bodyJson(req) {
  try {
    return req.body.length ? JSON.parse(req.body.toString("utf8")) : undefined;
  } catch {
    return undefined;
  }
}

/** A deterministic 40-hex-digit commit id. */
export function sha(n) {
  return (BigInt(n) * 0x9e3779b97f4a7c15n).toString(16).padStart(40, "0").slice(-40);
}
