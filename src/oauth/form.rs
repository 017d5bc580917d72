//! `application/x-www-form-urlencoded` parameters (query strings and form bodies), read once and
//! refused when a parameter repeats (RFC 6749 section 3.1), and HTML escaping for the pages.

use super::error::OAuthError;

/// The most parameters read from one query or body; more is a malformed request.
const MAX_PARAMS: usize = 64;

/// Decoded parameters, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params(Vec<(String, String)>);

impl Params {
    /// Parses `text`; `+` is a space and `%XX` a byte, invalid escapes and UTF-8 kept as
    /// replacement characters (they then fail whatever check the value meets).
    pub fn parse(text: &str) -> Result<Params, OAuthError> {
        let mut params = Vec::new();
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            if params.len() == MAX_PARAMS {
                return Err(OAuthError::invalid_request(format!(
                    "more than {MAX_PARAMS} parameters"
                )));
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.push((decode(k), decode(v)));
        }
        Ok(Params(params))
    }

    /// The value of `name`, if present once; a repeated parameter is an error.
    pub fn get(&self, name: &str) -> Result<Option<&str>, OAuthError> {
        let mut found = self.0.iter().filter(|(k, _)| k == name);
        let first = found.next().map(|(_, v)| v.as_str());
        if found.next().is_some() {
            return Err(OAuthError::invalid_request(format!(
                "parameter {name} is repeated"
            )));
        }
        Ok(first.filter(|v| !v.is_empty()))
    }

    /// The value of `name`, which must be present once.
    pub(crate) fn required(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name)?
            .ok_or_else(|| OAuthError::invalid_request(format!("parameter {name} is required")))
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// `text` safe inside HTML text and double-quoted attributes.
pub(crate) fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_refuses_repeats() {
        let p = Params::parse("a=1+2%2B3&b=%E2%9C%93&c=%zz&d=%4&e=").unwrap();
        assert_eq!(p.get("a").unwrap(), Some("1 2+3"));
        assert_eq!(p.get("b").unwrap(), Some("✓"));
        assert_eq!(p.get("c").unwrap(), Some("%zz"));
        assert_eq!(p.get("d").unwrap(), Some("%4"));
        assert_eq!(p.get("e").unwrap(), None);
        assert_eq!(p.required("e").unwrap_err().code, "invalid_request");
        let twice = Params::parse("x=1&x=2").unwrap();
        assert_eq!(twice.get("x").unwrap_err().code, "invalid_request");
        assert!(Params::parse(&"a=1&".repeat(65)).is_err());
    }

    #[test]
    fn escapes_html() {
        assert_eq!(
            html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
