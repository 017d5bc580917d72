//! The tools: the registry and the [`Tool`] / [`TypedTool`] traits ([`registry`]), argument
//! validation ([`schema`]), the arguments declared once ([`args`]), the vendor tools (one module per family), `artifact_read`, the approval tools,
//! and [`output`], the path every tool's result takes (common arguments, projection, rendering,
//! truncation, the call's artifact). [`all`] builds the registry the server offers.

pub(crate) mod approvals;
pub mod args;
pub(crate) mod artifact_read;
pub(crate) mod atlassian;
pub(crate) mod ciloop;
pub(crate) mod circleci;
pub(crate) mod github;
pub(crate) mod logs;
pub(crate) mod output;
#[cfg(feature = "panic-probe")]
pub(crate) mod panic_probe;
pub(crate) mod registry;
pub mod schema;
pub(crate) mod toolsets;

use crate::upstream::{Flavor, Vendor};
pub use toolsets::{Selection, Toolset};

pub use registry::{
    Access, Prepared, Registry, RegistryError, Tool, ToolContext, ToolError, ToolSettings,
    ToolSpec, TypedTool,
};

/// The registry of a Cloud deployment: the vendor tools, `artifact_read` and the approval tools.
pub fn all() -> Result<Registry, RegistryError> {
    deployment(&|_| Flavor::Cloud)
}

/// The registry served in production, its Atlassian tools described for the API each vendor
/// speaks on this deployment (`flavor`).
pub fn deployment(flavor: &dyn Fn(Vendor) -> Flavor) -> Result<Registry, RegistryError> {
    let mut registry = Registry::new();
    let atlassian = atlassian::VENDORS.into_iter().flat_map(|vendor| {
        let toolset = match vendor {
            Vendor::Confluence => Toolset::Confluence,
            Vendor::Bitbucket => Toolset::Bitbucket,
            _ => Toolset::Jira,
        };
        atlassian::vendor_tools(vendor, flavor(vendor))
            .into_iter()
            .map(move |t| (toolset, t))
    });
    for (toolset, tool) in atlassian
        .chain(
            github::spec::tools()
                .into_iter()
                .map(|t| (Toolset::Github, t)),
        )
        .chain(
            circleci::tools()
                .into_iter()
                .map(|t| (Toolset::Circleci, t)),
        )
        .chain([
            (Toolset::Github, logs::github::tool()),
            (Toolset::Circleci, logs::circleci::tool()),
            (Toolset::Github, github::run::tool()),
        ])
        .chain(
            github::actions::tools()
                .into_iter()
                .map(|t| (Toolset::Github, t)),
        )
        .chain(
            circleci::workflow::tools()
                .into_iter()
                .map(|t| (Toolset::Circleci, t)),
        )
    {
        registry.register_in(Some(toolset), tool)?;
    }
    // Offered whatever MCP_STRUCTURED_OUTPUT says: truncated texts name artifacts either way.
    registry.register_in(
        Some(Toolset::Artifacts),
        Box::new(artifact_read::ArtifactRead::new()),
    )?;
    // On a connection that offers every tool they are listed even without a policy: such a list
    // hides nothing, and they say why they refuse.
    for tool in approvals::tools() {
        registry.register_in(Some(Toolset::Approvals), tool)?;
    }
    #[cfg(feature = "panic-probe")]
    registry.register(panic_probe::tool())?;
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tool keeps a title and all four behaviour hints, whichever connection lists it:
    /// read-only mode relies on `readOnlyHint`, and clients show the rest.
    #[test]
    fn every_tool_has_a_title_and_every_hint() {
        for name in all().unwrap().names() {
            let registry = all().unwrap();
            let d = &registry.get(name).unwrap().spec().descriptor;
            assert!(
                d.title.as_deref().is_some_and(|t| !t.is_empty()),
                "{name}: title"
            );
            let a = d
                .annotations
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: annotations"));
            for (hint, value) in [
                ("readOnlyHint", a.read_only_hint),
                ("destructiveHint", a.destructive_hint),
                ("idempotentHint", a.idempotent_hint),
                ("openWorldHint", a.open_world_hint),
            ] {
                assert!(value.is_some(), "{name}: {hint}");
            }
        }
    }

    /// A default lives in the schema's `default` keyword; the argument's description, sent to
    /// the model in every conversation, does not say it again.
    #[test]
    fn argument_descriptions_do_not_restate_their_defaults() {
        let registry = all().unwrap();
        for name in registry.names() {
            let schema = &registry.get(name).unwrap().spec().descriptor.input_schema;
            for (arg, property) in schema["properties"].as_object().unwrap() {
                let text = property["description"].as_str().unwrap_or_default();
                if property.get("default").is_some() {
                    assert!(!text.contains("default"), "{name}.{arg}: {text}");
                }
            }
        }
    }

    /// The list made of entries serialized once is the list serialized whole, for every kind of
    /// selection, with and without output schemas.
    #[test]
    fn entries_serialized_once_make_the_same_list() {
        let registry = all().unwrap();
        let selections = [
            Selection::ALL,
            Selection {
                toolsets: Some(vec![Toolset::Github, Toolset::Jira]),
                read_only: false,
            },
            Selection {
                toolsets: None,
                read_only: true,
            },
        ];
        for selection in &selections {
            for schemas in [false, true] {
                for policy in [false, true] {
                    let whole =
                        serde_json::to_string(&registry.descriptors(schemas, selection, policy))
                            .unwrap();
                    let pieces = registry.descriptors_json(schemas, selection, policy);
                    assert_eq!(pieces.as_deref(), Some(whole.as_str()), "{selection:?}");
                }
            }
        }
    }

    /// The catalog the end-to-end tests take their tool lists from (`tests/e2e/catalog.json`)
    /// is the registry's: each tool's name, toolset, read-only hint and whether it has an output
    /// schema, in registration order. `UPDATE_CATALOG=1` rewrites it after a tool is added.
    #[test]
    fn the_end_to_end_catalog_is_the_registrys() {
        let registry = all().unwrap();
        let mut text = String::from("[\n");
        for (i, name) in registry.names().into_iter().enumerate() {
            let (toolset, tool) = registry.entry(name).unwrap();
            let d = &tool.spec().descriptor;
            let entry = serde_json::json!({
                "name": name,
                "toolset": toolset.map(Toolset::name),
                "readOnly": toolsets::is_read_only(d),
                "outputSchema": d.output_schema.is_some(),
            });
            let comma = if i + 1 < registry.len() { "," } else { "" };
            text.push_str(&format!("  {entry}{comma}\n"));
        }
        text.push_str("]\n");
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/catalog.json");
        if std::env::var_os("UPDATE_CATALOG").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let stored = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            stored == text,
            "{path} is not the registry's catalog: run UPDATE_CATALOG=1 make test-host"
        );
    }

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
