//! Job logs made short: each line cleaned (timestamps, ANSI colour codes, carriage returns
//! removed), the log split into the job's steps, the tail of the failed steps, the `##[error]`
//! lines and grep matches with context, all computed as the bytes arrive, so memory stays bounded
//! whatever the log's size ([`excerpt::Excerpter`]).

pub mod download;
pub mod excerpt;
pub mod line;
pub mod pattern;

pub use excerpt::{Excerpt, Excerpter, Options, Step};
pub use pattern::Grep;
