//! What the identity provider and Atlassian have in common: one bounded request to a sign-in
//! provider read as JSON, and a token endpoint's answer made into the person's upstream token.

use super::error::OAuthError;
use super::store::UpstreamToken;
use crate::ports::{Clock, UpstreamHttp, UpstreamRequest};
use crate::upstream::Secret;
use serde::Deserialize;
use serde_json::Value as Json;

/// How long one request to a sign-in provider may take, in milliseconds.
pub(super) const IDP_TIMEOUT_MS: u64 = 10_000;
/// The largest answer read from a sign-in provider, in bytes.
const IDP_MAX_BYTES: usize = 256 * 1024;
/// A token endpoint's answer, success or refusal (both the identity provider's and Atlassian's).
#[derive(Deserialize)]
pub(super) struct TokenAnswer {
    access_token: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
    error: Option<String>,
}

/// The provider failed (not refused): `server_error`, naming what went wrong.
pub(super) fn idp_error(what: &str) -> OAuthError {
    OAuthError::server_error(format!("the identity provider failed: {what}"))
}

/// Sends `request` to a provider and reads its JSON answer; any other answer is `server_error`.
pub(super) async fn send(
    http: &dyn UpstreamHttp,
    request: UpstreamRequest,
) -> Result<Json, OAuthError> {
    send_status(http, request).await.map_err(|(_, e)| e)
}

/// [`send`], with the refused answer's HTTP status beside the error.
pub(super) async fn send_status(
    http: &dyn UpstreamHttp,
    request: UpstreamRequest,
) -> Result<Json, (Option<u16>, OAuthError)> {
    let response = http
        .send(request, IDP_MAX_BYTES)
        .await
        .map_err(|e| (None, idp_error(&e.to_string())))?;
    if !(200..300).contains(&response.status) {
        let error = idp_error(&format!("HTTP {}", response.status));
        return Err((Some(response.status), error));
    }
    serde_json::from_slice(&response.body)
        .map_err(|_| (None, idp_error("an answer that is not JSON")))
}

/// A token endpoint's JSON answer: the access token and the rest of the answer, or the refusal
/// of `who` (the provider's name in the error) as `access_denied`.
pub(super) fn token_answer(answer: Json, who: &str) -> Result<(String, TokenAnswer), OAuthError> {
    let mut answer: TokenAnswer = serde_json::from_value(answer)
        .map_err(|_| idp_error(&format!("a malformed token answer from {who}")))?;
    match (answer.access_token.take(), &answer.error) {
        (Some(token), None) => Ok((token, answer)),
        (_, Some(error)) => Err(OAuthError::access_denied(format!(
            "{who} refused ({})",
            error_code(error)
        ))),
        (None, None) => Err(idp_error(&format!("no access token from {who}"))),
    }
}

/// A provider's `error` as it may be quoted: an error code's shape (lower-case words joined by
/// `_`, as RFC 6749 and the providers spell them), else nothing of it. A provider that echoes
/// what it was sent would otherwise put the client secret in the text the sign-in's redirect
/// carries to whoever started it.
fn error_code(error: &str) -> &str {
    // An empty text splits into one empty word, so it is refused too.
    let code = error.len() <= 48
        && error
            .split('_')
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()));
    if code {
        error
    } else {
        "an error it did not name with a code"
    }
}

/// A person's token for `vendor` as a token endpoint answered it, with its expiry made absolute.
pub(super) fn upstream_token(
    vendor: &str,
    access: String,
    answer: TokenAnswer,
    site: Option<String>,
    clock: &dyn Clock,
) -> UpstreamToken {
    UpstreamToken {
        vendor: vendor.into(),
        access: Secret::new(access),
        refresh: answer.refresh_token.map(Secret::new),
        expires_ms: answer
            .expires_in
            .map(|s| clock.now_ms() + s.saturating_mul(1000)),
        site,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refusal_quotes_an_error_code_never_what_the_provider_echoed() {
        let refusal = |error: &str| {
            let answer = json!({ "error": error });
            match token_answer(answer, "GitHub") {
                Err(e) => e.description,
                Ok(_) => panic!("{error} was taken for a token"),
            }
        };
        for code in ["invalid_grant", "bad_verification_code", "access_denied"] {
            assert!(
                refusal(code).contains(&format!("GitHub refused ({code})")),
                "{code}"
            );
        }
        for echo in [
            "bad client_secret 0123456789abcdef",
            "Secret_Value",
            "s3cr3t",
            "a__b",
            "_x",
            &"a".repeat(49),
        ] {
            let text = refusal(echo);
            assert!(!text.contains(echo), "{text}");
            assert!(text.contains("did not name with a code"), "{text}");
        }
    }
}
