//! The JavaScript semantics the reference servers' texts depend on, in one place: the order of an
//! object's keys, number printing and parsing, string whitespace, length, order and JSON
//! escaping, `localeCompare`, and `URLSearchParams` encoding.
//!
//! Nothing here knows the JSON value type: [`crate::value`], the renderers, the projections and
//! the upstream client build on these pieces, so the module sits below all of them.

pub(crate) mod collate;
pub mod form;
pub(crate) mod map;
pub(crate) mod number;
pub(crate) mod string;

pub use collate::locale_compare;
pub use map::{array_index_key, JsMap};
pub use number::{parse_int, string_to_number};
pub use string::{
    cmp_utf16, is_blank, is_js_whitespace, json_string_len, json_string_units, next_escape,
    trim_start, utf16_len, utf16_len_unescaped, write_json_chars, write_json_string,
};
