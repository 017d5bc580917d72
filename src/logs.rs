//! Job logs made short: each line cleaned (timestamps, ANSI colour codes, carriage returns
//! removed), the log split into the job's steps, the tail of the failed steps, the `##[error]`
//! lines and grep matches with context, all computed as the bytes arrive, so memory stays bounded
//! whatever the log's size ([`excerpt::Excerpter`]).

pub(crate) mod excerpt;
pub(crate) mod line;
pub(crate) mod pattern;

pub(crate) use excerpt::Excerpter;
pub(crate) use pattern::Grep;
