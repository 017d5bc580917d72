//! Bottom layer. Nothing below is an import of `server` or `service`:
//! crate::server::handle is named in this comment only.
/* A block comment /* nested */ crate::server::handle */

pub mod cache;
pub mod server;

/// A doc comment linking [crate::service::Service] is not an import.
#[derive(Default)]
pub struct Store;

/// Strings and chars that look like code.
pub fn texts<'a>(x: &'a str) -> (&'a str, char, &'static str, &'static str, &'static [u8]) {
    let quote = '"';
    let plain = "crate::server::handle \" still in the string";
    let raw = r#"a " crate::service::answer " b"#;
    let bytes = b"crate::server";
    let _ = ('\'', '\\', '\u{7f}', b'"');
    (x, quote, plain, raw, bytes)
}

#[cfg(test)]
use crate::service::Service;

#[cfg(test)]
mod tests {
    use crate::server::handle;

    #[test]
    fn a_test_may_use_any_layer() {
        let _ = handle(&super::Service(super::Store));
    }
}
