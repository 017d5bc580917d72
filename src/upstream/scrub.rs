//! Credentials out of every upstream text. An answer is opened only through [`open`], with the
//! [`Scrubber`] of the request: the secrets it carried (each form of its credential header) and
//! the deployment's credentials. Its reason phrase, header values, body (streamed, so a secret
//! split between two chunks is caught) and transport errors come out with each occurrence
//! replaced by [`MARKER`], so nothing built from them (a result, an error text, a cache entry, an
//! artifact, a log line) can hand a credential back, whatever the status.

use super::vendor::UpstreamSettings;
use crate::ports::Exchange;
use crate::ports::{BodyStream, StreamedResponse, TransportError, UpstreamHttp, UpstreamRequest};
use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use std::rc::Rc;

/// What each occurrence of a secret becomes.
pub const MARKER: &str = "[redacted]";

/// Secrets shorter than this are not replaced: a short value occurs in ordinary text (a
/// three-letter token would cut every word holding it), and no vendor issues one; the
/// credential header, the base64 and the `user:secret` pair built from it are longer and
/// replaced whatever the secret's length.
pub(crate) const MIN_SECRET_BYTES: usize = 8;

/// How a [`Scrubber`] finds its secrets.
#[derive(Clone)]
enum Finder {
    /// Nothing to replace.
    Nothing,
    /// Every secret, leftmost-longest.
    Automaton(AhoCorasick),
    /// The automaton could not be built: no text is let through, since none can be cleaned.
    Unbuildable,
}

/// The secrets one request's answer is cleaned of.
#[derive(Clone)]
pub(crate) struct Scrubber {
    /// How occurrences are found.
    finder: Finder,
    /// What is replaced, for telling whether a chunk ends with the start of one.
    patterns: Rc<[String]>,
}

impl Scrubber {
    /// The scrubber of a request that sent the header values `sent` (credential headers), under
    /// `settings`: each value in every form an echo may show ([`forms`]), and each configured
    /// credential of the deployment.
    pub(crate) fn new<'a>(
        settings: &'a UpstreamSettings,
        sent: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let mut secrets: Vec<String> = sent.into_iter().flat_map(forms).collect();
        secrets.extend(settings.credential_values().into_iter().map(str::to_owned));
        Scrubber::of(secrets)
    }

    fn of(secrets: Vec<String>) -> Self {
        let mut patterns: Vec<String> = Vec::new();
        for secret in secrets {
            if secret.len() < MIN_SECRET_BYTES {
                continue;
            }
            // JSON encoders that escape `/` (base64 holds it) echo the value so.
            if secret.contains('/') {
                patterns.push(secret.replace('/', "\\/"));
            }
            patterns.push(secret);
        }
        // Equal strings are indistinguishable: the unstable sort's result is the same.
        patterns.sort_unstable();
        patterns.dedup();
        let finder = if patterns.is_empty() {
            Finder::Nothing
        } else {
            // Leftmost-longest: `Basic <b64>` is replaced whole, not its base64 with `Basic `
            // left standing. Building fails only past the automaton's size limits, which a
            // handful of short patterns never reach; should it fail, nothing is let through.
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .map_or(Finder::Unbuildable, Finder::Automaton)
        };
        Scrubber {
            finder,
            patterns: patterns.into(),
        }
    }

    /// Where the end of `held` that could begin a secret starts (`held.len()` when none could):
    /// what is before it is final, as a secret starting there either lies wholly within `held`
    /// or cannot match whatever follows.
    fn unsettled(&self, held: &[u8]) -> usize {
        let longest = self.patterns.iter().map(String::len).max().unwrap_or(0);
        let from = held.len().saturating_sub(longest.saturating_sub(1));
        (from..held.len())
            .find(|&at| {
                self.patterns
                    .iter()
                    .any(|p| p.len() > held.len() - at && p.as_bytes().starts_with(&held[at..]))
            })
            .unwrap_or(held.len())
    }

    /// `text` with every secret replaced ([`MARKER`] alone when it cannot be cleaned).
    pub(crate) fn text(&self, text: &str) -> String {
        if let Finder::Unbuildable = self.finder {
            return MARKER.to_owned();
        }
        let mut out = Vec::with_capacity(text.len());
        self.replace(text.as_bytes(), text.len(), &mut out);
        // Whole secrets (valid UTF-8) were swapped for ASCII, so the text is still UTF-8.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// `error` with its detail scrubbed.
    pub(crate) fn transport(&self, error: TransportError) -> TransportError {
        match error {
            TransportError::Network(detail) => TransportError::Network(self.text(&detail)),
            other => other,
        }
    }

    /// Appends `hay` to `out` with every secret that starts before `until` replaced; returns
    /// where the copied part ends (at least `until`, or past it when a secret straddles it).
    fn replace(&self, hay: &[u8], until: usize, out: &mut Vec<u8>) -> usize {
        let finder = match &self.finder {
            Finder::Automaton(finder) => finder,
            Finder::Nothing => {
                out.extend_from_slice(&hay[..until]);
                return until;
            }
            // Never opened (see `open`); replaced whole should it be reached.
            Finder::Unbuildable => {
                out.extend_from_slice(MARKER.as_bytes());
                return until;
            }
        };
        let mut at = 0;
        for found in finder.find_iter(hay) {
            if found.start() >= until {
                break;
            }
            out.extend_from_slice(&hay[at..found.start()]);
            out.extend_from_slice(MARKER.as_bytes());
            at = found.end();
        }
        let end = until.max(at);
        out.extend_from_slice(&hay[at..end]);
        end
    }

    /// `response` with its reason phrase, header values and body scrubbed.
    fn response(&self, response: StreamedResponse) -> StreamedResponse {
        if let Finder::Nothing = self.finder {
            return response;
        }
        StreamedResponse {
            status: response.status,
            status_text: self.text(&response.status_text),
            headers: response
                .headers
                .into_iter()
                .map(|(name, value)| (name, self.text(&value)))
                .collect(),
            body: Box::new(ScrubbedBody {
                inner: response.body,
                scrubber: self.clone(),
                held: Vec::new(),
                ended: false,
            }),
        }
    }
}

/// The forms a credential header's `value` may be echoed in: whole (`Bearer <t>`, `token <t>`,
/// `Basic <b64>`, a bare `Circle-Token`), its secret after the scheme, and for `Basic` the
/// decoded `user:secret` and the secret alone.
fn forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_owned()];
    let Some((scheme, rest)) = value.split_once(' ') else {
        return forms;
    };
    let rest = rest.trim();
    forms.push(rest.to_owned());
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if let Some(pair) = decoded {
            if let Some((_, secret)) = pair.split_once(':') {
                forms.push(secret.to_owned());
            }
            forms.push(pair);
        }
    }
    forms
}

/// Sends `request` and opens its answer with every text in it scrubbed by `scrubber`: the one
/// way an upstream answer is read.
pub(crate) async fn open(
    http: &dyn UpstreamHttp,
    request: UpstreamRequest,
    scrubber: &Scrubber,
) -> Result<StreamedResponse, TransportError> {
    if let Finder::Unbuildable = scrubber.finder {
        return Err(TransportError::Network(
            "the answer could not be cleaned of the request's credentials, so it was not sent"
                .to_owned(),
        ));
    }
    match http.open(request).await {
        Ok(response) => Ok(scrubber.response(response)),
        Err(error) => Err(scrubber.transport(error)),
    }
}

/// A body read through a [`Scrubber`]: the end of each chunk that could begin a secret (at most
/// the longest secret less a byte) is held until the next chunk, or the body's end, shows
/// whether it does.
struct ScrubbedBody {
    inner: Box<dyn BodyStream>,
    scrubber: Scrubber,
    held: Vec<u8>,
    ended: bool,
}

impl ScrubbedBody {
    async fn next(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        while !self.ended {
            let chunk = match self.inner.next_chunk().await {
                Ok(chunk) => chunk,
                Err(error) => return Err(self.scrubber.transport(error)),
            };
            let Some(chunk) = chunk else {
                self.ended = true;
                break;
            };
            self.held.extend_from_slice(&chunk);
            let safe = self.scrubber.unsettled(&self.held);
            if safe == 0 {
                continue;
            }
            let mut out = Vec::with_capacity(self.held.len());
            let end = self.scrubber.replace(&self.held, safe, &mut out);
            self.held.drain(..end);
            if !out.is_empty() {
                return Ok(Some(out));
            }
        }
        if self.held.is_empty() {
            return Ok(None);
        }
        let held = std::mem::take(&mut self.held);
        let mut out = Vec::with_capacity(held.len());
        self.scrubber.replace(&held, held.len(), &mut out);
        Ok(Some(out))
    }
}

impl BodyStream for ScrubbedBody {
    fn next_chunk(&mut self) -> Exchange<'_, Option<Vec<u8>>> {
        Box::pin(self.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::Secret;

    const PAIR: &str = "robot@example.com:ATATT3xT?okenValue0123";

    fn basic() -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(PAIR)
        )
    }

    fn settings() -> UpstreamSettings {
        UpstreamSettings {
            atlassian_user_email: Some(Secret::new("robot@example.com")),
            atlassian_api_token: Some(Secret::new("ATATT3xT?okenValue0123")),
            github_token: Some(Secret::new("ghp_githubTokenValue0123")),
            circleci_token: Some(Secret::new("CCIPAT_circleTokenValue")),
            ..UpstreamSettings::default()
        }
    }

    #[test]
    fn every_form_of_a_basic_credential_is_replaced() {
        let header = basic();
        let b64 = header.strip_prefix("Basic ").unwrap().to_owned();
        let s = Scrubber::new(&settings(), [header.as_str()]);
        assert!(b64.contains('/'), "the escaped form is exercised");
        let text = format!(
            r#"{{"headers":{{"authorization":"{header}"}},"b64":"{b64}","escaped":"{}","pair":"{PAIR}","token":"ATATT3xT?okenValue0123","lower":"basic {b64}"}}"#,
            b64.replace('/', "\\/")
        );
        let out = s.text(&text);
        assert_eq!(
            out,
            r#"{"headers":{"authorization":"[redacted]"},"b64":"[redacted]","escaped":"[redacted]","pair":"[redacted]","token":"[redacted]","lower":"basic [redacted]"}"#
        );
        // The user alone identifies, and is data (assignees, authors): it stays.
        assert_eq!(s.text("by robot@example.com"), "by robot@example.com");
    }

    #[test]
    fn bearer_token_and_configured_credentials_are_replaced() {
        let s = Scrubber::new(&settings(), ["Bearer ghp_githubTokenValue0123"]);
        assert_eq!(
            s.text("Authorization: Bearer ghp_githubTokenValue0123; token ghp_githubTokenValue0123; circle CCIPAT_circleTokenValue"),
            "Authorization: [redacted]; token [redacted]; circle [redacted]"
        );
        // A bare header value (Circle-Token) is its own only form.
        let s = Scrubber::new(&UpstreamSettings::default(), ["CCIPAT_circleTokenValue"]);
        assert_eq!(s.text("x CCIPAT_circleTokenValue y"), "x [redacted] y");
    }

    #[test]
    fn short_secrets_and_empty_settings_leave_text_alone() {
        let s = Scrubber::new(&UpstreamSettings::default(), ["tok"]);
        assert!(matches!(s.finder, Finder::Nothing));
        assert_eq!(s.text("a token"), "a token");
    }

    fn streamed(scrubber: &Scrubber, body: &[u8], chunk: usize) -> Vec<u8> {
        let mut stream = ScrubbedBody {
            inner: Box::new(Pieces(body.chunks(chunk).map(<[u8]>::to_vec).collect())),
            scrubber: scrubber.clone(),
            held: Vec::new(),
            ended: false,
        };
        let mut out = Vec::new();
        futures::executor::block_on(async {
            while let Some(piece) = stream.next_chunk().await.unwrap() {
                assert!(!piece.is_empty(), "no empty chunk is handed out");
                out.extend_from_slice(&piece);
            }
        });
        out
    }

    /// A body handed out in the given pieces.
    struct Pieces(std::collections::VecDeque<Vec<u8>>);

    impl BodyStream for Pieces {
        fn next_chunk(&mut self) -> Exchange<'_, Option<Vec<u8>>> {
            let piece = self.0.pop_front();
            Box::pin(async move { Ok(piece) })
        }
    }

    /// A scrubber whose automaton could not be built lets no text through and sends nothing.
    #[test]
    fn an_unbuildable_scrubber_fails_closed() {
        let s = Scrubber {
            finder: Finder::Unbuildable,
            patterns: vec!["ghp_githubTokenValue0123".to_owned()].into(),
        };
        assert_eq!(s.text("token ghp_githubTokenValue0123 and more"), MARKER);
        let http = crate::ports::fake::ScriptedHttp::unreachable();
        let request = UpstreamRequest {
            method: "GET".into(),
            url: "https://api.github.com/x".into(),
            headers: Vec::new(),
            body: None,
            timeout_ms: 1000,
        };
        let opened = futures::executor::block_on(open(&http, request, &s));
        assert!(
            matches!(&opened, Err(TransportError::Network(d)) if d.contains("could not be cleaned")),
            "{:?}",
            opened.err()
        );
        assert!(http.sent().is_empty(), "nothing is sent");
    }

    #[test]
    fn a_secret_split_across_chunks_is_replaced() {
        let header = basic();
        let s = Scrubber::new(&settings(), [header.as_str()]);
        let body = format!("start {header} middle ATATT3xT?okenValue0123 end {PAIR}");
        let want = s.text(&body);
        assert_eq!(want, "start [redacted] middle [redacted] end [redacted]");
        for chunk in 1..=body.len() {
            assert_eq!(
                String::from_utf8(streamed(&s, body.as_bytes(), chunk)).unwrap(),
                want,
                "chunks of {chunk}"
            );
        }
        // Nothing to replace: the body passes as it came.
        assert_eq!(streamed(&s, b"plain", 2), b"plain");
    }

    #[test]
    fn only_an_end_that_could_begin_a_secret_is_held_back() {
        let s = Scrubber::new(&settings(), ["Bearer ghp_githubTokenValue0123"]);
        let first = |pieces: &[&str]| {
            let mut stream = ScrubbedBody {
                inner: Box::new(Pieces(
                    pieces.iter().map(|p| p.as_bytes().to_vec()).collect(),
                )),
                scrubber: s.clone(),
                held: Vec::new(),
                ended: false,
            };
            futures::executor::block_on(stream.next_chunk()).unwrap()
        };
        assert_eq!(
            first(&["{\"a\":1}", "rest"]).as_deref(),
            Some(&b"{\"a\":1}"[..])
        );
        assert_eq!(first(&["x Bear", "er y"]).as_deref(), Some(&b"x "[..]));
    }
}
