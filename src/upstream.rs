//! Requests to the vendor APIs: path validation and URL building.

pub mod link;
pub mod path;
