//! The MCP gate of enterprise policy: loading the document (a setting, or a KV key read at every
//! call), the gate a `tools/call` passes before its tool runs (decided on the tool's access
//! class, the policy's rules and approvals, and the identity chosen), the refusal results with
//! their `_meta`, the restriction notes `tools/list` adds, and one log line per decision. The
//! decisions themselves are the policy module's.

use crate::approvals::{
    self, arguments_hash, ApprovalError, Approvals, Details, Entry, Record, Status,
};
use crate::auth::Principal;
use crate::ledger::{CallOutcome, Refusal};
use crate::mcp::{CallToolResult, ToolDescriptor};
use crate::policy::{
    Decision, Effect, IdentityRef, Policy, PolicyError, PolicySettings, Restriction,
};
use crate::ports::{CacheStore, Clock, Field, Level, Log, Ports, Settings};
use crate::tools::approvals::APPROVAL_DECIDE;
use crate::tools::registry::{Access, Registry, ToolError, ToolSpec};
use crate::upstream::{Acting, Admit, MemberRefusal, Target, Targets, Vendor};
use serde_json::{json, Map, Value as Json};
use std::fmt;

/// Result `_meta` key naming the upstream identity that acted.
pub(crate) const UPSTREAM_META: &str = "mcp-devtools/upstream";
/// Refusal code: denied.
pub(crate) const CODE_DENIED: &str = "policy_denied";
/// Refusal code: approval required.
pub(crate) const CODE_APPROVAL: &str = "approval_required";
/// Refusal code: approval is required, and no request can be recorded now because a bound of
/// the approval ledger is reached (`_meta.limit` says which); the call may succeed later.
pub(crate) const CODE_APPROVAL_LIMIT: &str = "approval_limit";
/// Refusal code: the rule acts as the signed-in person, who has no usable token of their own.
pub(crate) const CODE_SIGN_IN: &str = "sign_in_required";

/// The policy in force for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Loaded {
    /// No policy configured: everything is allowed with the default credentials.
    Off,
    /// A valid policy.
    Active(Policy),
    /// A policy that cannot be used; every call is refused with its text.
    Broken(Broken),
}

/// A policy that cannot be used: where it was read from, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Broken {
    /// `None` for the `MCP_POLICY` setting, else the KV key in `POLICY`.
    pub(crate) kv_key: Option<String>,
    /// Why.
    pub(crate) error: PolicyError,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kv_key {
            None => f.write_str("the enterprise policy (MCP_POLICY)")?,
            Some(key) => write!(f, "the enterprise policy (KV key {key:?} in POLICY)")?,
        }
        match &self.error {
            PolicyError::Missing => f.write_str(" is missing"),
            PolicyError::Unreadable(detail) => write!(f, " could not be read: {detail}"),
            error => write!(f, " is invalid: {error}"),
        }
    }
}

/// Reads and validates the policy, a KV-held one from `state`; its identities' secrets come
/// from `secrets`.
pub(crate) async fn load(
    settings: &PolicySettings,
    state: &dyn CacheStore,
    secrets: &dyn Settings,
) -> Loaded {
    let setting = |name: &str| secrets.get(name);
    let stored;
    let text = match (&settings.document, &settings.kv_key) {
        (Some(text), _) => Ok(text.as_str()),
        (None, None) => return Loaded::Off,
        (None, Some(key)) => match state.get(key).await {
            Ok(Some(entry)) => {
                stored = entry.value;
                std::str::from_utf8(&stored).map_err(|_| PolicyError::NotText)
            }
            Ok(None) => Err(PolicyError::Missing),
            Err(error) => Err(PolicyError::Unreadable(error.0)),
        },
    };
    match text.and_then(|text| Policy::parse(text, &setting)) {
        Ok(policy) => Loaded::Active(policy),
        Err(error) => Loaded::Broken(Broken {
            kv_key: settings
                .document
                .is_none()
                .then(|| settings.kv_key.clone())
                .flatten(),
            error,
        }),
    }
}

/// What the gate lets happen to a call.
#[derive(Debug)]
pub(crate) enum Gate {
    /// No policy: the call runs as it always did.
    Off,
    /// The call is refused with this result.
    Refuse(CallToolResult),
    /// The call runs as the identity the decision named for its targets' vendor, if any, which
    /// the upstream client resolves to its credential and `_meta["mcp-devtools/upstream"]`
    /// reports.
    Run {
        /// The identity the call acts as, when the decision named one.
        acting: Option<Acting>,
        /// How the requests the call learns as it runs are decided, when its plan declared any.
        members: Option<Box<Members>>,
    },
}

/// The policy's decision on each request a call learns as it runs (a member of a family its
/// plan declared): it goes out only when its own target is decided no stricter than the call
/// was (allowed, or approval required when the call ran on an approval) and as the identity
/// the call acts as.
#[derive(Debug)]
pub(crate) struct Members {
    policy: Policy,
    principal: String,
    tool: String,
    effect: Effect,
    /// Whom the call acts as ([`acts_as`]).
    acting: String,
}

impl Admit for Members {
    fn admit(&self, target: &Target) -> Result<(), MemberRefusal> {
        let decision = self
            .policy
            .decide(&self.principal, &self.tool, Some(target.clone()));
        match decision.effect {
            Effect::Deny => Err(MemberRefusal::Denied(decision.reason)),
            Effect::ApprovalRequired if self.effect != Effect::ApprovalRequired => {
                Err(MemberRefusal::NeedsApproval(decision.reason))
            }
            _ if acts_as(&decision) != self.acting => Err(MemberRefusal::OtherIdentity {
                decided: acts_as(&decision),
                acting: self.acting.clone(),
            }),
            _ => Ok(()),
        }
    }
}

/// Whom `decision` acts as: its target's vendor and the identity named for it. An identity is
/// named per vendor, and a call acts for one, so the same name on two vendors is two identities.
fn acts_as(decision: &Decision) -> String {
    let vendor = decision.target.as_ref().map_or("", |t| t.vendor.id());
    let name = decision.identity.as_deref().unwrap_or_default();
    format!("{vendor} {name}").trim().to_owned()
}

/// The decision on a call that may make every request in `targets`: each target is decided,
/// and the strictest decision rules (a denial on any target denies the call, an approval on
/// any requires one); targets that would act as different identities deny it.
pub(crate) fn decide_targets(
    policy: &Policy,
    who: &str,
    tool: &str,
    targets: &Targets,
) -> Decision {
    let strictness = |effect: Effect| match effect {
        Effect::Allow => 0,
        Effect::ApprovalRequired => 1,
        Effect::Deny => 2,
    };
    let mut decisions = targets
        .fixed()
        .iter()
        .map(|t| policy.decide(who, tool, Some(t.clone())));
    let Some(mut ruling) = decisions.next() else {
        return policy.decide(who, tool, None);
    };
    for decision in decisions {
        let both_run = ruling.effect != Effect::Deny && decision.effect != Effect::Deny;
        let (ruling_acts, decision_acts) = (acts_as(&ruling), acts_as(&decision));
        if both_run && ruling_acts != decision_acts {
            let reason = format!(
                "The requests of this call would act as different identities ({:?} and {:?}); \
                 the enterprise policy must decide them as one.",
                ruling_acts, decision_acts
            );
            return Decision::builtin_deny(who, tool, decision.target, reason);
        }
        if strictness(decision.effect) > strictness(ruling.effect) {
            ruling = decision;
        }
    }
    ruling
}

/// Decides a call before its tool runs, on the tool's access class and, for the rules, on the
/// targets the prepared call carries: every request the tool may send.
pub(crate) async fn gate(
    spec: &ToolSpec,
    targets: &Targets,
    arguments: &Map<String, Json>,
    principal: &Principal,
    settings: &PolicySettings,
    ports: Ports<'_>,
) -> Result<Gate, ToolError> {
    let name = spec.descriptor.name.as_str();
    let who = principal.name();
    let policy = match load(settings, ports.state, ports.settings).await {
        Loaded::Off => return Ok(Gate::Off),
        Loaded::Broken(broken) => {
            let reason = broken.to_string();
            ports.log.event(
                Level::Error,
                "policy_invalid",
                &[
                    ("reason", (&reason).into()),
                    ("class", broken.error.class().as_str().into()),
                ],
            );
            let decision = Decision::builtin_deny(who, name, None, reason);
            return Ok(refuse(ports.log, &decision, None));
        }
        Loaded::Active(policy) => policy.with_caller(principal),
    };
    let builtin_allow = || {
        log_decision(
            ports.log,
            &Decision::builtin_allow(who, name),
            Outcome::Builtin,
            None,
        );
        Gate::Run {
            acting: None,
            members: None,
        }
    };
    match spec.access {
        Access::Own => return Ok(builtin_allow()),
        Access::Approvers if policy.is_approver(who) => return Ok(builtin_allow()),
        Access::Approvers => {
            let decision = Decision::builtin_deny(
                who,
                name,
                None,
                format!("Only approvers named by the enterprise policy may use {name}."),
            );
            return Ok(refuse(ports.log, &decision, None));
        }
        Access::Rules => {}
    }
    let decision = decide_targets(&policy, who, name, targets);
    let mut gate = match decision.effect {
        Effect::Deny => return Ok(refuse(ports.log, &decision, None)),
        Effect::Allow => run(ports.clock, ports.log, &policy, principal, &decision, None),
        Effect::ApprovalRequired => {
            approval(ports, &policy, settings, principal, &decision, arguments).await?
        }
    };
    if let Gate::Run { members, .. } = &mut gate {
        if targets.has_families() {
            *members = Some(Box::new(Members {
                policy,
                principal: who.to_owned(),
                tool: name.to_owned(),
                effect: decision.effect,
                acting: acts_as(&decision),
            }));
        }
    }
    Ok(gate)
}

/// Under policy, adds to each listed tool's description how the policy restricts it for
/// `principal`, so a client can see why a call is refused. With `hide_unusable`, a tool the
/// principal can never use (every call denied, or approvers only) is left out instead.
pub(crate) async fn describe(
    tools: &mut Vec<ToolDescriptor>,
    registry: &Registry,
    principal: &Principal,
    settings: &PolicySettings,
    state: &dyn CacheStore,
    secrets: &dyn Settings,
) {
    let policy = match load(settings, state, secrets).await {
        Loaded::Off => return,
        Loaded::Active(policy) => policy.with_caller(principal),
        Loaded::Broken(_) => {
            // Not hidden: a broken document is a fault to fix, not a lasting decision.
            for tool in tools {
                tool.description.push_str(
                    "\n\nRestricted: the enterprise policy is invalid, so every call is refused \
                     until it is fixed (the refusal names the problem).",
                );
            }
            return;
        }
    };
    let who = principal.name();
    tools.retain_mut(|tool| {
        let access = registry.get(&tool.name).map(|t| t.spec().access);
        let (note, never) = match access {
            Some(Access::Own) => (None, false),
            Some(Access::Approvers) if policy.is_approver(who) => (None, false),
            Some(Access::Approvers) => (
                Some("Restricted by enterprise policy: only approvers may use this tool."),
                true,
            ),
            Some(Access::Rules) | None => {
                let restriction = policy.restriction(who, &tool.name);
                (
                    restriction_note(restriction),
                    restriction == Restriction::All,
                )
            }
        };
        if never && settings.hide_unusable {
            return false;
        }
        if let Some(note) = note {
            tool.description.push_str("\n\n");
            tool.description.push_str(note);
        }
        true
    });
}

/// The sentence a tool's description gets for a restriction.
fn restriction_note(restriction: Restriction) -> Option<&'static str> {
    match restriction {
        Restriction::None => None,
        Restriction::All => {
            Some("Restricted by enterprise policy: calls to this tool are denied to you.")
        }
        Restriction::Some => Some(
            "Restricted by enterprise policy: some calls are denied or need an approver's \
             approval; a refusal explains itself in its _meta.",
        ),
    }
}

/// The `_meta` of a result that ran under policy: `{vendor, identity}` of the acting credential.
pub(crate) fn add_upstream_meta(result: &mut CallToolResult, vendor: Vendor, identity: &str) {
    result.meta.get_or_insert_with(Map::new).insert(
        UPSTREAM_META.into(),
        json!({ "vendor": vendor.id(), "identity": identity }),
    );
}

fn run(
    clock: &dyn Clock,
    log: &dyn Log,
    policy: &Policy,
    principal: &Principal,
    decision: &Decision,
    approval: Option<&Entry>,
) -> Gate {
    let acting = match policy.acting(decision) {
        None => None,
        Some((vendor, name, IdentityRef::Configured)) => Some(Acting::configured(vendor, name)),
        Some((vendor, name, IdentityRef::Defined(secrets))) => {
            Some(Acting::named(vendor, name, secrets))
        }
        Some((vendor, name, IdentityRef::SignedIn)) => {
            match personal(vendor, name, principal, clock) {
                Ok(acting) => Some(acting),
                Err(reason) => return sign_in_required(log, decision, reason),
            }
        }
    };
    log_decision(
        log,
        decision,
        Outcome::Run(acting.as_ref().map(|a| (a.vendor, a.name.as_str()))),
        approval,
    );
    Gate::Run {
        acting,
        members: None,
    }
}

/// Why the signed-in person's own token cannot act for a vendor: each lifts once they sign in
/// (again), but for a vendor their sign-in gives no token for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum SignIn {
    /// The principal (named) brought no token for the vendor.
    Missing(Vendor, String),
    /// The token has expired and was not renewed.
    Expired(Vendor),
    /// The vendor takes no personal token, or an Atlassian token came without its site.
    Unusable(Vendor),
}

impl fmt::Display for SignIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignIn::Missing(vendor, principal) => write!(
                f,
                "This call acts as the signed-in person's own {vendor} identity, and {principal} \
                 has none: sign in to this server with OAuth through {vendor} (a static token \
                 carries no personal identity).",
                vendor = vendor.id()
            ),
            SignIn::Expired(vendor) => write!(
                f,
                "Your {} sign-in has expired and could not be renewed; sign in to this server \
                 again (reconnect or re-authenticate your MCP client), then repeat the call.",
                vendor.id()
            ),
            SignIn::Unusable(vendor) => write!(
                f,
                "The signed-in identity exists for GitHub, Jira and Confluence only, not {}.",
                vendor.id()
            ),
        }
    }
}

/// The caller's own token acting for `vendor` under `name`, or why there is none usable.
fn personal(
    vendor: Vendor,
    name: &str,
    principal: &Principal,
    clock: &dyn Clock,
) -> Result<Acting, SignIn> {
    let Some(personal) = principal.personal_token(vendor) else {
        return Err(SignIn::Missing(vendor, principal.name().to_owned()));
    };
    if personal.expires_ms.is_some_and(|at| at <= clock.now_ms()) {
        return Err(SignIn::Expired(vendor));
    }
    Acting::personal(vendor, name, &personal.token, personal.base_url.as_deref())
        .ok_or(SignIn::Unusable(vendor))
}

/// The refusal of a call whose rule acts as the signed-in person when they have no usable
/// token: not a policy denial (the same call works after signing in), so its own code.
fn sign_in_required(log: &dyn Log, decision: &Decision, problem: SignIn) -> Gate {
    let reason = problem.to_string();
    log_decision(log, decision, Outcome::Refused(CODE_SIGN_IN), None);
    let mut decision_json = decision_meta(decision);
    decision_json.insert("reason".into(), json!(reason));
    let mut meta = Map::new();
    meta.insert("code".into(), json!(CODE_SIGN_IN));
    meta.insert("decision".into(), Json::Object(decision_json));
    Gate::Refuse(CallToolResult {
        meta: Some(meta),
        ..CallToolResult::error(reason)
    })
}

async fn approval(
    ports: Ports<'_>,
    policy: &Policy,
    settings: &PolicySettings,
    principal: &Principal,
    decision: &Decision,
    arguments: &Map<String, Json>,
) -> Result<Gate, ToolError> {
    // A refusal with `decision`'s effect and rule, its reason followed by `why`.
    let refused = |why: &str| {
        let mut refused = decision.clone();
        refused.reason = format!("{} {why}", decision.reason);
        refuse(ports.log, &refused, None)
    };
    let request = Record {
        entry: Entry {
            id: String::new(),
            requester: decision.principal.clone(),
            tool: decision.tool.clone(),
            arguments_hash: arguments_hash(arguments),
            rule: decision.rule.clone().unwrap_or_default(),
            identity: decision.identity.clone(),
            approvers: decision.approvers.clone(),
            status: Status::Pending,
            created_at_ms: 0,
            expires_at_ms: 0,
            decided_by: None,
            decided_as: None,
            decision_reason: None,
            bytes: 0,
        },
        details: Details {
            arguments: arguments.clone(),
            method: decision
                .target
                .as_ref()
                .map(|t| t.method.as_str().to_owned()),
            path: decision.target.as_ref().map(|t| t.path().to_owned()),
            reason: decision.reason.clone(),
        },
    };
    let outcome = match Approvals::new(ports.approvals, ports.clock, ports.rng)
        .call(request, settings.approval_ttl_seconds)
        .await
    {
        Ok(outcome) => outcome,
        Err(error) => {
            ports.log.event(
                Level::Error,
                "approval_store_failed",
                &[("detail", format!("{error:?}").as_str().into())],
            );
            let why = match &error {
                ApprovalError::Store(e) if e.is_missing_binding() => {
                    "The approval store (the APPROVALS Durable Object) is not configured for this \
                     deployment, so no approval can be requested or used; every call this rule \
                     governs is refused until it is."
                }
                _ => {
                    "The approval store is unavailable, so no approval can be requested or used \
                     now; try again later."
                }
            };
            return Ok(refused(why));
        }
    };
    let voided = match &outcome {
        CallOutcome::Wait { voided, .. } | CallOutcome::Refused { voided, .. } => voided.as_ref(),
        CallOutcome::Run { .. } => None,
    };
    if let Some(old) = voided {
        approvals::log_event(ports.log, "voided", old, &decision.principal);
    }
    match outcome {
        CallOutcome::Run { record } => {
            approvals::log_event(ports.log, "consumed", &record, &decision.principal);
            Ok(run(
                ports.clock,
                ports.log,
                policy,
                principal,
                decision,
                Some(&record),
            ))
        }
        CallOutcome::Wait {
            record,
            created,
            voided,
        } => {
            if created {
                approvals::log_event(ports.log, "requested", &record, &decision.principal);
            }
            let mut decision = decision.clone();
            if let Some(old) = voided {
                decision.reason = format!(
                    "{} Approval {} was granted under rule {:?} and is void: the enterprise \
                     policy changed since (another rule, identity or set of approvers decides \
                     this call now), so this call needs a new approval.",
                    decision.reason, old.id, old.rule
                );
            }
            Ok(refuse(ports.log, &decision, Some(&record)))
        }
        CallOutcome::Refused { refusal, .. } => Ok(limited(ports.log, decision, &refusal)),
    }
}

/// The refusal of a call whose approval request a bound of the ledger keeps from being
/// recorded: `approval_limit`, with the bound's stable code in `_meta.limit`.
fn limited(log: &dyn Log, decision: &Decision, refusal: &Refusal) -> Gate {
    log_decision(log, decision, Outcome::Refused(CODE_APPROVAL_LIMIT), None);
    let mut meta = Map::new();
    meta.insert("code".into(), json!(CODE_APPROVAL_LIMIT));
    meta.insert("limit".into(), json!(refusal.limit_code()));
    meta.insert("decision".into(), Json::Object(decision_meta(decision)));
    let rule = decision
        .rule
        .as_deref()
        .map_or(String::new(), |r| format!(" (rule {r})"));
    Gate::Refuse(CallToolResult {
        meta: Some(meta),
        ..CallToolResult::error(format!(
            "This call needs approval under the enterprise policy{rule}: {} No approval request \
             was recorded: {refusal}",
            decision.reason
        ))
    })
}

/// The refusal result of `decision` (with its approval request, if any), logged.
fn refuse(log: &dyn Log, decision: &Decision, approval: Option<&Entry>) -> Gate {
    let code = if approval.is_some() {
        CODE_APPROVAL
    } else {
        CODE_DENIED
    };
    log_decision(log, decision, Outcome::Refused(code), approval);
    let mut decision_json = decision_meta(decision);
    if let Some(record) = approval {
        decision_json.insert("approval".into(), record.summary());
    }
    let mut meta = Map::new();
    meta.insert("code".into(), json!(code));
    meta.insert("decision".into(), Json::Object(decision_json));
    Gate::Refuse(CallToolResult {
        meta: Some(meta),
        ..CallToolResult::error(refusal_text(decision, approval))
    })
}

/// The `_meta.decision` object of a refusal (without `approval`, which the caller adds).
fn decision_meta(decision: &Decision) -> Map<String, Json> {
    let mut map = Map::new();
    map.insert("effect".into(), json!(decision.effect.as_str()));
    map.insert("rule".into(), json!(decision.rule));
    map.insert("reason".into(), json!(decision.reason));
    map.insert("principal".into(), json!(decision.principal));
    map.insert("tool".into(), json!(decision.tool));
    let target = decision.target.as_ref();
    map.insert("product".into(), json!(target.map(|t| t.vendor.id())));
    map.insert("method".into(), json!(target.map(|t| t.method.as_str())));
    map.insert("path".into(), json!(target.map(Target::path)));
    if decision.effect == Effect::ApprovalRequired {
        map.insert("approvers".into(), json!(decision.approvers));
    }
    map
}

fn refusal_text(decision: &Decision, approval: Option<&Entry>) -> String {
    let request = match &decision.target {
        Some(t) => format!("{} {} {}", decision.tool, t.method.as_str(), t.path()),
        None => decision.tool.clone(),
    };
    let rule = decision
        .rule
        .as_deref()
        .map_or(String::new(), |r| format!(" (rule {r})"));
    match approval {
        None => format!(
            "Refused by the enterprise policy{rule}: {} Call: {request}, as {}. Do not retry \
             this call; the refusal is not temporary.",
            decision.reason, decision.principal
        ),
        Some(record) if record.status == Status::Denied => format!(
            "Refused: approval request {} for this call{rule} was denied{}{}. It stays denied \
             until {}. Call: {request}, as {}.",
            record.id,
            record
                .decided_by
                .as_deref()
                .map_or(String::new(), |by| format!(" by {by}")),
            record
                .decision_reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({r})")),
            record.expires_at(),
            decision.principal
        ),
        Some(record) => format!(
            "This call needs approval under the enterprise policy{rule}: {} Approval request {} \
             is pending until {}; approvers: {}. Ask one of them to approve it (tool \
             {APPROVAL_DECIDE}), then repeat exactly the same call once. Call: {request}, as {}.",
            decision.reason,
            record.id,
            record.expires_at(),
            record.approvers.join(", "),
            decision.principal
        ),
    }
}

/// What became of a decided call, as its log line says.
enum Outcome<'a> {
    /// A built-in tool the policy does not govern by rules.
    Builtin,
    /// The tool ran, as this (vendor, identity) when one was chosen.
    Run(Option<(Vendor, &'a str)>),
    /// Refused with this refusal code.
    Refused(&'static str),
}

/// One line per decision; the path is the caller's and is cut like every logged string.
fn log_decision(
    log: &dyn Log,
    decision: &Decision,
    outcome: Outcome<'_>,
    approval: Option<&Entry>,
) {
    let target = decision.target.as_ref();
    let (outcome, upstream) = match outcome {
        Outcome::Builtin => ("builtin", None),
        Outcome::Run(upstream) => ("run", upstream),
        Outcome::Refused(code) => (code, None),
    };
    let mut fields: Vec<(&str, Field<'_>)> = vec![
        ("principal", (&decision.principal).into()),
        ("tool", (&decision.tool).into()),
        ("product", target.map(|t| t.vendor.id()).into()),
        ("method", target.map(|t| t.method.as_str()).into()),
        ("path", target.map(Target::path).into()),
        ("effect", decision.effect.as_str().into()),
        ("rule", decision.rule.as_ref().into()),
        ("outcome", outcome.into()),
    ];
    if let Some((vendor, identity)) = upstream {
        fields.push(("vendor", vendor.id().into()));
        fields.push(("identity", identity.into()));
    }
    if let Some(record) = approval {
        fields.push(("approvalId", (&record.id).into()));
    }
    log.event(Level::Info, "policy_decision", &fields);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::{ApiPath, Method, Target};

    fn decision(effect: Effect) -> Decision {
        Decision {
            effect,
            rule: Some("r1".into()),
            reason: "Because.".into(),
            principal: "ann".into(),
            tool: "bb_post".into(),
            target: Some(Target::new(
                Vendor::Bitbucket,
                Method::Post,
                &ApiPath::parse("/repositories/a/b").unwrap(),
            )),
            identity: None,
            approvers: vec!["bo".into(), "cy".into()],
        }
    }

    /// A GitHub policy: job logs allowed, check-run annotations of repository `x` denied, the
    /// jobs of repository `slow` only with an approval, repository `bot` as another identity.
    fn github_policy() -> Policy {
        let doc = r#"{"identities": [{"name": "gh-bot", "vendor": "github", "secret": "GH"}],
            "rules": [
              {"id": "no-x", "match": {"paths": ["/repos/o/x/check-runs/**"]}, "effect": "deny"},
              {"id": "ask", "match": {"paths": ["/repos/o/slow/**"]}, "effect": "approval_required",
               "approvers": {"principals": ["bo"]}},
              {"id": "bot", "match": {"paths": ["/repos/o/bot/actions/jobs/9/**"]}, "effect": "allow",
               "identities": {"github": "gh-bot"}},
              {"id": "read", "match": {"methods": ["GET"]}, "effect": "allow"}]}"#;
        Policy::parse(doc, &|name| Some(format!("value-of-{name}"))).unwrap()
    }

    fn get(path: &str) -> Target {
        Target::new(Vendor::GitHub, Method::Get, &ApiPath::parse(path).unwrap())
    }

    /// Every target of the set is decided, and the strictest decision is the call's.
    #[test]
    fn a_call_is_decided_on_every_request_it_declares() {
        let policy = github_policy();
        let decide = |repo: &str| {
            let targets = Targets::one(get(&format!("/repos/o/{repo}/actions/jobs/1/logs")))
                .and(get(&format!("/repos/o/{repo}/check-runs/1/annotations")));
            decide_targets(&policy, "ann", "github_get_job_logs", &targets)
        };
        assert_eq!(decide("r").effect, Effect::Allow);
        let denied = decide("x");
        assert_eq!(
            (denied.effect, denied.target.map(|t| t.path().to_owned())),
            (
                Effect::Deny,
                Some("/repos/o/x/check-runs/1/annotations".to_owned())
            )
        );
        assert_eq!(decide("slow").effect, Effect::ApprovalRequired);
        let none = decide_targets(&policy, "ann", "t", &Targets::none());
        assert_eq!(none.effect, Effect::Deny);
        let mixed = Targets::one(get("/repos/o/bot/actions/jobs/9/logs"))
            .and(get("/repos/o/bot/actions/jobs/8/logs"));
        let mixed = decide_targets(&policy, "ann", "t", &mixed);
        assert_eq!(mixed.effect, Effect::Deny);
        assert!(
            mixed.reason.contains("different identities"),
            "{}",
            mixed.reason
        );
    }

    /// The same identity name on two vendors is two credentials: a call whose requests would
    /// go to two vendors acts for one only, so it is denied rather than sent half as configured.
    #[test]
    fn the_same_name_on_two_vendors_is_two_identities() {
        let policy = Policy::parse(
            r#"{"rules": [{"id": "read", "match": {"methods": ["GET"]}, "effect": "allow"}]}"#,
            &|_| None,
        )
        .unwrap();
        let circleci = Target::new(
            Vendor::CircleCi,
            Method::Get,
            &ApiPath::parse("/project/gh/o/r").unwrap(),
        );
        let targets = Targets::one(get("/repos/o/r/actions/runs")).and(circleci);
        let decision = decide_targets(&policy, "ann", "t", &targets);
        assert_eq!(decision.effect, Effect::Deny);
        assert!(
            decision
                .reason
                .contains(r#"("github default" and "circleci default")"#),
            "{}",
            decision.reason
        );
    }

    /// A request learned while the call runs goes out only when policy decides it no stricter
    /// than the call, and as the same identity.
    #[test]
    fn members_are_decided_as_they_are_learned() {
        let members = |effect| Members {
            policy: github_policy(),
            principal: "ann".into(),
            tool: "github_get_job_logs".into(),
            effect,
            acting: "github default".into(),
        };
        let allowed = members(Effect::Allow);
        assert_eq!(
            allowed.admit(&get("/repos/o/r/check-runs/2/annotations")),
            Ok(())
        );
        let denied = allowed.admit(&get("/repos/o/x/check-runs/2/annotations"));
        assert!(denied.unwrap_err().to_string().contains("rule no-x"));
        let unapproved = allowed.admit(&get("/repos/o/slow/actions/jobs/2/logs"));
        assert!(unapproved.unwrap_err().to_string().contains("approver"));
        let approved = members(Effect::ApprovalRequired);
        assert_eq!(
            approved.admit(&get("/repos/o/slow/actions/jobs/2/logs")),
            Ok(())
        );
        let other = allowed.admit(&get("/repos/o/bot/actions/jobs/9/logs"));
        assert!(other.unwrap_err().to_string().contains("gh-bot"));
        // The same name for another vendor is another credential.
        let circleci = Target::new(
            Vendor::CircleCi,
            Method::Get,
            &ApiPath::parse("/project/gh/o/r/job/2").unwrap(),
        );
        let elsewhere = allowed.admit(&circleci);
        assert!(
            matches!(elsewhere, Err(MemberRefusal::OtherIdentity { .. })),
            "{elsewhere:?}"
        );
    }

    #[test]
    fn refusal_texts_say_what_to_do() {
        let denied = refusal_text(&decision(Effect::Deny), None);
        assert!(denied.contains("(rule r1): Because."), "{denied}");
        assert!(
            denied.contains("bb_post POST /2.0/repositories/a/b, as ann"),
            "{denied}"
        );
        let record = Entry {
            id: "apr_1".into(),
            requester: "ann".into(),
            tool: "bb_post".into(),
            arguments_hash: String::new(),
            rule: "r1".into(),
            identity: None,
            approvers: vec!["bo".into(), "cy".into()],
            status: Status::Pending,
            created_at_ms: 0,
            expires_at_ms: 3_600_000,
            decided_by: None,
            decided_as: None,
            decision_reason: None,
            bytes: 0,
        };
        let pending = refusal_text(&decision(Effect::ApprovalRequired), Some(&record));
        assert!(
            pending.contains("apr_1 is pending until 1970-01-01T01:00:00.000Z"),
            "{pending}"
        );
        assert!(pending.contains("approvers: bo, cy") && pending.contains("approval_decide"));
    }

    #[test]
    fn decision_meta_names_approvers_only_when_approval_is_required() {
        let meta = Json::Object(decision_meta(&decision(Effect::ApprovalRequired)));
        assert_eq!(meta["effect"], "approval_required");
        assert_eq!(meta["approvers"], json!(["bo", "cy"]));
        assert_eq!(
            (&meta["method"], &meta["path"]),
            (&json!("POST"), &json!("/2.0/repositories/a/b"))
        );
        let meta = decision_meta(&decision(Effect::Deny));
        assert!(!meta.contains_key("approvers"));
    }

    #[test]
    fn upstream_meta_joins_existing_meta() {
        let mut result = CallToolResult::text("x");
        result.meta = Some(Map::from_iter([("other".to_owned(), json!(1))]));
        add_upstream_meta(&mut result, Vendor::Jira, "team");
        assert_eq!(
            Json::Object(result.meta.unwrap()),
            json!({"other": 1, "mcp-devtools/upstream": {"vendor": "jira", "identity": "team"}})
        );
    }
}
