//! Principals and bearer-token authentication: the token table read from `MCP_AUTH_TOKENS`, the
//! constant-time comparison, and the anonymous principal for explicitly opted-in local runs.

use crate::upstream::{Secret, Vendor};
use serde_json::Value as Json;
use std::fmt;
use std::ops::BitXor;

/// The name the anonymous principal carries; no configured principal may use it.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// Who is calling: the principal named in `MCP_AUTH_TOKENS` whose token the request presented,
/// or a person signed in with OAuth, who is named by a stable identifier and may also bring
/// verified aliases, provider groups and upstream tokens of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    name: String,
    aliases: Vec<String>,
    groups: Vec<String>,
    personal: Vec<PersonalToken>,
}

/// The namespace of a GitHub organisation among a person's provider groups (`github:acme`).
pub(crate) const GITHUB_GROUP: &str = "github:";
/// The namespace of an OpenID Connect group claim's entries (`oidc:engineering`).
pub(crate) const OIDC_GROUP: &str = "oidc:";
/// The namespace of a verified GitHub login among a person's attributes (`login:octocat`).
pub(crate) const LOGIN_ALIAS: &str = "login:";
/// The namespace of a verified e-mail address among a person's attributes (`email:a@b.example`).
pub(crate) const EMAIL_ALIAS: &str = "email:";

/// The separator of a signed-in person's stable name (`github~583231`, `oidc~<hash>`): outside
/// the static-name syntax, so the two never collide, and unlike `:` never a namespace.
pub(crate) const STABLE_SEPARATOR: char = '~';

/// True for a provider group in its namespace: `github:` with an organisation's name, or
/// `oidc:` with 1 to 128 visible characters (group names there may hold spaces and slashes).
pub(crate) fn valid_provider_group(group: &str) -> bool {
    if let Some(org) = group.strip_prefix(GITHUB_GROUP) {
        (1..=64).contains(&org.len())
            && org
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    } else if let Some(name) = group.strip_prefix(OIDC_GROUP) {
        (1..=128).contains(&name.chars().count())
            && !name.chars().any(char::is_control)
            && name.trim() == name
    } else {
        false
    }
}

/// True for an alias a sign-in may carry (a GitHub login or an e-mail address): what a policy
/// or allow-list may name, never containing `:` or the stable separator, so it is never taken
/// for a namespaced group or a stable name.
pub(crate) fn valid_alias(alias: &str) -> bool {
    (1..=254).contains(&alias.len())
        && alias
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@' | b'+'))
        && alias != ANONYMOUS
}

/// True for a name a policy document or allow-list may use for a principal: a static token's
/// name, a GitHub login or e-mail address (matched against verified aliases), or a signed-in
/// person's stable name.
pub(crate) fn valid_principal_reference(name: &str) -> bool {
    valid_alias(name) || valid_signed_in_name(name)
}

/// A person's own token at an upstream vendor, obtained when they signed in. `Debug` hides the
/// token (it is a [`Secret`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PersonalToken {
    /// The vendor the token is for; it is only ever sent to that vendor's configured API.
    pub vendor: Vendor,
    /// The token.
    pub(crate) token: Secret,
    /// When it expires (ms since the epoch), if it does.
    pub expires_ms: Option<u64>,
    /// The API root the token is for when it is not the vendor's configured one: Atlassian's
    /// gateway root of the person's site for Jira and Confluence.
    pub(crate) base_url: Option<String>,
}

impl Principal {
    /// A principal called `name` (callers outside this module use it in tests and fixtures).
    pub fn named(name: &str) -> Principal {
        Principal {
            name: name.to_owned(),
            aliases: Vec::new(),
            groups: Vec::new(),
            personal: Vec::new(),
        }
    }

    /// A person signed in with OAuth under the stable `name`, with what the identity provider
    /// verified about them: namespaced `attributes` (provider groups such as `github:acme`,
    /// aliases such as `login:octocat` or `email:a@b.example`; others are ignored), and their
    /// own upstream tokens.
    pub(crate) fn signed_in(
        name: &str,
        attributes: &[String],
        personal: Vec<PersonalToken>,
    ) -> Principal {
        let (aliases, groups) = split_attributes(attributes);
        Principal {
            name: name.to_owned(),
            aliases,
            groups,
            personal,
        }
    }

    /// The identity provider's groups of a signed-in person, namespaced (`github:acme`); empty
    /// for a static token.
    pub(crate) fn groups(&self) -> &[String] {
        &self.groups
    }

    /// The verified aliases of a signed-in person (their GitHub login, their verified e-mail);
    /// empty for a static token.
    pub(crate) fn aliases(&self) -> &[String] {
        &self.aliases
    }

    /// True when a policy or allow-list entry naming `who` means this principal: its own name
    /// exactly, or one of its aliases in any case (logins and e-mail addresses ignore case).
    pub(crate) fn answers_to(&self, who: &str) -> bool {
        self.name == who || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(who))
    }

    /// True when the principal is in the namespaced provider `group` (any case).
    pub(crate) fn in_provider_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g.eq_ignore_ascii_case(group))
    }

    /// The person's own token for `vendor`, if they signed in with one.
    pub(crate) fn personal_token(&self, vendor: Vendor) -> Option<&PersonalToken> {
        self.personal.iter().find(|t| t.vendor == vendor)
    }

    /// The anonymous principal of a local run that opted in.
    pub(crate) fn anonymous() -> Principal {
        Principal::named(ANONYMOUS)
    }

    /// The principal's name, safe to use as a storage-key component (`[A-Za-z0-9._-]{1,64}`).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The principals and their tokens.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TokenTable {
    entries: Vec<(Principal, Vec<u8>)>,
}

impl fmt::Debug for TokenTable {
    /// Lists principals only: tokens must never reach a log through `{:?}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenTable")
            .field(
                "principals",
                &self
                    .entries
                    .iter()
                    .map(|(p, _)| p.name())
                    .collect::<Vec<_>>(),
            )
            .field("tokens", &self.entries.len())
            .finish()
    }
}

/// The smallest token accepted; shorter secrets are guessable.
pub(crate) const MIN_TOKEN_LEN: usize = 16;

/// The prefix of every access token OAuth issues, which tells them apart from static tokens
/// without I/O. The prefixes live here, below `oauth`, because a static token may not use them.
pub(crate) const ACCESS_PREFIX: &str = "mcp_at_";
/// The prefix of every refresh token OAuth issues.
pub(crate) const REFRESH_PREFIX: &str = "mcp_rt_";

/// True when `token` has the shape of a token OAuth issues (access or refresh).
pub(crate) fn is_issued_token(token: &str) -> bool {
    token.starts_with(ACCESS_PREFIX) || token.starts_with(REFRESH_PREFIX)
}

/// Why `MCP_AUTH_TOKENS` cannot be read. Its `Display` never quotes a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadTokenTable {
    /// Not JSON: where the parser stopped.
    NotJson {
        /// The line.
        line: usize,
        /// The column.
        column: usize,
    },
    /// JSON, but not an object.
    NotAnObject,
    /// A principal name outside the allowed characters or length.
    Name(String),
    /// The reserved name [`ANONYMOUS`].
    Reserved,
    /// A principal's tokens are wrong.
    Tokens {
        /// The principal.
        name: String,
        /// What is wrong with its tokens.
        problem: TokenProblem,
    },
}

/// What is wrong with a principal's tokens in `MCP_AUTH_TOKENS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenProblem {
    /// A list holds something other than a string.
    NotAString,
    /// Neither a string nor a non-empty list.
    NotTokens,
    /// Shorter than [`MIN_TOKEN_LEN`], or not visible ASCII.
    Weak,
    /// Starts with a prefix of the tokens OAuth issues.
    IssuedPrefix,
    /// Listed twice.
    Repeated,
}

impl fmt::Display for BadTokenTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadTokenTable::NotJson { line, column } => {
                write!(f, "not valid JSON (line {line}, column {column})")
            }
            BadTokenTable::NotAnObject => {
                f.write_str("must be a JSON object mapping principal names to tokens")
            }
            BadTokenTable::Name(name) => write!(
                f,
                "principal name {} must be 1 to 64 characters of A-Z a-z 0-9 . _ -",
                name_shown(name)
            ),
            BadTokenTable::Reserved => write!(f, "principal name {ANONYMOUS:?} is reserved"),
            BadTokenTable::Tokens { name, problem } => {
                write!(f, "principal {}: {problem}", name_shown(name))
            }
        }
    }
}

/// A principal name as a refusal of `MCP_AUTH_TOKENS` shows it: whole when it is too short to be
/// a token, else its first four characters and its length, since an entry written the wrong way
/// round has its token where the name goes, and the refusal reaches every caller.
fn name_shown(name: &str) -> String {
    let length = name.chars().count();
    if length < MIN_TOKEN_LEN {
        return format!("{name:?}");
    }
    let head: String = name.chars().take(4).collect();
    format!("{:?} ({length} characters)", format!("{head}…"))
}

impl fmt::Display for TokenProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenProblem::NotAString => f.write_str("every token must be a string"),
            TokenProblem::NotTokens => {
                f.write_str("expected a token string or a non-empty list of them")
            }
            TokenProblem::Weak => write!(
                f,
                "a token must be at least {MIN_TOKEN_LEN} visible ASCII characters"
            ),
            TokenProblem::IssuedPrefix => f.write_str(
                "a static token cannot start with mcp_at_ or mcp_rt_, the prefixes of tokens \
                 OAuth issues",
            ),
            TokenProblem::Repeated => {
                f.write_str("a token is listed twice, so it cannot select one principal")
            }
        }
    }
}

impl std::error::Error for BadTokenTable {}

impl TokenTable {
    /// Reads the `MCP_AUTH_TOKENS` JSON: an object from principal name to a token or a list of
    /// tokens. The error text never contains a token.
    pub fn parse(text: &str) -> Result<TokenTable, BadTokenTable> {
        let json: Json = serde_json::from_str(text).map_err(|e| BadTokenTable::NotJson {
            line: e.line(),
            column: e.column(),
        })?;
        let Json::Object(object) = json else {
            return Err(BadTokenTable::NotAnObject);
        };
        let mut table = TokenTable::default();
        for (name, tokens) in object {
            if !valid_principal_name(&name) {
                return Err(BadTokenTable::Name(name));
            }
            if name == ANONYMOUS {
                return Err(BadTokenTable::Reserved);
            }
            let refused = |problem| BadTokenTable::Tokens {
                name: name.clone(),
                problem,
            };
            let tokens = match tokens {
                Json::String(t) => vec![t],
                Json::Array(items) if !items.is_empty() => items
                    .into_iter()
                    .map(|t| match t {
                        Json::String(t) => Ok(t),
                        _ => Err(refused(TokenProblem::NotAString)),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                _ => return Err(refused(TokenProblem::NotTokens)),
            };
            for token in tokens {
                if token.len() < MIN_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err(refused(TokenProblem::Weak));
                }
                if is_issued_token(&token) {
                    return Err(refused(TokenProblem::IssuedPrefix));
                }
                if table.entries.iter().any(|(_, t)| t == token.as_bytes()) {
                    return Err(refused(TokenProblem::Repeated));
                }
                table
                    .entries
                    .push((Principal::named(&name), token.into_bytes()));
            }
        }
        Ok(table)
    }

    /// True when no token is configured (every request is then refused).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The principals' names, once each.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.entries.iter().map(|(p, _)| p.name.clone()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The number of principals.
    #[cfg(test)]
    pub(crate) fn principal_count(&self) -> usize {
        let mut names: Vec<&str> = self.entries.iter().map(|(p, _)| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    }

    /// The principal whose token equals `presented`. Every configured token is compared, in
    /// constant time each, so timing reveals neither which token matched nor how much of one did.
    pub(crate) fn lookup(&self, presented: &[u8]) -> Option<&Principal> {
        let mut found = None;
        for (principal, token) in &self.entries {
            if constant_time_eq(token, presented) {
                found = Some(principal);
            }
        }
        found
    }
}

/// Why a request was not authenticated (all become 401 with `WWW-Authenticate: Bearer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthError {
    /// No `Authorization` header, or not a `Bearer` one.
    Missing,
    /// A bearer token that matches no principal.
    Invalid,
    /// The server has no tokens configured, so nobody can be authenticated.
    NotConfigured,
}

impl AuthError {
    /// The `error` attribute for `WWW-Authenticate` (RFC 6750 section 3.1), if any.
    pub(crate) fn challenge(self) -> &'static str {
        match self {
            // RFC 6750: a request without credentials gets a challenge with no error code.
            AuthError::Missing | AuthError::NotConfigured => "Bearer",
            AuthError::Invalid => "Bearer error=\"invalid_token\"",
        }
    }
}

/// Reads the bearer token from an `Authorization` header value (scheme case-insensitive).
pub(crate) fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Authenticates a request from its `Authorization` header.
pub(crate) fn authenticate(
    table: &TokenTable,
    authorization: Option<&str>,
) -> Result<Principal, AuthError> {
    if table.is_empty() {
        return Err(AuthError::NotConfigured);
    }
    let token = authorization
        .and_then(bearer_token)
        .ok_or(AuthError::Missing)?;
    table
        .lookup(token.as_bytes())
        .cloned()
        .ok_or(AuthError::Invalid)
}

/// Compares a configured `secret` with a `presented` value doing the same work for every
/// `presented` of one length: one XOR per presented byte, whatever the secret's length and
/// wherever the two first differ. Generic over the byte so a test can count those XORs; the
/// token table compares `u8`.
pub(crate) fn constant_time_eq<B>(secret: &[B], presented: &[B]) -> bool
where
    B: Copy + BitXor<Output = B>,
    u64: From<B>,
{
    let Some(&first) = secret.first() else {
        return presented.is_empty();
    };
    let mut diff: u64 = (secret.len() != presented.len()).into();
    for (i, &p) in presented.iter().enumerate() {
        // Wrapping the index keeps every read in bounds without a length-dependent branch.
        let s = secret.get(i % secret.len()).copied().unwrap_or(first);
        diff |= u64::from(s ^ p);
    }
    // black_box keeps the optimiser from turning the loop into an early-exit comparison.
    std::hint::black_box(diff) == 0
}

/// A person's verified attributes split into aliases and provider groups (namespace kept);
/// malformed entries are dropped.
pub(crate) fn split_attributes(attributes: &[String]) -> (Vec<String>, Vec<String>) {
    let mut aliases = Vec::new();
    let mut groups = Vec::new();
    for a in attributes {
        if let Some(alias) = a
            .strip_prefix(LOGIN_ALIAS)
            .or_else(|| a.strip_prefix(EMAIL_ALIAS))
        {
            if valid_alias(alias) {
                aliases.push(alias.to_owned());
            }
        } else if valid_provider_group(a) {
            groups.push(a.clone());
        }
    }
    (aliases, groups)
}

/// True for a principal name a sign-in may produce: a stable name (`github~` and a user id,
/// `oidc~` and 32 hex digits), or a verified e-mail address when the deployment chose that
/// claim. None of them fits the static syntax (each has `~` or `@`), and each is safe as a
/// storage-key component: keys hash principal names, and none holds a `:`.
pub(crate) fn valid_signed_in_name(name: &str) -> bool {
    match name.split_once(STABLE_SEPARATOR) {
        Some(("github", id)) => {
            (1..=20).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit())
        }
        Some(("oidc", hash)) => {
            hash.len() == 32 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        }
        Some(_) => false,
        None => name.len() <= 64 && name.contains('@') && valid_alias(name),
    }
}

fn valid_principal_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T1: &str = "tok-aaaaaaaaaaaaaaaa";
    const T2: &str = "tok-bbbbbbbbbbbbbbbb";

    #[test]
    fn a_refused_entry_never_quotes_what_could_be_a_token() {
        let swapped = format!(r#"{{"bob": "{T1}", "{T2}": "alice"}}"#);
        let text = TokenTable::parse(&swapped).unwrap_err().to_string();
        assert!(!text.contains(T2), "{text}");
        assert!(text.contains("\"tok-…\" (20 characters)"), "{text}");
        let invalid = format!(r#"{{"{T1}/x": "{T2}"}}"#);
        let text = TokenTable::parse(&invalid).unwrap_err().to_string();
        assert!(!text.contains(T1), "{text}");
        let short = TokenTable::parse(r#"{"bob": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(short.contains("principal \"bob\""), "{short}");
    }

    #[test]
    fn constant_time_eq_matches_plain_equality() {
        let cases: [(&[u8], &[u8]); 8] = [
            (b"", b""),
            (b"", b"a"),
            (b"abcabc", b"abc"),
            (b"a", b"a"),
            (b"a", b"b"),
            (b"abc", b"ab"),
            (b"ab", b"abc"),
            (b"abc\0", b"abc"),
        ];
        for (a, b) in cases {
            assert_eq!(constant_time_eq(a, b), a == b, "{a:?} {b:?}");
        }
    }

    thread_local! {
        static XORS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A byte whose XORs are counted: the work of a comparison, independent of the clock.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Counted(u8);

    impl BitXor for Counted {
        type Output = Counted;
        fn bitxor(self, other: Counted) -> Counted {
            count_xor();
            Counted(self.0 ^ other.0)
        }
    }

    fn count_xor() {
        XORS.with(|n| n.set(n.get() + 1));
    }

    impl From<Counted> for u64 {
        fn from(b: Counted) -> u64 {
            u64::from(b.0)
        }
    }

    /// The result of comparing `secret` with `presented`, and the XORs it took.
    fn counted_eq(secret: &[u8], presented: &[u8]) -> (bool, usize) {
        let wrap = |bytes: &[u8]| bytes.iter().copied().map(Counted).collect::<Vec<_>>();
        XORS.with(|n| n.set(0));
        let equal = constant_time_eq(&wrap(secret), &wrap(presented));
        (equal, XORS.with(std::cell::Cell::get))
    }

    #[test]
    fn comparison_work_depends_only_on_the_presented_length() {
        let secret = T1.as_bytes();
        let n = secret.len();
        // The right token, one differing at each position, and secrets of other lengths
        // (shorter, longer, a prefix of it): n XORs every time.
        let mut presented = vec![secret.to_vec()];
        for at in 0..n {
            let mut wrong = secret.to_vec();
            wrong[at] ^= 0x20;
            presented.push(wrong);
        }
        for p in &presented {
            let (equal, xors) = counted_eq(secret, p);
            assert_eq!(equal, p == secret, "{:?}", String::from_utf8_lossy(p));
            assert_eq!(xors, n, "{:?}", String::from_utf8_lossy(p));
        }
        let others: [&[u8]; 3] = [
            b"short-secret",
            b"a-much-longer-secret-than-the-token",
            &secret[..n - 1],
        ];
        for other in others {
            let (equal, xors) = counted_eq(other, secret);
            assert!(!equal);
            assert_eq!(xors, n, "secret of {} bytes", other.len());
        }
        // A wrong length presented: as many XORs as it has bytes, so only its own length shows.
        for len in [0, 1, n - 1, n + 1, 3 * n] {
            assert_eq!(counted_eq(secret, &vec![b'x'; len]), (false, len));
        }
    }

    #[test]
    fn parses_single_tokens_and_lists() {
        let table =
            TokenTable::parse(&format!(r#"{{"ci":"{T1}","alice":["{T2}","{T1}x"]}}"#)).unwrap();
        assert_eq!(table.principal_count(), 2);
        assert_eq!(table.lookup(T1.as_bytes()).map(Principal::name), Some("ci"));
        assert_eq!(
            table.lookup(T2.as_bytes()).map(Principal::name),
            Some("alice")
        );
        let t3 = format!("{T1}x");
        assert_eq!(
            table.lookup(t3.as_bytes()).map(Principal::name),
            Some("alice")
        );
        assert_eq!(table.lookup(b"tok-cccccccccccccccc"), None);
    }

    #[test]
    fn rejects_bad_tables_without_echoing_tokens() {
        let cases = [
            ("[]", "must be a JSON object"),
            ("{", "not valid JSON"),
            (r#"{"a b":"tok-aaaaaaaaaaaaaaaa"}"#, "principal name"),
            (r#"{"anonymous":"tok-aaaaaaaaaaaaaaaa"}"#, "reserved"),
            (r#"{"a":"short"}"#, "at least 16"),
            (r#"{"a":[]}"#, "non-empty list"),
            (r#"{"a":[1]}"#, "must be a string"),
            (
                r#"{"a":"tok-aaaaaaaaaaaaaaaa","b":"tok-aaaaaaaaaaaaaaaa"}"#,
                "listed twice",
            ),
            (r#"{"a":"tok aaaaaaaaaaaaaaaa"}"#, "visible ASCII"),
            (
                r#"{"a":"mcp_at_aaaaaaaaaaaaaaaa"}"#,
                "prefixes of tokens OAuth issues",
            ),
        ];
        for (text, expected) in cases {
            let err = TokenTable::parse(text).expect_err(text).to_string();
            assert!(err.contains(expected), "{text}: {err}");
            assert!(!err.contains("aaaaaaaa"), "{text}: token leaked into {err}");
        }
    }

    #[test]
    fn debug_output_hides_tokens() {
        let table = TokenTable::parse(&format!(r#"{{"ci":"{T1}"}}"#)).unwrap();
        let shown = format!("{table:?}");
        assert!(shown.contains("ci") && !shown.contains(T1), "{shown}");
    }

    #[test]
    fn authenticates_bearer_headers() {
        let table = TokenTable::parse(&format!(r#"{{"ci":"{T1}"}}"#)).unwrap();
        let ok = authenticate(&table, Some(&format!("bearer {T1}")));
        assert_eq!(ok, Ok(Principal::named("ci")));
        assert_eq!(authenticate(&table, None), Err(AuthError::Missing));
        assert_eq!(authenticate(&table, Some(T1)), Err(AuthError::Missing));
        assert_eq!(
            authenticate(&table, Some("Basic abc")),
            Err(AuthError::Missing)
        );
        assert_eq!(
            authenticate(&table, Some("Bearer ")),
            Err(AuthError::Missing)
        );
        assert_eq!(
            authenticate(&table, Some(&format!("Bearer {T2}"))),
            Err(AuthError::Invalid)
        );
        assert_eq!(
            authenticate(&TokenTable::default(), Some(&format!("Bearer {T1}"))),
            Err(AuthError::NotConfigured)
        );
    }
}
