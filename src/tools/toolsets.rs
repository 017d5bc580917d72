//! Toolsets: the groups a connection can choose its tools by, and a connection's [`Selection`]
//! (which toolsets, and whether only read-only tools). A client that needs GitHub Actions only
//! should not pay, in every conversation, for the definitions of fifteen Atlassian tools.

use crate::mcp::ToolDescriptor;
use std::fmt;

/// The group a tool belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Toolset {
    /// GitHub Actions: runs, jobs, job logs.
    Github,
    /// CircleCI: the API passthrough, job logs, and a workflow read and re-run.
    Circleci,
    /// Jira passthrough.
    Jira,
    /// Confluence passthrough.
    Confluence,
    /// Bitbucket passthrough.
    Bitbucket,
    /// `artifact_read`: offered with any vendor toolset, whose truncated results name artifacts.
    Artifacts,
    /// The approval tools: offered with any vendor toolset when an enterprise policy is
    /// configured (without one they have nothing to decide).
    Approvals,
}

impl Toolset {
    /// The toolsets a connection may name, in the order they are listed in messages.
    pub(crate) const SELECTABLE: [Toolset; 5] = [
        Toolset::Github,
        Toolset::Circleci,
        Toolset::Jira,
        Toolset::Confluence,
        Toolset::Bitbucket,
    ];

    /// The name used in URL paths, headers and messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Toolset::Github => "github",
            Toolset::Circleci => "circleci",
            Toolset::Jira => "jira",
            Toolset::Confluence => "confluence",
            Toolset::Bitbucket => "bitbucket",
            Toolset::Artifacts => "artifacts",
            Toolset::Approvals => "approvals",
        }
    }

    /// The selectable toolset called `name` (ASCII case-insensitive).
    pub fn parse(name: &str) -> Option<Toolset> {
        Toolset::SELECTABLE
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The selectable names, comma-separated, for messages.
    pub(crate) fn selectable_names() -> String {
        Toolset::SELECTABLE.map(Toolset::name).join(", ")
    }
}

impl fmt::Display for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads a comma-separated list of toolset names (`github,jira`; spaces around names are
/// ignored, a repeated name counts once). Unknown or empty names are an error naming them and the
/// choices.
pub(crate) fn parse_list(list: &str) -> Result<Vec<Toolset>, UnknownToolsets> {
    let mut chosen = Vec::new();
    let mut unknown = Vec::new();
    for name in list.split(',').map(str::trim) {
        match Toolset::parse(name) {
            Some(t) if !chosen.contains(&t) => chosen.push(t),
            Some(_) => {}
            None => unknown.push(name.to_owned()),
        }
    }
    if unknown.is_empty() {
        Ok(chosen)
    } else {
        Err(UnknownToolsets(unknown))
    }
}

/// The names in a toolset list that name no toolset, as given; its `Display` names them and
/// the choices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnknownToolsets(pub Vec<String>);

impl fmt::Display for UnknownToolsets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown toolset ")?;
        for (i, name) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name:?}")?;
        }
        write!(
            f,
            ": choose one or more of {} (comma-separated)",
            Toolset::selectable_names()
        )
    }
}

impl std::error::Error for UnknownToolsets {}

/// What one connection is offered: every tool (the default), or only the chosen toolsets, and
/// optionally only the tools that change nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The chosen toolsets; `None` offers every tool.
    pub(crate) toolsets: Option<Vec<Toolset>>,
    /// Only tools annotated `readOnlyHint: true`.
    pub(crate) read_only: bool,
}

/// Why a tool is not offered on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotOffered {
    /// It belongs to a toolset the connection did not choose (`None`: to none).
    Toolset(Option<Toolset>),
    /// It may change data and the connection is read-only.
    ReadOnly,
}

impl Selection {
    /// Every tool: what a plain `/mcp` connection gets.
    pub const ALL: Selection = Selection {
        toolsets: None,
        read_only: false,
    };

    /// Both choices at once: the toolsets both name (either alone when the other names none)
    /// and read-only when either is. A header can narrow what a URL chose, never widen it.
    pub(crate) fn and(self, other: Selection) -> Selection {
        let toolsets = match (self.toolsets, other.toolsets) {
            (Some(a), Some(b)) => Some(a.into_iter().filter(|t| b.contains(t)).collect()),
            (a, b) => a.or(b),
        };
        Selection {
            toolsets,
            read_only: self.read_only || other.read_only,
        }
    }

    /// Whether a tool of `toolset` listed as `descriptor` is offered; `policy` says whether an
    /// enterprise policy is configured (the approval tools come with a vendor toolset only then).
    pub(crate) fn offers(
        &self,
        toolset: Option<Toolset>,
        descriptor: &ToolDescriptor,
        policy: bool,
    ) -> Result<(), NotOffered> {
        if self.read_only && !is_read_only(descriptor) {
            return Err(NotOffered::ReadOnly);
        }
        let Some(chosen) = &self.toolsets else {
            return Ok(());
        };
        let offered = match toolset {
            Some(Toolset::Artifacts) => !chosen.is_empty(),
            Some(Toolset::Approvals) => policy && !chosen.is_empty(),
            Some(t) => chosen.contains(&t),
            None => false,
        };
        if offered {
            Ok(())
        } else {
            Err(NotOffered::Toolset(toolset))
        }
    }

    /// How the selection reads in a message: `toolsets github, jira, read-only`.
    pub(crate) fn describe(&self) -> String {
        let mut text = match &self.toolsets {
            None => "every toolset".to_owned(),
            Some(t) if t.is_empty() => "no toolset".to_owned(),
            Some(t) => format!(
                "toolsets {}",
                t.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
            ),
        };
        if self.read_only {
            text.push_str(", read-only");
        }
        text
    }
}

/// True when the tool is annotated as changing nothing; a tool without the annotation counts as
/// one that may.
pub(crate) fn is_read_only(descriptor: &ToolDescriptor) -> bool {
    descriptor
        .annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::ToolAnnotations;
    use serde_json::json;

    fn spec(read_only: Option<bool>) -> ToolDescriptor {
        ToolDescriptor {
            name: "t".into(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: read_only.map(|r| ToolAnnotations {
                read_only_hint: Some(r),
                ..ToolAnnotations::default()
            }),
        }
    }

    fn chosen(list: &str, read_only: bool) -> Selection {
        Selection {
            toolsets: Some(parse_list(list).unwrap()),
            read_only,
        }
    }

    #[test]
    fn lists_parse_case_insensitively_once_each() {
        assert_eq!(
            parse_list(" GitHub , jira,github").unwrap(),
            [Toolset::Github, Toolset::Jira]
        );
        let err = parse_list("github,gitlab,").unwrap_err().to_string();
        assert!(err.contains("\"gitlab\", \"\""), "{err}");
        assert!(
            err.contains("github, circleci, jira, confluence, bitbucket"),
            "{err}"
        );
        // The companion toolsets are not chosen by name.
        assert!(parse_list("artifacts").is_err());
        assert!(parse_list("approvals").is_err());
    }

    #[test]
    fn every_tool_is_offered_by_default() {
        for toolset in [None, Some(Toolset::Approvals), Some(Toolset::Jira)] {
            assert_eq!(Selection::ALL.offers(toolset, &spec(None), false), Ok(()));
        }
    }

    #[test]
    fn a_selection_offers_its_toolsets_and_the_companions_that_apply() {
        let s = chosen("github", false);
        let read = spec(Some(true));
        assert_eq!(s.offers(Some(Toolset::Github), &read, false), Ok(()));
        assert_eq!(
            s.offers(Some(Toolset::Jira), &read, false),
            Err(NotOffered::Toolset(Some(Toolset::Jira)))
        );
        assert_eq!(s.offers(Some(Toolset::Artifacts), &read, false), Ok(()));
        assert!(s.offers(Some(Toolset::Approvals), &read, false).is_err());
        assert_eq!(s.offers(Some(Toolset::Approvals), &read, true), Ok(()));
        assert!(s.offers(None, &read, true).is_err());
    }

    #[test]
    fn read_only_keeps_only_tools_annotated_read_only() {
        let s = Selection {
            toolsets: None,
            read_only: true,
        };
        assert_eq!(
            s.offers(Some(Toolset::Jira), &spec(Some(true)), false),
            Ok(())
        );
        for hint in [Some(false), None] {
            assert_eq!(
                s.offers(Some(Toolset::Jira), &spec(hint), false),
                Err(NotOffered::ReadOnly)
            );
        }
    }

    #[test]
    fn a_header_narrows_a_path_never_widens_it() {
        let both = chosen("github,jira", false).and(chosen("jira,bitbucket", true));
        assert_eq!(both, chosen("jira", true));
        assert_eq!(
            Selection::ALL.and(chosen("github", false)),
            chosen("github", false)
        );
        assert_eq!(
            chosen("github", true).and(Selection::ALL),
            chosen("github", true)
        );
        assert_eq!(both.describe(), "toolsets jira, read-only");
        // Disjoint choices leave nothing but an empty list, which offers no tool at all.
        let none = chosen("github", false).and(chosen("jira", false));
        assert_eq!(none.describe(), "no toolset");
        assert!(none
            .offers(Some(Toolset::Artifacts), &spec(Some(true)), true)
            .is_err());
    }
}
