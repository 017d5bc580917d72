//! Which tools one connection is offered, chosen by the URL path (for clients that cannot set
//! headers) and by headers: `/mcp` (every tool), `/mcp/readonly`, `/mcp/x/github,jira`,
//! `/mcp/x/github,jira/readonly`; `X-MCP-Toolsets: github,jira`, `X-MCP-Readonly: true`. A header
//! narrows what the path chose, never widens it.

use super::MCP_PATH;
use crate::http::HttpRequest;
use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::tools::toolsets::{self, NotOffered, Selection, Toolset};
use serde_json::json;

/// Header naming the toolsets, comma-separated.
pub(crate) const TOOLSETS_HEADER: &str = "X-MCP-Toolsets";
/// Header asking for read-only tools only: `true` or `false` (also `1`, `0`).
pub(crate) const READONLY_HEADER: &str = "X-MCP-Readonly";

/// The path segment of read-only mode.
const READONLY: &str = "readonly";

/// Where a client chose the tools of a connection wrongly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chooser {
    /// The URL path (`/mcp/x/<toolsets>`).
    Path,
    /// The toolsets header.
    ToolsetsHeader,
    /// The read-only header.
    ReadonlyHeader,
    /// The path and the headers together leave no toolset.
    Together,
}

/// A selection that cannot be served: which choice is wrong, and a text saying how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadSelection {
    /// Which choice is wrong.
    pub(crate) chooser: Chooser,
    text: String,
}

impl std::fmt::Display for BadSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The refusal of `chooser`'s choice, saying `text`.
fn bad(chooser: Chooser, text: String) -> BadSelection {
    BadSelection { chooser, text }
}

/// What the path chose when it is an MCP endpoint (`None`: it is not one); an error when it
/// names toolsets wrongly.
pub(crate) fn endpoint(path: &str) -> Option<Result<Selection, BadSelection>> {
    let rest = path.strip_prefix(MCP_PATH)?;
    if rest.is_empty() {
        return Some(Ok(Selection::ALL));
    }
    if rest == "/readonly" {
        return Some(Ok(Selection {
            toolsets: None,
            read_only: true,
        }));
    }
    let list = rest.strip_prefix("/x/")?;
    let (list, read_only) = match list.strip_suffix(READONLY) {
        Some(list) if list.ends_with('/') => (&list[..list.len() - 1], true),
        _ => (list, false),
    };
    if list.contains('/') {
        return None;
    }
    // Some clients percent-encode the commas of a URL they were given.
    let list = list.replace("%2C", ",").replace("%2c", ",");
    let toolsets = toolsets::parse_list(&list)
        .map_err(|e| bad(Chooser::Path, format!("the URL path names an {e}")));
    Some(toolsets.map(|t| Selection {
        toolsets: Some(t),
        read_only,
    }))
}

/// The connection's selection: the path's, narrowed by the headers. An error names what is
/// wrong and how to choose.
pub(crate) fn selection(path: Selection, request: &HttpRequest) -> Result<Selection, BadSelection> {
    let toolsets = match request.header(TOOLSETS_HEADER).map(str::trim) {
        None => None,
        Some(list) => Some(toolsets::parse_list(list).map_err(|e| {
            bad(
                Chooser::ToolsetsHeader,
                format!("{TOOLSETS_HEADER} names an {e}"),
            )
        })?),
    };
    let read_only = match request.header(READONLY_HEADER).map(str::trim) {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("true") || v == "1" => true,
        Some(v) if v.eq_ignore_ascii_case("false") || v == "0" => false,
        Some(v) => {
            return Err(bad(
                Chooser::ReadonlyHeader,
                format!("{READONLY_HEADER} must be true or false, not {v:?}"),
            ))
        }
    };
    let narrowed = path.clone().and(Selection {
        toolsets,
        read_only,
    });
    if narrowed.toolsets.as_ref().is_some_and(Vec::is_empty) {
        return Err(bad(
            Chooser::Together,
            format!(
                "the URL path chooses {} and {TOOLSETS_HEADER} {}: together they leave no toolset",
                path.describe(),
                request.header(TOOLSETS_HEADER).unwrap_or_default().trim()
            ),
        ));
    }
    Ok(narrowed)
}

/// The 400 body's error for a selection that cannot be served.
pub(crate) fn invalid(reason: &BadSelection) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::SERVER_ERROR,
        format!(
            "Bad Request: {reason}. Choose tools with the URL path /mcp/x/<toolsets>[/readonly] \
             or /mcp/readonly, or with the headers {TOOLSETS_HEADER} and {READONLY_HEADER}."
        ),
    )
    .with_data(json!({
        "toolsets": Toolset::SELECTABLE.map(Toolset::name),
    }))
}

/// The -32602 a `tools/call` gets for a tool the connection does not offer.
pub(crate) fn not_offered(name: &str, why: NotOffered, selection: &Selection) -> ErrorObject {
    let reason = match why {
        NotOffered::ReadOnly => {
            "it can change data, and this connection is read-only (/mcp/readonly, \
             X-MCP-Readonly)"
                .to_owned()
        }
        NotOffered::Toolset(Some(Toolset::Approvals)) => {
            "the approval tools come with a chosen toolset only under an enterprise policy"
                .to_owned()
        }
        NotOffered::Toolset(Some(t)) => format!(
            "it belongs to toolset {t}; connect to /mcp/x/{t} or add {t} to {TOOLSETS_HEADER} to \
             use it"
        ),
        NotOffered::Toolset(None) => "it belongs to no toolset".to_owned(),
    };
    let toolset = match why {
        NotOffered::Toolset(t) => t.map(Toolset::name),
        NotOffered::ReadOnly => None,
    };
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!(
        "Tool {name} is not offered on this connection ({}): {reason}.",
        selection.describe()
    ))
    .with_data(json!({
        "tool": name,
        "toolset": toolset,
        "connection": {
            "toolsets": selection.toolsets.as_ref().map(|t| t.iter().map(|t| t.name()).collect::<Vec<_>>()),
            "readOnly": selection.read_only,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> HttpRequest {
        HttpRequest {
            method: "POST".into(),
            path: MCP_PATH.into(),
            query: String::new(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
            body: Vec::new(),
            body_too_large: false,
        }
    }

    fn chosen(list: &[Toolset], read_only: bool) -> Selection {
        Selection {
            toolsets: Some(list.to_vec()),
            read_only,
        }
    }

    #[test]
    fn paths_choose_toolsets_and_read_only() {
        use Toolset::*;
        assert_eq!(endpoint("/mcp"), Some(Ok(Selection::ALL)));
        assert_eq!(
            endpoint("/mcp/readonly"),
            Some(Ok(Selection {
                toolsets: None,
                read_only: true
            }))
        );
        assert_eq!(
            endpoint("/mcp/x/github,jira"),
            Some(Ok(chosen(&[Github, Jira], false)))
        );
        assert_eq!(
            endpoint("/mcp/x/github%2Cjira/readonly"),
            Some(Ok(chosen(&[Github, Jira], true)))
        );
        for other in [
            "/mc",
            "/mcp/",
            "/mcpx",
            "/mcp/x/github/extra",
            "/mcp/other",
            "/",
        ] {
            assert_eq!(endpoint(other), None, "{other}");
        }
    }

    #[test]
    fn unknown_or_missing_toolsets_in_the_path_are_errors() {
        let err = endpoint("/mcp/x/github,gitlab")
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"gitlab\""), "{err}");
        assert!(endpoint("/mcp/x/").unwrap().is_err());
        assert!(endpoint("/mcp/x//readonly").unwrap().is_err());
    }

    #[test]
    fn headers_choose_and_narrow() {
        use Toolset::*;
        let r = request(&[
            ("x-mcp-toolsets", "circleci, github"),
            ("X-MCP-Readonly", "TRUE"),
        ]);
        assert_eq!(
            selection(Selection::ALL, &r),
            Ok(chosen(&[Circleci, Github], true))
        );
        assert_eq!(
            selection(chosen(&[Github, Jira], false), &r),
            Ok(chosen(&[Github], true))
        );
        let r = request(&[("X-MCP-Readonly", "0")]);
        assert_eq!(
            selection(chosen(&[Jira], true), &r),
            Ok(chosen(&[Jira], true)),
            "a header cannot undo the path's read-only"
        );
        assert_eq!(selection(Selection::ALL, &request(&[])), Ok(Selection::ALL));
    }

    #[test]
    fn bad_headers_and_disjoint_choices_are_errors() {
        let err = selection(Selection::ALL, &request(&[("X-MCP-Toolsets", "jira,nope")]));
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("X-MCP-Toolsets names an unknown toolset \"nope\""));
        let err = selection(
            Selection::ALL,
            &request(&[("X-MCP-Readonly", "yes please")]),
        );
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("must be true or false"));
        let err = selection(
            chosen(&[Toolset::Github], false),
            &request(&[("X-MCP-Toolsets", "jira")]),
        )
        .unwrap_err();
        assert_eq!(err.chooser, Chooser::Together);
        assert!(
            err.to_string().contains("together they leave no toolset"),
            "{err}"
        );
    }

    #[test]
    fn refusals_say_how_to_get_the_tool() {
        let s = chosen(&[Toolset::Github], false);
        let e = not_offered("jira_get", NotOffered::Toolset(Some(Toolset::Jira)), &s);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("(toolsets github)"), "{}", e.message);
        assert!(
            e.message.contains("connect to /mcp/x/jira"),
            "{}",
            e.message
        );
        let data = e.data.unwrap();
        assert_eq!(data["toolset"], "jira");
        assert_eq!(data["connection"]["toolsets"], json!(["github"]));
        let e = not_offered(
            "jira_post",
            NotOffered::ReadOnly,
            &Selection {
                toolsets: None,
                read_only: true,
            },
        );
        assert!(e.message.contains("read-only"), "{}", e.message);
    }
}
