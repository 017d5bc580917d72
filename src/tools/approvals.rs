//! The approval tools of enterprise policy: `approval_list` (pending requests the caller may
//! decide) and `approval_decide` (approve or deny one). Their access class is
//! [`Access::Approvers`], so the server's gate admits only approvers; each request's own approver
//! list and the no-self-approval rule are checked here.

use crate::approvals::{self, ApprovalError, Approvals, Record};
use crate::mcp::CallToolResult;
use crate::mcp::{ToolAnnotations, ToolDescriptor};
use crate::ports::Level;
use crate::time::iso8601_utc_ms;
use crate::tools::registry::{Access, Tool, ToolContext, ToolError, ToolSpec, TypedTool};
use futures::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value as Json};

/// Name of the listing tool.
pub const APPROVAL_LIST: &str = "approval_list";
/// Name of the deciding tool.
pub const APPROVAL_DECIDE: &str = "approval_decide";

const NO_POLICY: &str = "This server runs without an enterprise policy (MCP_POLICY or \
MCP_POLICY_KV_KEY), so no call needs approval and there is nothing to list or decide.";

/// `approval_list`.
pub struct ApprovalList(ToolSpec);
/// `approval_decide`.
pub struct ApprovalDecide(ToolSpec);

/// Both tools, in listing order.
pub fn tools() -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(ApprovalList(ToolSpec {
            descriptor: ToolDescriptor {
                name: APPROVAL_LIST.into(),
                title: Some("List pending approvals".into()),
                description: "Lists the pending approval requests you may decide under this \
                server's enterprise policy: calls another principal made that a policy rule \
                marks approval_required, naming you (or a group of yours) as approver, oldest \
                first, as JSON {\"approvals\": [...]} (at most 50; \"omitted\" counts the rest). \
                Each entry gives the id (the approvalId to decide), the \
                requester, the tool and its exact arguments, \
                the upstream method and path, the rule and its reason, and when it expires. \
                Decide one with approval_decide. Only approvers may use this tool."
                    .into(),
                input_schema: json!({"type": "object", "properties": {}}),
                output_schema: None,
                annotations: Some(ToolAnnotations {
                    read_only_hint: Some(true),
                    destructive_hint: Some(false),
                    idempotent_hint: Some(true),
                    open_world_hint: Some(false),
                    ..ToolAnnotations::default()
                }),
            },
            access: Access::Approvers,
        })),
        Box::new(ApprovalDecide(ToolSpec {
            descriptor: ToolDescriptor {
                name: APPROVAL_DECIDE.into(),
                title: Some("Approve or deny a request".into()),
                description: "Approves or denies one pending approval request (its approvalId \
                from approval_list). Once approved, the requester's next identical call runs \
                once, before the request expires. You cannot decide your own requests, and a \
                request is decided only once. Only approvers named by the enterprise policy may \
                use this tool."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "approvalId": {"type": "string", "minLength": 1, "description": "The request's id (apr_...)."},
                        "approve": {"type": "boolean", "description": "true approves, false denies."},
                        "reason": {"type": "string", "description": "Why, recorded with the decision and shown to the requester."},
                    },
                    "required": ["approvalId", "approve"],
                }),
                output_schema: None,
                annotations: Some(ToolAnnotations {
                    read_only_hint: Some(false),
                    destructive_hint: Some(false),
                    idempotent_hint: Some(false),
                    open_world_hint: Some(false),
                    ..ToolAnnotations::default()
                }),
            },
            access: Access::Approvers,
        })),
    ]
}

fn entry(record: &Record) -> Json {
    json!({
        "id": record.id,
        "requester": record.requester,
        "tool": record.tool,
        "arguments": record.arguments,
        "method": record.method,
        "path": record.path,
        "rule": record.rule,
        "reason": record.reason,
        "createdAt": iso8601_utc_ms(record.created_at_ms),
        "expiresAt": record.expires_at(),
    })
}

fn store_failure(call: &ToolContext<'_>, error: ApprovalError) -> ToolError {
    if let ApprovalError::Store(detail) = &error {
        call.ports.log.event(
            Level::Error,
            "approval_store_failed",
            &[("detail", (&detail.0).into())],
        );
    }
    ToolError::Failed(error.to_string())
}

async fn list(call: ToolContext<'_>) -> Result<CallToolResult, ToolError> {
    if !call.settings.policy_configured {
        return Err(ToolError::Failed(NO_POLICY.into()));
    }
    let (pending, omitted) = Approvals::new(call.ports)
        .pending_for(call.principal)
        .await
        .map_err(|e| store_failure(&call, e))?;
    // Always the same JSON shape, empty list included, so a program can parse every answer.
    let entries: Vec<Json> = pending.iter().map(entry).collect();
    let mut answer = json!({ "approvals": entries });
    if omitted > 0 {
        answer["omitted"] = json!(omitted);
    }
    let text =
        serde_json::to_string_pretty(&answer).map_err(|e| ToolError::Internal(e.to_string()))?;
    Ok(CallToolResult::text(text))
}

/// `approval_list` takes no arguments.
#[derive(Debug, Deserialize)]
pub struct ListArgs {}

/// `approval_decide`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecideArgs {
    /// The request to decide.
    pub approval_id: String,
    /// True approves, false denies.
    pub approve: bool,
    /// Why, shown to the requester.
    pub reason: Option<String>,
}

async fn decide(args: DecideArgs, call: ToolContext<'_>) -> Result<CallToolResult, ToolError> {
    if !call.settings.policy_configured {
        return Err(ToolError::Failed(NO_POLICY.into()));
    }
    let me = call.principal.name();
    let reason = args
        .reason
        .map(|r| r.chars().take(500).collect::<String>())
        .filter(|r| !r.trim().is_empty());
    let record = Approvals::new(call.ports)
        .decide(
            args.approval_id.trim(),
            call.principal,
            args.approve,
            reason,
        )
        .await
        .map_err(|e| store_failure(&call, e))?;
    let action = if args.approve { "approved" } else { "denied" };
    approvals::log_event(call.ports, action, &record, me);
    let next = if args.approve {
        format!(
            "{} may now repeat the identical call once, until {}.",
            record.requester,
            record.expires_at()
        )
    } else {
        format!(
            "{}'s identical calls are refused until {}.",
            record.requester,
            record.expires_at()
        )
    };
    Ok(CallToolResult::text(format!(
        "Request {} ({} by {}) is {action}. {next}",
        record.id, record.tool, record.requester
    )))
}

impl TypedTool for ApprovalList {
    type Args = ListArgs;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn run<'a>(
        &'a self,
        _args: ListArgs,
        cx: ToolContext<'a>,
    ) -> LocalBoxFuture<'a, Result<CallToolResult, ToolError>> {
        Box::pin(list(cx))
    }
}

impl TypedTool for ApprovalDecide {
    type Args = DecideArgs;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn run<'a>(
        &'a self,
        args: DecideArgs,
        cx: ToolContext<'a>,
    ) -> LocalBoxFuture<'a, Result<CallToolResult, ToolError>> {
        Box::pin(decide(args, cx))
    }
}
