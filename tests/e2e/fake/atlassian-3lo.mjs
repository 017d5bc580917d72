// Atlassian's OAuth 2.0 (3LO) for the fake upstream: the authorization server under
// /atlassian-auth (authorize approves at once and redirects back; the token endpoint takes JSON
// bodies, exchanges codes and rotates refresh tokens) and the API gateway under /atlassian-api
// (accessible-resources lists the fake's own origin as the site `e2e-cloud`; /ex/{jira|confluence}/
// e2e-cloud/... checks the bearer and is then served by the ordinary Jira and Confluence routes,
// see gatewayPath). `upstream.atlassian` holds what it issued:
//
//   upstream.atlassian.tokens          // access token -> { expiresAt } of every token issued
//   upstream.atlassian.expiresIn = 60  // lifetime of the tokens issued next (default 3600 s)

import { randomBytes } from "node:crypto";
import { json } from "./util.mjs";

export const CLOUD_ID = "e2e-cloud";

/** The 3LO state: codes, access tokens and refresh tokens issued. */
export function newAtlassian3lo() {
  return { expiresIn: 3600, codes: new Map(), tokens: new Map(), refresh: new Set() };
}

const mint = (prefix) => `${prefix}${randomBytes(18).toString("base64url")}`;

function issue(state) {
  const access = mint("atl_at_");
  const refresh = mint("atl_rt_");
  state.tokens.set(access, { expiresAt: Date.now() + state.expiresIn * 1000 });
  state.refresh.add(refresh);
  return { access_token: access, refresh_token: refresh, expires_in: state.expiresIn, token_type: "Bearer",
    scope: "read:jira-work offline_access" };
}

/** True when the request's bearer token is one this server issued and it has not expired. */
function bearerValid(state, req) {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
  const found = m && state.tokens.get(m[1]);
  return Boolean(found && found.expiresAt > Date.now());
}

/**
 * For a gateway path `/atlassian-api/ex/{product}/{cloud}/rest...`: `{ path }` to serve it as at
 * the site when the bearer is valid and the cloud id is ours, `{ refuse }` otherwise; `null` for
 * any other path.
 */
export function gatewayPath(state, req, pathname) {
  const m = /^\/atlassian-api\/ex\/(jira|confluence)\/([^/]+)(\/.*)$/.exec(pathname);
  if (!m) return null;
  if (m[2] !== CLOUD_ID) return { refuse: 404 };
  if (!bearerValid(state, req)) return { refuse: 401 };
  return { path: m[3] };
}

export function atlassian3loRoutes(ctx) {
  const state = ctx.atlassian;
  return [
    ["GET", /^\/atlassian-auth\/authorize$/, (req, res) => {
      const redirect = new URL(req.query.get("redirect_uri"));
      const code = mint("atl_code_");
      state.codes.set(code, { redirect: req.query.get("redirect_uri"), clientId: req.query.get("client_id") });
      redirect.searchParams.set("code", code);
      redirect.searchParams.set("state", req.query.get("state") ?? "");
      res.writeHead(302, { Location: redirect.toString(), "Content-Length": 0 });
      res.end();
    }],
    ["POST", /^\/atlassian-auth\/oauth\/token$/, (req, res) => {
      let body;
      try { body = JSON.parse(req.body.toString("utf8")); } catch { return json(res, 400, { error: "invalid_request" }); }
      if (!body.client_secret) return json(res, 401, { error: "access_denied" });
      if (body.grant_type === "refresh_token") {
        if (!state.refresh.delete(body.refresh_token)) return json(res, 403, { error: "invalid_grant" });
        return json(res, 200, issue(state));
      }
      const code = state.codes.get(body.code);
      state.codes.delete(body.code);
      if (!code || code.clientId !== body.client_id || code.redirect !== body.redirect_uri) {
        return json(res, 403, { error: "invalid_grant" });
      }
      json(res, 200, issue(state));
    }],
    ["GET", /^\/atlassian-api\/oauth\/token\/accessible-resources$/, (req, res) => {
      if (!bearerValid(state, req)) return json(res, 401, { code: 401, message: "Unauthorized" });
      json(res, 200, [{ id: CLOUD_ID, url: ctx.url, name: "e2e", scopes: ["read:jira-work"], avatarUrl: "" }]);
    }],
  ];
}
