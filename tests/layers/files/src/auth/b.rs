//! A token; its test may name the sibling `a` without that being a circle.

/// A token.
pub struct Token;

#[cfg(test)]
mod tests {
    #[test]
    fn checks() {
        assert!(crate::auth::a::check(&super::Token));
    }
}
