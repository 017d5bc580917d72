//! Top layer.
mod routes;

pub use routes::handle;
