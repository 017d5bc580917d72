//! `Link` response headers (RFC 8288), read for paging: the `page` query parameter of the
//! `rel="next"` target, as GitHub sends it.
//!
//! The parser is tolerant on purpose: a malformed link-value is skipped, never an error, because
//! a missing next page only ends paging early while a failed call would lose the data.

use crate::ports::Headers;

/// The page number of the `rel="next"` link across every `Link` header in `headers`, or `None`
/// when there is none (the last page) or its target has no usable `page` parameter.
pub(crate) fn next_page(headers: &Headers) -> Option<u64> {
    headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("link"))
        .find_map(|(_, value)| next_page_in(value))
}

/// The page number of the first `rel="next"` link-value in one `Link` header value.
pub(crate) fn next_page_in(value: &str) -> Option<u64> {
    links(value)
        .into_iter()
        .find(|link| link.rels.iter().any(|r| r.eq_ignore_ascii_case("next")))
        .and_then(|link| page_param(link.target))
}

/// One link-value: its target and its relation types.
#[derive(Debug, PartialEq, Eq)]
struct Link<'a> {
    target: &'a str,
    rels: Vec<String>,
}

/// Splits a header value into link-values. A value whose `<` has no matching `>` ends parsing;
/// anything between link-values that is not a link is skipped up to the next top-level comma.
fn links(value: &str) -> Vec<Link<'_>> {
    let mut out = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        if rest.is_empty() {
            return out;
        }
        let Some(after_open) = rest.strip_prefix('<') else {
            rest = skip_to_comma(rest);
            continue;
        };
        let Some((target, after_target)) = after_open.split_once('>') else {
            return out;
        };
        let (params, remaining) = split_params(after_target);
        rest = remaining;
        let mut rels = Vec::new();
        for (name, value) in params {
            // RFC 8288 3.3: only the first rel parameter counts.
            if name.eq_ignore_ascii_case("rel") && rels.is_empty() {
                rels = value.split_whitespace().map(str::to_owned).collect();
            }
        }
        out.push(Link {
            target: target.trim(),
            rels,
        });
    }
}

/// Everything after the next comma outside a quoted string.
fn skip_to_comma(s: &str) -> &str {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => return &s[i + 1..],
            _ => {}
        }
    }
    ""
}

/// Reads `; name=value` parameters up to the top-level comma that ends the link-value; returns
/// them (names trimmed, values unquoted) and the text after that comma.
fn split_params(s: &str) -> (Vec<(String, String)>, &str) {
    let mut params = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        match rest.chars().next() {
            None => return (params, ""),
            Some(',') => return (params, &rest[1..]),
            Some(';') => rest = rest[1..].trim_start(),
            // Junk after the target: drop it up to the next link-value.
            Some(_) => return (params, skip_to_comma(rest)),
        }
        let name_end = rest.find(['=', ';', ',']).unwrap_or(rest.len());
        let name = rest[..name_end].trim().to_owned();
        rest = &rest[name_end..];
        let value = match rest.strip_prefix('=') {
            Some(after_eq) => {
                let after_eq = after_eq.trim_start();
                if let Some(quoted) = after_eq.strip_prefix('"') {
                    let (value, after) = unquote(quoted);
                    rest = after;
                    value
                } else {
                    let end = after_eq.find([';', ',']).unwrap_or(after_eq.len());
                    rest = &after_eq[end..];
                    after_eq[..end].trim().to_owned()
                }
            }
            None => String::new(),
        };
        if !name.is_empty() {
            params.push((name, value));
        }
    }
}

/// Reads a quoted-string body (after the opening quote) with backslash escapes; an unterminated
/// string runs to the end of the input.
fn unquote(s: &str) -> (String, &str) {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &s[i + 1..]),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            c => value.push(c),
        }
    }
    (value, "")
}

/// The `page` query parameter of `target` as an integer >= 1.
fn page_param(target: &str) -> Option<u64> {
    let query = target.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "page")
        .and_then(|(_, value)| {
            let value = value.trim();
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            value.parse::<u64>().ok().filter(|&n| n >= 1)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITHUB_MIDDLE: &str = "<https://api.github.com/repositories/1/actions/runs?per_page=30&page=1>; rel=\"prev\", <https://api.github.com/repositories/1/actions/runs?per_page=30&page=3>; rel=\"next\", <https://api.github.com/repositories/1/actions/runs?per_page=30&page=9>; rel=\"last\", <https://api.github.com/repositories/1/actions/runs?per_page=30&page=1>; rel=\"first\"";

    #[test]
    fn reads_next_page_from_github_headers() {
        let cases: &[(&str, Option<u64>)] = &[
            (GITHUB_MIDDLE, Some(3)),
            // First page: next and last only.
            (
                "<https://api.github.com/x?page=2>; rel=\"next\", <https://api.github.com/x?page=5>; rel=\"last\"",
                Some(2),
            ),
            // Last page: no next.
            (
                "<https://api.github.com/x?page=4>; rel=\"prev\", <https://api.github.com/x?page=1>; rel=\"first\"",
                None,
            ),
            ("", None),
        ];
        for (value, want) in cases {
            assert_eq!(next_page_in(value), *want, "{value}");
        }
    }

    #[test]
    fn tolerates_spacing_quoting_case_and_several_rels() {
        let cases: &[(&str, Option<u64>)] = &[
            ("<https://h/x?page=7>;rel=next", Some(7)),
            ("  <https://h/x?page=7>  ;  rel = \"next\"  ", Some(7)),
            ("<https://h/x?page=7>; REL=\"Next\"", Some(7)),
            ("<https://h/x?page=7>; rel=\"prev next\"", Some(7)),
            (
                "<https://h/x?page=7>; title=\"a, b; rel=next\"; rel=\"last\"",
                None,
            ),
            (
                "<https://h/x?page=7>; title=\"a \\\"q\\\" rel\"; rel=next",
                Some(7),
            ),
            ("<https://h/x?a=1,2&page=8>; rel=\"next\"", Some(8)),
            ("<https://h/x?page=8#frag>; rel=\"next\"", Some(8)),
            (
                "<https://h/x?page=2>; rel=\"prev\",,, <https://h/x?page=4>; rel=\"next\"",
                Some(4),
            ),
            // Only the first rel parameter counts (RFC 8288 3.3).
            ("<https://h/x?page=3>; rel=\"last\"; rel=\"next\"", None),
            ("<https://h/x?page=3>; anchor=\"#a\"; rel=\"next\"", Some(3)),
        ];
        for (value, want) in cases {
            assert_eq!(next_page_in(value), *want, "{value}");
        }
    }

    #[test]
    fn malformed_input_gives_no_page_rather_than_a_wrong_one() {
        let cases: &[(&str, Option<u64>)] = &[
            ("https://h/x?page=2; rel=next", None),
            ("<https://h/x?page=2; rel=next", None),
            ("<https://h/x?page=0>; rel=next", None),
            ("<https://h/x?page=-1>; rel=next", None),
            ("<https://h/x?page=two>; rel=next", None),
            ("<https://h/x?page=>; rel=next", None),
            ("<https://h/x?pages=2>; rel=next", None),
            ("<https://h/x>; rel=next", None),
            ("<https://h/x?page=99999999999999999999999>; rel=next", None),
            ("<https://h/x?page=2>; rel", None),
            ("<https://h/x?page=2>; rel=\"next", Some(2)),
            ("garbage, <https://h/x?page=6>; rel=next", Some(6)),
            (
                "garbage \"with, comma\" <https://h/x?page=1>; rel=prev",
                None,
            ),
            ("<>; rel=next", None),
            (";;;,,,<<>>", None),
            (
                "<https://h/x?page=2>junk; rel=next, <https://h/x?page=3>; rel=next",
                Some(3),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(next_page_in(value), *want, "{value:?}");
        }
    }

    #[test]
    fn looks_at_every_link_header_case_insensitively() {
        let headers: Headers = vec![
            ("Content-Type".into(), "application/json".into()),
            ("link".into(), "<https://h/x?page=1>; rel=\"prev\"".into()),
            ("LINK".into(), "<https://h/x?page=3>; rel=\"next\"".into()),
        ];
        assert_eq!(next_page(&headers), Some(3));
        assert_eq!(next_page(&Vec::new()), None);
    }
}
