//! Enterprise policy: the validated document ([`Policy`]: identities, groups, ordered rules),
//! first-match evaluation with default deny, and the [`Decision`] reported to clients and logs.
//! Loading the document, approvals and the wire shapes live in [`enforce`].

pub mod document;
pub mod enforce;
pub mod glob;

use crate::upstream::{ApiPath, Method, Secret, UpstreamSettings, Vendor};
use glob::{match_form, PathGlob, ToolGlob};
use serde::Deserialize;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;

/// The identity name reported when a vendor's configured credential acts.
pub const DEFAULT_IDENTITY: &str = "default";

/// What a rule does with the calls it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// The call runs.
    Allow,
    /// The call is refused.
    Deny,
    /// The call runs once an approver has approved it.
    ApprovalRequired,
}

impl Effect {
    /// The wire name (`allow`, `deny`, `approval_required`).
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Deny => "deny",
            Effect::ApprovalRequired => "approval_required",
        }
    }
}

/// The credential of an identity, read from the secrets the document names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// A token (GitHub, CircleCI).
    Token(Secret),
    /// A Basic pair (Jira, Confluence, Bitbucket).
    Pair(Secret, Secret),
}

/// An upstream identity: a named credential for one vendor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Its name in the document.
    pub name: String,
    /// The vendor it authenticates to.
    pub vendor: Vendor,
    /// The credential.
    pub credential: Credential,
}

/// Who may decide a rule's approvals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Approvers {
    /// Principals named directly.
    pub principals: Vec<String>,
    /// Groups whose members approve.
    pub groups: Vec<String>,
}

/// One rule; absent conditions match everything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule's id.
    pub id: String,
    /// Principal names.
    pub principals: Option<Vec<String>>,
    /// Group names.
    pub groups: Option<Vec<String>>,
    /// Tool-name globs.
    pub tools: Option<Vec<ToolGlob>>,
    /// HTTP methods.
    pub methods: Option<Vec<Method>>,
    /// Path globs.
    pub paths: Option<Vec<PathGlob>>,
    /// The effect.
    pub effect: Effect,
    /// Vendor -> identity name chosen by the rule.
    pub identities: Vec<(Vendor, String)>,
    /// Approvers (approval_required only).
    pub approvers: Approvers,
    /// Text for the model and the decision.
    pub reason: Option<String>,
}

/// A validated policy document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Upstream identities.
    pub identities: Vec<Identity>,
    /// Group -> members.
    pub groups: BTreeMap<String, Vec<String>>,
    /// The rules, in order.
    pub rules: Vec<Rule>,
}

/// The upstream request a tool call would make, as policy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The vendor.
    pub vendor: Vendor,
    /// The HTTP method.
    pub method: Method,
    /// The normalised path, with the vendor's prefix (Bitbucket `/2.0`), without the query.
    pub path: String,
}

impl Target {
    /// The target of a request to `vendor` with `method` at `path`, prefixed as the client does.
    pub fn new(vendor: Vendor, method: Method, path: &ApiPath) -> Target {
        let path = match vendor.path_prefix() {
            Some(prefix) => path.clone().with_prefix(prefix),
            None => path.clone(),
        };
        Target {
            vendor,
            method,
            path: path.path().to_owned(),
        }
    }
}

/// The outcome of evaluating one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The effect (deny when no rule matched).
    pub effect: Effect,
    /// The deciding rule's id; `None` for default deny and built-in checks.
    pub rule: Option<String>,
    /// Why, for the model.
    pub reason: String,
    /// The caller.
    pub principal: String,
    /// The tool called.
    pub tool: String,
    /// The upstream request, when the tool makes one.
    pub target: Option<Target>,
    /// The identity acting for the target's vendor (`default` when the rule names none).
    pub identity: Option<String>,
    /// Who may approve (approval_required only), sorted.
    pub approvers: Vec<String>,
}

impl Decision {
    /// A denial no rule made (fail closed, built-in checks).
    pub fn builtin_deny(
        principal: &str,
        tool: &str,
        target: Option<Target>,
        reason: String,
    ) -> Decision {
        Decision {
            effect: Effect::Deny,
            rule: None,
            reason,
            principal: principal.to_owned(),
            tool: tool.to_owned(),
            target,
            identity: None,
            approvers: Vec::new(),
        }
    }

    /// The `_meta.decision` object (without `approval`, which the caller adds).
    pub fn to_json(&self) -> Map<String, Json> {
        let mut map = Map::new();
        map.insert("effect".into(), json!(self.effect.as_str()));
        map.insert("rule".into(), json!(self.rule));
        map.insert("reason".into(), json!(self.reason));
        map.insert("principal".into(), json!(self.principal));
        map.insert("tool".into(), json!(self.tool));
        map.insert(
            "method".into(),
            json!(self.target.as_ref().map(|t| t.method.as_str())),
        );
        map.insert(
            "path".into(),
            json!(self.target.as_ref().map(|t| t.path.as_str())),
        );
        if self.effect == Effect::ApprovalRequired {
            map.insert("approvers".into(), json!(self.approvers));
        }
        map
    }
}

impl Policy {
    /// Parses and validates a document; `setting` reads the secrets it names.
    pub fn parse(text: &str, setting: &dyn Fn(&str) -> Option<String>) -> Result<Policy, String> {
        document::parse(text, setting)
    }

    /// True when `principal` belongs to `group`.
    pub fn in_group(&self, principal: &str, group: &str) -> bool {
        self.groups
            .get(group)
            .is_some_and(|members| members.iter().any(|m| m == principal))
    }

    fn subject_matches(&self, rule: &Rule, principal: &str) -> bool {
        match (&rule.principals, &rule.groups) {
            (None, None) => true,
            (names, groups) => {
                names.iter().flatten().any(|n| n == principal)
                    || groups.iter().flatten().any(|g| self.in_group(principal, g))
            }
        }
    }

    fn rule_matches(
        &self,
        rule: &Rule,
        principal: &str,
        tool: &str,
        target: Option<&Target>,
    ) -> bool {
        if !self.subject_matches(rule, principal) {
            return false;
        }
        if let Some(tools) = &rule.tools {
            if !tools.iter().any(|g| g.matches(tool)) {
                return false;
            }
        }
        if rule.methods.is_none() && rule.paths.is_none() {
            return true;
        }
        let Some(target) = target else {
            return false;
        };
        if let Some(methods) = &rule.methods {
            if !methods.contains(&target.method) {
                return false;
            }
        }
        if let Some(paths) = &rule.paths {
            let form = match_form(&target.path);
            if !paths.iter().any(|g| g.matches(&form)) {
                return false;
            }
        }
        true
    }

    /// The approvers of `rule`: its principals and its groups' members, sorted, once each.
    pub fn approvers_of(&self, rule: &Rule) -> Vec<String> {
        let mut all: Vec<String> = rule.approvers.principals.clone();
        for g in &rule.approvers.groups {
            all.extend(self.groups.get(g).into_iter().flatten().cloned());
        }
        all.sort_unstable();
        all.dedup();
        all
    }

    /// True when some approval rule names `principal` as an approver.
    pub fn is_approver(&self, principal: &str) -> bool {
        self.rules
            .iter()
            .filter(|r| r.effect == Effect::ApprovalRequired)
            .any(|r| self.approvers_of(r).iter().any(|a| a == principal))
    }

    /// Decides a call: the first matching rule, or deny.
    pub fn decide(&self, principal: &str, tool: &str, target: Option<Target>) -> Decision {
        let Some(rule) = self
            .rules
            .iter()
            .find(|r| self.rule_matches(r, principal, tool, target.as_ref()))
        else {
            return Decision::builtin_deny(
                principal,
                tool,
                target,
                "No rule of the enterprise policy allows this call (default deny).".into(),
            );
        };
        let identity = match (&target, rule.effect) {
            (_, Effect::Deny) | (None, _) => None,
            (Some(t), _) => Some(
                rule.identities
                    .iter()
                    .find(|(v, _)| *v == t.vendor)
                    .map_or(DEFAULT_IDENTITY.to_owned(), |(_, name)| name.clone()),
            ),
        };
        let reason = rule.reason.clone().unwrap_or_else(|| match rule.effect {
            Effect::Allow => format!("Allowed by rule {}.", rule.id),
            Effect::Deny => format!("Denied by rule {} of the enterprise policy.", rule.id),
            Effect::ApprovalRequired => format!(
                "Rule {} of the enterprise policy requires an approver's approval for this call.",
                rule.id
            ),
        });
        Decision {
            effect: rule.effect,
            rule: Some(rule.id.clone()),
            reason,
            principal: principal.to_owned(),
            tool: tool.to_owned(),
            target,
            identity,
            approvers: if rule.effect == Effect::ApprovalRequired {
                self.approvers_of(rule)
            } else {
                Vec::new()
            },
        }
    }

    /// How the policy restricts `tool` for `principal`, ignoring method and path: `None` when
    /// every call is allowed, else a sentence for the tool's description.
    pub fn restriction(&self, principal: &str, tool: &str) -> Option<&'static str> {
        let (mut some_allowed, mut some_refused) = (false, false);
        let mut decided = false;
        for rule in &self.rules {
            let applies = self.subject_matches(rule, principal)
                && rule
                    .tools
                    .as_ref()
                    .is_none_or(|t| t.iter().any(|g| g.matches(tool)));
            if !applies {
                continue;
            }
            match rule.effect {
                Effect::Allow => some_allowed = true,
                Effect::Deny => some_refused = true,
                Effect::ApprovalRequired => {
                    some_allowed = true;
                    some_refused = true;
                }
            }
            if rule.methods.is_none() && rule.paths.is_none() {
                decided = true;
                break;
            }
        }
        // Calls no rule catches fall to default deny.
        some_refused |= !decided;
        match (some_allowed, some_refused) {
            (_, false) => None,
            (false, true) => {
                Some("Restricted by enterprise policy: calls to this tool are denied to you.")
            }
            (true, true) => Some(
                "Restricted by enterprise policy: some calls are denied or need an approver's \
                 approval; a refusal explains itself in its _meta.",
            ),
        }
    }

    /// The upstream settings with `identity` acting for `vendor` (unchanged for `default`).
    pub fn settings_for(
        &self,
        base: &UpstreamSettings,
        vendor: Vendor,
        identity: &str,
    ) -> UpstreamSettings {
        let mut settings = base.clone();
        let Some(found) = self
            .identities
            .iter()
            .find(|i| i.name == identity && i.vendor == vendor)
        else {
            return settings;
        };
        match (&found.credential, vendor) {
            (Credential::Token(t), Vendor::GitHub) => settings.github_token = Some(t.clone()),
            (Credential::Token(t), Vendor::CircleCi) => settings.circleci_token = Some(t.clone()),
            (Credential::Pair(u, t), Vendor::Jira | Vendor::Confluence) => {
                settings.atlassian_user_email = Some(u.clone());
                settings.atlassian_api_token = Some(t.clone());
            }
            (Credential::Pair(u, t), Vendor::Bitbucket) => {
                // Bitbucket prefers the Atlassian pair when set; clear it so this pair acts.
                settings.atlassian_user_email = None;
                settings.atlassian_api_token = None;
                settings.bitbucket_username = Some(u.clone());
                settings.bitbucket_app_password = Some(t.clone());
            }
            // Validation ties a credential's shape to its vendor.
            _ => {}
        }
        settings
    }
}
