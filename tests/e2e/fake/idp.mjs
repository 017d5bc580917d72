// A GitHub-shaped identity provider for the fake upstream: the OAuth App endpoints under
// /login/oauth (authorize approves at once and redirects back, access_token exchanges codes with
// PKCE and refreshes expiring tokens) and the API's /user and /user/orgs for whoever holds a
// token it issued; the same endpoints serve as an OpenID Connect provider, with /oidc/userinfo
// answering the claims. `upstream.idp` sets who signs in and whether tokens expire, and every
// answer is read when asked, so a test changes them at run time (a person removed from an
// organisation, a login renamed, a token revoked):
//
//   upstream.idp.login = "octocat";     // who the next sign-in is
//   upstream.idp.ids = { octocat: 583231 };  // the numeric user id of each login (583231 if unset)
//   upstream.idp.orgs = ["acme"];       // the organisations of whoever asks
//   upstream.idp.claims = { sub: "u1", email: "a@b.example", email_verified: true };  // userinfo
//   upstream.idp.expiresIn = 60;        // tokens expire after 60 s and come with a refresh token
//   upstream.idp.tokens                 // token -> { login, expiresAt } of every token issued
//                                       // (delete one to revoke it)

import { createHash, randomBytes } from "node:crypto";
import { json } from "./util.mjs";

/** The provider's state: who signs in, and what it issued. */
export function newIdp() {
  return {
    login: "octocat", ids: {}, orgs: ["acme"], claims: { sub: "user-1" }, expiresIn: null,
    codes: new Map(), tokens: new Map(), refresh: new Map(),
  };
}

const mint = (prefix) => `${prefix}${randomBytes(18).toString("base64url")}`;

/** GitHub answers token errors with 200 and an `error` member. */
const refuse = (res, error) => json(res, 200, { error, error_description: error });

function issue(idp, login) {
  const access = mint(idp.expiresIn ? "ghu_" : "gho_");
  const expiresAt = idp.expiresIn ? Date.now() + idp.expiresIn * 1000 : null;
  idp.tokens.set(access, { login, expiresAt });
  const answer = { access_token: access, token_type: "bearer", scope: "read:user,read:org" };
  if (idp.expiresIn) {
    const refresh = mint("ghr_");
    idp.refresh.set(refresh, login);
    Object.assign(answer, { expires_in: idp.expiresIn, refresh_token: refresh, refresh_token_expires_in: 15_897_600 });
  }
  return answer;
}

/** The login holding the bearer token of `req`, or null when it is unknown or expired. */
function holder(idp, req) {
  const m = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? "");
  const found = m && idp.tokens.get(m[1]);
  return found && (found.expiresAt === null || found.expiresAt > Date.now()) ? found.login : null;
}

export function idpRoutes(ctx) {
  return [
    ["GET", /^\/login\/oauth\/authorize$/, (req, res) => {
      const redirect = new URL(req.query.get("redirect_uri"));
      const code = mint("code_");
      ctx.idp.codes.set(code, {
        login: ctx.idp.login,
        challenge: req.query.get("code_challenge"),
        redirect: req.query.get("redirect_uri"),
        clientId: req.query.get("client_id"),
      });
      redirect.searchParams.set("code", code);
      redirect.searchParams.set("state", req.query.get("state") ?? "");
      res.writeHead(302, { Location: redirect.toString(), "Content-Length": 0 });
      res.end();
    }],
    ["POST", /^\/login\/oauth\/access_token$/, (req, res) => {
      const form = new URLSearchParams(req.body.toString("utf8"));
      const idp = ctx.idp;
      if (form.get("grant_type") === "refresh_token") {
        const login = idp.refresh.get(form.get("refresh_token"));
        if (!login) return refuse(res, "bad_refresh_token");
        idp.refresh.delete(form.get("refresh_token"));
        return json(res, 200, issue(idp, login));
      }
      const code = idp.codes.get(form.get("code"));
      idp.codes.delete(form.get("code"));
      if (!code || code.clientId !== form.get("client_id") || code.redirect !== form.get("redirect_uri")) {
        return refuse(res, "bad_verification_code");
      }
      const verifier = form.get("code_verifier") ?? "";
      if (code.challenge && createHash("sha256").update(verifier).digest("base64url") !== code.challenge) {
        return refuse(res, "bad_verification_code");
      }
      json(res, 200, issue(idp, code.login));
    }],
    ["GET", /^\/user$/, (req, res) => {
      const login = holder(ctx.idp, req);
      if (!login) return json(res, 401, { message: "Bad credentials", status: "401" });
      json(res, 200, { login, id: ctx.idp.ids[login] ?? 583231, type: "User" });
    }],
    ["GET", /^\/oidc\/userinfo$/, (req, res) => {
      if (!holder(ctx.idp, req)) return json(res, 401, { error: "invalid_token" });
      json(res, 200, ctx.idp.claims);
    }],
    ["GET", /^\/user\/orgs$/, (req, res) => {
      if (!holder(ctx.idp, req)) return json(res, 401, { message: "Bad credentials", status: "401" });
      json(res, 200, ctx.idp.orgs.map((login, i) => ({ login, id: 1000 + i })));
    }],
  ];
}
