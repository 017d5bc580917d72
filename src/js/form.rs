//! `URLSearchParams` serialisation: `new URLSearchParams(pairs).toString()`, the
//! `application/x-www-form-urlencoded` form the reference servers append to upstream URLs.

/// The pairs form-encoded and joined with `&`, byte for byte as `URLSearchParams` writes them:
/// alphanumerics and `*-._` kept, space as `+`, every other byte of the UTF-8 percent-encoded.
pub fn encode(params: &[(String, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn encodes_as_url_search_params() {
        for (list, want) in [
            (&[][..], ""),
            (&[("jql", "project = X")][..], "jql=project+%3D+X"),
            (
                &[("a b", "~()!'*-._"), ("", "")][..],
                "a+b=%7E%28%29%21%27*-._&=",
            ),
            (
                &[("q", "é😀&=+/?#%")][..],
                "q=%C3%A9%F0%9F%98%80%26%3D%2B%2F%3F%23%25",
            ),
            (&[("n", "\u{0}\t\n")][..], "n=%00%09%0A"),
        ] {
            assert_eq!(encode(&pairs(list)), want);
        }
    }
}
