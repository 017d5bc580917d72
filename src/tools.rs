//! The tools: the registry and the [`Tool`] trait ([`registry`]), argument validation
//! ([`schema`]), the vendor tools (one module per family), `artifact_read`, the approval tools,
//! and [`output`], the path every tool's result takes (common arguments, projection, rendering,
//! truncation, the call's artifact). [`all`] builds the registry the server offers.

pub mod approvals;
pub mod artifact_read;
pub mod atlassian;
pub mod circleci;
pub mod github;
pub mod output;
pub mod registry;
pub mod schema;

pub use registry::{
    Access, Registry, RegistryError, Tool, ToolCall, ToolError, ToolSettings, ToolSpec,
};

/// The registry served in production: the vendor tools, `artifact_read` and the approval tools.
pub fn all() -> Result<Registry, RegistryError> {
    let mut registry = Registry::new();
    for tool in atlassian::tools() {
        registry.register(Box::new(tool))?;
    }
    for tool in github::tools().into_iter().chain(circleci::tools()) {
        registry.register(tool)?;
    }
    // Offered whatever MCP_STRUCTURED_OUTPUT says: truncated texts name artifacts either way.
    registry.register(Box::new(artifact_read::ArtifactRead::new()))?;
    // Listed even without a policy: tools/list hides nothing, and they say why they refuse.
    for tool in approvals::tools() {
        registry.register(tool)?;
    }
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_unique_and_valid() {
        let registry = all().expect("the production registry must build");
        let mut names = registry.names();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            count,
            "duplicate tool names: {:?}",
            registry.names()
        );
    }
}
