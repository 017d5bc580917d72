//! Uses its sibling `b` and the query module.
use super::b::Token;

/// Checks a token against a query.
pub fn check(token: &Token) -> bool {
    let _ = token;
    crate::query::run("a b") > 0
}
