//! Host tests of the sign-in flow: registration, the consent page and its anti-forgery check,
//! the GitHub hand-off (a scripted GitHub), the code exchange, refresh and revocation, and the
//! refusals the issue lists (each with the right OAuth error and nothing issued).

use crate::common::oauth::*;
use devtools_mcp_edge::http::HttpResponse;
use devtools_mcp_edge::oauth::store::pkce_challenge;
use devtools_mcp_edge::ports::fake::{FakeEnv, ScriptedHttp};
use devtools_mcp_edge::ports::{UpstreamRequest, UpstreamResponse};
use devtools_mcp_edge::server::Server;
use serde_json::{json, Value as Json};

const REDIRECT: &str = "http://127.0.0.1:3000/callback";

fn ok(body: Json) -> UpstreamResponse {
    UpstreamResponse {
        status: 200,
        status_text: "OK".into(),
        headers: vec![],
        body: body.to_string().into_bytes(),
    }
}

/// GitHub signing in `login`, member of `acme`.
fn github(login: &'static str) -> ScriptedHttp {
    ScriptedHttp::new(move |r: &UpstreamRequest| {
        Ok(if r.url.ends_with("/login/oauth/access_token") {
            ok(json!({"access_token": "gho_person_token", "token_type": "bearer"}))
        } else if r.url.ends_with("/user") {
            ok(json!({"login": login, "id": 1}))
        } else if r.url.contains("/user/orgs") {
            ok(json!([{"login": "acme"}]))
        } else if r.url == "https://client.example.org/big.json" {
            ok(json!({"client_id": r.url, "pad": "x".repeat(10_000)}))
        } else {
            UpstreamResponse {
                status: 404,
                status_text: "Not Found".into(),
                headers: vec![],
                body: vec![],
            }
        })
    })
}

fn form(pairs: &[(&str, &str)]) -> String {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    devtools_mcp_edge::upstream::path::form_urlencode(&pairs)
}

fn location(response: &HttpResponse) -> String {
    response.header("Location").expect("a redirect").to_owned()
}

fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    devtools_mcp_edge::oauth::form::Params::parse(query)
        .ok()?
        .get(name)
        .ok()?
        .map(str::to_owned)
}

fn register(server: &Server, env: &FakeEnv) -> String {
    let body = json!({"client_name": "Test <Client>", "redirect_uris": [REDIRECT]}).to_string();
    let response = send_on(
        server,
        env,
        http(
            "POST",
            "/oauth/register",
            &[("Content-Type", "application/json")],
            &body,
        ),
    );
    assert_eq!(
        response.status,
        201,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    body_json(&response)["client_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn authorize_query(client_id: &str, redirect: &str) -> String {
    form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("code_challenge", &pkce_challenge(VERIFIER)),
        ("code_challenge_method", "S256"),
        ("state", "st-1"),
        ("resource", "https://mcp.example.com/mcp"),
    ])
}

/// The consent page's hidden fields and cookie.
fn consent(server: &Server, env: &FakeEnv, client_id: &str) -> (String, String, String) {
    let response = send_on(
        server,
        env,
        http(
            "GET",
            &format!("/oauth/authorize?{}", authorize_query(client_id, REDIRECT)),
            &[],
            "",
        ),
    );
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let html = String::from_utf8_lossy(&response.body).into_owned();
    assert!(
        html.contains("Test &lt;Client&gt;") && html.contains("127.0.0.1"),
        "{html}"
    );
    let field = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let start = html.find(&marker).unwrap() + marker.len();
        html[start..].split('"').next().unwrap().to_owned()
    };
    let cookie = response
        .header("Set-Cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    (field("request"), field("csrf"), cookie)
}

/// Runs the whole browser half; returns the code.
fn sign_in(server: &Server, env: &FakeEnv, client_id: &str) -> String {
    let (request, csrf, cookie) = consent(server, env, client_id);
    let response = send_on(
        server,
        env,
        http(
            "POST",
            "/oauth/authorize",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Cookie", &cookie),
            ],
            &form(&[
                ("request", &request),
                ("csrf", &csrf),
                ("action", "approve"),
            ]),
        ),
    );
    assert_eq!(response.status, 302);
    let to_github = location(&response);
    assert!(
        to_github.starts_with("https://github.com/login/oauth/authorize?"),
        "{to_github}"
    );
    let state = query_param(&to_github, "state").unwrap();
    let response = send_on(
        server,
        env,
        http(
            "GET",
            &format!("/oauth/callback?code=gh-code&state={state}"),
            &[],
            "",
        ),
    );
    let back = location(&response);
    assert!(back.starts_with(REDIRECT), "{back}");
    assert_eq!(query_param(&back, "state").as_deref(), Some("st-1"));
    assert_eq!(query_param(&back, "iss").as_deref(), Some(ISSUER));
    query_param(&back, "code").unwrap_or_else(|| panic!("no code in {back}"))
}

fn token(server: &Server, env: &FakeEnv, pairs: &[(&str, &str)]) -> (u16, Json) {
    let response = send_on(
        server,
        env,
        http(
            "POST",
            "/oauth/token",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &form(pairs),
        ),
    );
    assert_eq!(response.header("Cache-Control"), Some("no-store"));
    (response.status, body_json(&response))
}

fn exchange(
    server: &Server,
    env: &FakeEnv,
    client_id: &str,
    code: &str,
    verifier: &str,
) -> (u16, Json) {
    token(
        server,
        env,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
        ],
    )
}

fn tools_list(server: &Server, env: &FakeEnv, access: &str) -> u16 {
    let mut request = post(
        &request(1, "tools/list", json!({"_meta": meta_2026()})).to_string(),
        &[("Authorization", &format!("Bearer {access}"))],
    );
    for (k, v) in headers_2026("tools/list", None) {
        request.headers.push((k.into(), v.into()));
    }
    send_on(server, env, request).status
}

#[test]
fn the_whole_flow_signs_in_refreshes_and_revokes() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    let code = sign_in(&server, &env, &client_id);
    let (status, tokens) = exchange(&server, &env, &client_id, &code, VERIFIER);
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(tools_list(&server, &env, access), 200);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, again) = token(
        &server,
        &env,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &client_id),
        ],
    );
    assert_eq!(status, 200, "{again}");
    // The GitHub token never reaches a reply or a log line.
    assert!(env
        .log
        .lines()
        .iter()
        .all(|l| !l.contains("gho_person_token")));
    let new_access = again["access_token"].as_str().unwrap();
    let revoke = send_on(
        &server,
        &env,
        http(
            "POST",
            "/oauth/revoke",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &form(&[
                ("token", again["refresh_token"].as_str().unwrap()),
                ("client_id", &client_id),
            ]),
        ),
    );
    assert_eq!(revoke.status, 200);
    assert_eq!(tools_list(&server, &env, new_access), 401);
}

#[test]
fn refusals_issue_nothing() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    let client_id = register(&server, &env);
    // Wrong PKCE verifier, then the code used twice.
    let code = sign_in(&server, &env, &client_id);
    let (status, body) = exchange(&server, &env, &client_id, &code, &"w".repeat(43));
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(body.get("access_token").is_none());
    assert_eq!(exchange(&server, &env, &client_id, &code, VERIFIER).0, 200);
    let (status, body) = exchange(&server, &env, &client_id, &code, VERIFIER);
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    // A rotated refresh token replayed.
    let code = sign_in(&server, &env, &client_id);
    let (_, first) = exchange(&server, &env, &client_id, &code, VERIFIER);
    let refresh = first["refresh_token"].as_str().unwrap();
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh),
        ("client_id", client_id.as_str()),
    ];
    assert_eq!(token(&server, &env, &pairs).0, 200);
    let (status, body) = token(&server, &env, &pairs);
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    // A redirect URI that was not registered: shown on a page, never redirected to.
    let response = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!(
                "/oauth/authorize?{}",
                authorize_query(&client_id, "https://evil.example/cb")
            ),
            &[],
            "",
        ),
    );
    assert_eq!(response.status, 400);
    assert!(response.header("Location").is_none());
    // A token for another resource.
    let response = send_on(
        &server,
        &env,
        http(
            "GET",
            &format!(
                "/oauth/authorize?{}",
                authorize_query(&client_id, REDIRECT).replace("mcp.example.com", "other.example")
            ),
            &[],
            "",
        ),
    );
    assert_eq!(
        query_param(&location(&response), "error").as_deref(),
        Some("invalid_target")
    );
    // Consent without its anti-forgery check: no cookie, or a wrong token.
    let (request, csrf, cookie) = consent(&server, &env, &client_id);
    for (cookie, csrf) in [("", csrf.as_str()), (cookie.as_str(), "forged")] {
        let response = send_on(
            &server,
            &env,
            http(
                "POST",
                "/oauth/authorize",
                &[
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Cookie", cookie),
                ],
                &form(&[("request", &request), ("csrf", csrf), ("action", "approve")]),
            ),
        );
        assert_eq!(response.status, 403, "{cookie} {csrf}");
        assert!(response.header("Location").is_none());
    }
    assert!(env
        .http
        .sent()
        .iter()
        .all(|r| !r.url.contains("access_token") || r.body.is_some()));
}

#[test]
fn client_metadata_documents_on_private_addresses_or_too_large_are_refused() {
    let server = oauth_server();
    let env = FakeEnv::with_http(github("octocat"));
    for client_id in [
        "https://10.0.0.1/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://localhost/client.json",
        "http://client.example.org/client.json",
        "https://client.example.org/big.json",
    ] {
        let response = send_on(
            &server,
            &env,
            http(
                "GET",
                &format!("/oauth/authorize?{}", authorize_query(client_id, REDIRECT)),
                &[],
                "",
            ),
        );
        assert_eq!(response.status, 400, "{client_id}");
        assert!(response.header("Location").is_none());
    }
    let fetched: Vec<String> = env.http.sent().iter().map(|r| r.url.clone()).collect();
    assert_eq!(fetched, ["https://client.example.org/big.json"]);
}

#[test]
fn people_outside_the_allow_list_or_with_a_static_name_are_refused() {
    for login in ["mallory", "ci"] {
        let mut settings = oauth_settings();
        settings.retain(|(k, _)| k != "MCP_OAUTH_ALLOWED_USERS");
        settings.push(("MCP_OAUTH_ALLOWED_USERS".into(), format!("octocat,{login}")));
        if login == "mallory" {
            settings.retain(|(k, _)| k != "MCP_OAUTH_ALLOWED_USERS");
            settings.push(("MCP_OAUTH_ALLOWED_USERS".into(), "octocat".into()));
        }
        let server = server_with(settings);
        let env = FakeEnv::with_http(github(login));
        let client_id = register(&server, &env);
        let (request, csrf, cookie) = consent(&server, &env, &client_id);
        let response = send_on(
            &server,
            &env,
            http(
                "POST",
                "/oauth/authorize",
                &[
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Cookie", &cookie),
                ],
                &form(&[
                    ("request", &request),
                    ("csrf", &csrf),
                    ("action", "approve"),
                ]),
            ),
        );
        let state = query_param(&location(&response), "state").unwrap();
        let response = send_on(
            &server,
            &env,
            http(
                "GET",
                &format!("/oauth/callback?code=c&state={state}"),
                &[],
                "",
            ),
        );
        let back = location(&response);
        assert_eq!(
            query_param(&back, "error").as_deref(),
            Some("access_denied"),
            "{login}: {back}"
        );
        assert!(query_param(&back, "code").is_none());
    }
}
