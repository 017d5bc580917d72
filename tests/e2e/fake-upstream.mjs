// A fake of the upstream APIs (GitHub, CircleCI, Jira, Confluence, Bitbucket), of GitHub's
// OAuth sign-in (an identity provider that approves at once) and of Atlassian's OAuth 2.0 (3LO)
// with its API gateway (tests/e2e/fake/atlassian-3lo.mjs) on 127.0.0.1, for
// end-to-end tests and benchmarks. Routes return deterministic data shaped like the real APIs,
// including each vendor's paging style (tests/e2e/fake/*.mjs); tests can script faults and inspect
// what was requested.
//
//   const upstream = await startFakeUpstream();
//   upstream.url                      // http://127.0.0.1:PORT (CircleCI lives under /api/v2)
//   upstream.fault({ path: /actions\/runs$/, status: 503, times: 1 });
//   upstream.requests                 // [{ method, url, path, query, headers, body }]
//   upstream.count("GET", /\/me$/)    // how many requests matched
//   upstream.route("GET", /^\/custom$/, (req, res, m, { json }) => json(res, 200, {...}));
//   await upstream.close();

import http from "node:http";
import { json, text } from "./fake/util.mjs";
import { githubRoutes } from "./fake/github.mjs";
import { circleRoutes } from "./fake/circleci.mjs";
import { atlassianRoutes } from "./fake/atlassian.mjs";
import { logRoutes, startLogHosts } from "./fake/logs.mjs";
import { idpRoutes, newIdp } from "./fake/idp.mjs";
import { atlassian3loRoutes, gatewayPath, newAtlassian3lo } from "./fake/atlassian-3lo.mjs";

export { githubRateLimitHeaders, GITHUB_RATE_LIMIT_BODY, GITHUB_RUNS, WORKFLOWS } from "./fake/github.mjs";

function matches(pattern, path) {
  return pattern instanceof RegExp ? pattern.test(path) : path.startsWith(pattern);
}

/**
 * Writes a response by hand on the socket, for what node's writer cannot express: an empty reason
 * phrase (node substitutes the standard one).
 */
function rawResponse(socket, status, statusText, headers, body) {
  const lines = [`HTTP/1.1 ${status} ${statusText}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  socket.end(Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n"), body]));
}

/** Streams `total` filler bytes (Infinity: until the client goes away) with no Content-Length. */
function streamBody(res, fault) {
  const chunk = Buffer.alloc(fault.chunkBytes ?? 64 * 1024, 0x61);
  fault.bytesSent = 0;
  fault.clientClosed = false;
  res.on("close", () => { fault.clientClosed = !res.writableFinished; });
  const pump = () => {
    while (fault.bytesSent < fault.streamBytes) {
      if (res.destroyed) return;
      const n = Math.min(chunk.length, fault.streamBytes - fault.bytesSent);
      fault.bytesSent += n;
      if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
}

/**
 * Answers with a scripted fault. Fields (all optional):
 * - `status` (default 500), `statusText` ("" sends an empty reason phrase), `headers`, `body`
 *   (a string is sent as is, null sends none, anything else as JSON; default
 *   `{"message":"injected fault"}`);
 * - `bodyBytes`: that many filler bytes instead of `body`, with a Content-Length;
 * - `streamBytes`: that many filler bytes (Infinity: endless) chunked, without Content-Length;
 *   afterwards `bytesSent` and `clientClosed` (the client stopped reading first) are set;
 * - `resetAfterBytes`: send the headers (announcing the whole body, so within any size bound the
 *   body is) and that many body bytes, then reset the connection;
 * - `exactHeaders`: send `headers` as they are (no default Content-Type), for replaying recorded
 *   responses;
 * - `echoHeaders`: a JSON body that repeats every request header (in `message`, `errorMessages`
 *   and `headers`, as an error page that reflects the request does), plus `padding` filler
 *   characters, and the request's Authorization (or Circle-Token) in an `X-Echo` header;
 * - `delayMs`: wait before answering; `hangUp`: destroy the socket without answering.
 */
async function answerFault(req, res, fault) {
  if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
  if (fault.hangUp) return req.socket.destroy();
  const status = fault.status ?? 500;
  const headers = fault.exactHeaders ? { ...fault.headers } : { "Content-Type": "application/json", ...fault.headers };
  if (fault.streamBytes !== undefined) {
    res.writeHead(status, fault.statusText ?? http.STATUS_CODES[status], headers);
    return streamBody(res, fault);
  }
  if (fault.echoHeaders) {
    const sent = JSON.stringify(req.headers);
    headers["X-Echo"] = req.headers.authorization ?? req.headers["circle-token"] ?? "";
    fault = { ...fault, body: { message: `Bad request: ${sent}`, errorMessages: [`headers: ${sent}`], headers: req.headers, padding: "x".repeat(fault.padding ?? 0) } };
  }
  const payload = fault.bodyBytes !== undefined ? Buffer.alloc(fault.bodyBytes, 0x61) : fault.body === null ? Buffer.alloc(0)
    : Buffer.from(typeof fault.body === "string" ? fault.body : JSON.stringify(fault.body ?? { message: "injected fault" }));
  if (fault.resetAfterBytes !== undefined) {
    res.writeHead(status, { ...headers, "Content-Length": payload.length });
    res.write(payload.subarray(0, fault.resetAfterBytes));
    return setTimeout(() => req.socket.resetAndDestroy?.() ?? req.socket.destroy(), 20);
  }
  // A 204 carries no Content-Length; a recorded one (exactHeaders) is kept as recorded.
  const hasLength = Object.keys(headers).some((k) => k.toLowerCase() === "content-length");
  if (status !== 204 && !hasLength) headers["Content-Length"] = payload.length;
  if (fault.statusText === "") {
    return rawResponse(req.socket, status, "", { ...headers, Connection: "close" }, payload);
  }
  res.writeHead(status, fault.statusText ?? http.STATUS_CODES[status], headers);
  res.end(payload);
}

/** Where GitHub Enterprise Server's REST API lives on its host. */
const ENTERPRISE_API = "/api/v3/";

/**
 * Starts the fake upstream on 127.0.0.1 (a free port unless `port` is given).
 * `fault({ path, method?, times?, ...answer })` matches requests whose path matches `path` (string
 * prefix or RegExp) and answers as `answerFault` describes instead of the route; `times` (default
 * unlimited) bounds how often it fires. Every request is recorded in `requests`, faulted or not.
 * With `enterprise`, it is a GitHub Enterprise Server: the GitHub API (the identity provider's
 * `/user` too) only under `/api/v3`, the sign-in pages at the root.
 */
export async function startFakeUpstream({ port = 0, enterprise = false } = {}) {
  const ctx = { url: "", idp: newIdp(), atlassian: newAtlassian3lo() };
  ctx.logHosts = await startLogHosts(ctx);
  const extra = [];
  const builtIn = [...logRoutes(ctx), ...idpRoutes(ctx), ...atlassian3loRoutes(ctx), ...githubRoutes(ctx), ...circleRoutes(ctx), ...atlassianRoutes(ctx)];
  let faults = [];
  const requests = [];

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks)));
  });
  const sockets = new Set();
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });

  async function handle(req, res, body) {
    const url = new URL(req.url, ctx.url);
    const request = { method: req.method, url: req.url, path: url.pathname, query: url.searchParams, headers: req.headers, body };
    requests.push({ ...request, body: body.toString("utf8") });
    const fault = faults.find((f) => f.times !== 0 && (!f.method || f.method === req.method) && matches(f.path, url.pathname));
    if (fault) {
      if (fault.times > 0) fault.times--;
      fault.hits = (fault.hits ?? 0) + 1;
      return answerFault(req, res, fault);
    }
    // Atlassian's gateway serves the site's routes under /ex/{product}/{cloudid}, for its bearer.
    const gateway = gatewayPath(ctx.atlassian, req, url.pathname);
    if (gateway?.refuse) return json(res, gateway.refuse, { code: gateway.refuse, message: "Unauthorized" });
    let pathname = gateway?.path ?? url.pathname;
    if (gateway) request.path = pathname;
    // GitHub Enterprise Server serves its REST API under /api/v3 and its web pages (sign-in,
    // runs) at the root: a GitHub API path anywhere else is not found there.
    if (enterprise && !gateway) {
      if (pathname.startsWith(ENTERPRISE_API)) pathname = request.path = pathname.slice(ENTERPRISE_API.length - 1);
      else if (/^\/(repos|user|orgs)(\/|$)/.test(pathname)) return json(res, 404, { message: "Not Found" });
    }
    for (const [method, pattern, fn] of [...extra, ...builtIn]) {
      const m = method === req.method || (method === "GET" && req.method === "HEAD") ? pattern.exec(pathname) : null;
      if (m) return fn(request, res, m);
    }
    json(res, 404, { message: "Not Found" });
  }

  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  ctx.url = `http://127.0.0.1:${server.address().port}`;

  return {
    get url() { return ctx.url; },
    /** The GitHub-shaped identity provider (tests/e2e/fake/idp.mjs): who signs in, what it issued. */
    get idp() { return ctx.idp; },
    /** Atlassian's 3LO server and gateway (tests/e2e/fake/atlassian-3lo.mjs): what it issued. */
    get atlassian() { return ctx.atlassian; },
    /** The job-log hosts: `blobs` (127.0.0.2, where logs redirect) and `elsewhere` (127.0.0.3). */
    logHosts: ctx.logHosts,
    requests,
    /** Requests whose method is `method` (or any, when null) and whose path matches `pattern`. */
    matching(method, pattern) {
      return requests.filter((r) => (!method || r.method === method) && matches(pattern, r.path));
    },
    /** How many requests `matching(method, pattern)` finds. */
    count(method, pattern) { return this.matching(method, pattern).length; },
    /** Adds a fault; returns it so a test can read `times`, `hits`, `bytesSent` afterwards. */
    fault(spec) { const f = { times: -1, ...spec }; faults.push(f); return f; },
    /** Adds a route checked before the built-in ones; `fn(req, res, match, { json, text })`. */
    route(method, pattern, fn) { extra.unshift([method, pattern, (req, res, m) => fn(req, res, m, { json, text })]); },
    /** Forgets faults, extra routes and recorded requests. */
    reset() { faults = []; extra.length = 0; requests.length = 0; },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      await ctx.logHosts.close();
    },
  };
}

// `node tests/e2e/fake-upstream.mjs [port]` serves it standalone for `make dev` experiments.
if (import.meta.url === `file://${process.argv[1]}`) {
  const upstream = await startFakeUpstream({ port: Number(process.argv[2] ?? 0) });
  console.log(`fake upstream listening on ${upstream.url} (CircleCI under ${upstream.url}/api/v2)`);
}
