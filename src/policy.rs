//! Enterprise policy as a pure decision engine: where the document is ([`PolicySettings`]), the
//! validated document ([`Policy`]: identities, groups, ordered rules), first-match evaluation
//! with default deny, and the [`Decision`]. No I/O and no MCP types: the server's gate loads the
//! document, asks for decisions and turns them into results.

pub(crate) mod document;
pub(crate) mod error;
pub mod glob;

pub(crate) use error::PolicyError;

use crate::auth::{valid_provider_group, Principal};
use crate::upstream::{Method, Secret, Target, Vendor};
use glob::{PathGlob, ToolGlob};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The identity name reported when a vendor's configured credential acts.
pub(crate) const DEFAULT_IDENTITY: &str = "default";

/// The identity name of a signed-in person's own upstream token (GitHub, from their sign-in).
pub(crate) const SIGNED_IN_IDENTITY: &str = "signed-in-user";

/// Where the policy document is, and how long approvals live.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PolicySettings {
    /// `MCP_POLICY`: the document itself.
    pub(crate) document: Option<String>,
    /// `MCP_POLICY_KV_KEY`: the key of the document in the `POLICY` namespace.
    pub(crate) kv_key: Option<String>,
    /// `MCP_APPROVAL_TTL_SECONDS`.
    pub(crate) approval_ttl_seconds: u64,
    /// `MCP_APPROVAL_LEDGER_MAX_BYTES`: the most bytes of records the approval ledger holds.
    pub(crate) ledger_max_bytes: usize,
    /// `MCP_POLICY_HIDE_UNUSABLE_TOOLS`: `tools/list` leaves out the tools the policy denies a
    /// principal every call of (off: every tool is listed, with a note saying why it refuses).
    pub(crate) hide_unusable: bool,
}

impl PolicySettings {
    /// True when the server runs under enterprise policy.
    pub(crate) fn is_configured(&self) -> bool {
        self.document.is_some() || self.kv_key.is_some()
    }
}

/// How the policy restricts one tool for one principal, ignoring method and path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Restriction {
    /// Every call is allowed.
    None,
    /// Some calls are denied or need approval.
    Some,
    /// Every call is denied.
    All,
}

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

/// An upstream identity: a named credential for one vendor, which the upstream client builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    /// Its name in the document.
    pub name: String,
    /// The vendor it authenticates to.
    pub vendor: Vendor,
    /// The values of the secrets the document names, in its order (a token, or a Basic pair's
    /// user and token).
    pub(crate) secrets: Vec<Secret>,
}

/// The identity a decision names to act for its target's vendor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdentityRef<'a> {
    /// The vendor's configured credential ([`DEFAULT_IDENTITY`]).
    Configured,
    /// The signed-in person's own token ([`SIGNED_IN_IDENTITY`]).
    SignedIn,
    /// An identity the document defines, by the values of the secrets it names.
    Defined(&'a [Secret]),
}

/// Who may decide a rule's approvals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Approvers {
    /// Principals named directly.
    pub(crate) principals: Vec<String>,
    /// Groups whose members approve.
    pub groups: Vec<String>,
}

/// One rule; absent conditions match everything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule's id.
    pub id: String,
    /// Principal names.
    pub(crate) principals: Option<Vec<String>>,
    /// Group names.
    pub groups: Option<Vec<String>>,
    /// Tool-name globs.
    pub tools: Option<Vec<ToolGlob>>,
    /// HTTP methods.
    pub(crate) methods: Option<Vec<Method>>,
    /// Path globs.
    pub(crate) paths: Option<Vec<PathGlob>>,
    /// The effect.
    pub effect: Effect,
    /// Vendor -> identity name chosen by the rule.
    pub(crate) identities: Vec<(Vendor, String)>,
    /// Approvers (approval_required only).
    pub approvers: Approvers,
    /// Text for the model and the decision.
    pub(crate) reason: Option<String>,
}

/// A validated policy document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Upstream identities.
    pub(crate) identities: Vec<Identity>,
    /// Group -> members.
    pub groups: BTreeMap<String, Vec<String>>,
    /// The rules, in order.
    pub rules: Vec<Rule>,
    /// The caller this policy is evaluated for, with what their sign-in verified: their aliases
    /// count wherever a principal is named, their provider groups wherever a namespaced group
    /// is (`github:acme`, `oidc:engineering`).
    pub(crate) caller: Option<Principal>,
}

/// The outcome of evaluating one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The effect (deny when no rule matched).
    pub effect: Effect,
    /// The deciding rule's id; `None` for default deny and built-in checks.
    pub rule: Option<String>,
    /// Why, for the model.
    pub(crate) reason: String,
    /// The caller.
    pub principal: String,
    /// The tool called.
    pub(crate) tool: String,
    /// The upstream request, when the tool makes one.
    pub(crate) target: Option<Target>,
    /// The identity acting for the target's vendor (`default` when the rule names none).
    pub identity: Option<String>,
    /// Who may approve (approval_required only), sorted.
    pub approvers: Vec<String>,
}

impl Decision {
    /// The allowance of a built-in tool, which no rule governs.
    pub(crate) fn builtin_allow(principal: &str, tool: &str) -> Decision {
        Decision {
            effect: Effect::Allow,
            rule: None,
            reason: String::new(),
            principal: principal.to_owned(),
            tool: tool.to_owned(),
            target: None,
            identity: None,
            approvers: Vec::new(),
        }
    }

    /// A denial no rule made (fail closed, built-in checks).
    pub(crate) fn builtin_deny(
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
}

impl Policy {
    /// Parses and validates a document; `setting` reads the secrets it names.
    pub fn parse(
        text: &str,
        setting: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Policy, PolicyError> {
        document::parse(text, setting)
    }

    /// The vendor and identity `decision` names to act for its target, when it names one.
    /// Validation ties every name a rule chooses to an identity of that vendor.
    pub(crate) fn acting<'a>(
        &'a self,
        decision: &'a Decision,
    ) -> Option<(Vendor, &'a str, IdentityRef<'a>)> {
        let vendor = decision.target.as_ref()?.vendor;
        let name = decision.identity.as_deref()?;
        let identity = match name {
            DEFAULT_IDENTITY => IdentityRef::Configured,
            SIGNED_IN_IDENTITY => IdentityRef::SignedIn,
            // No secrets, so nothing is sent, should an identity be missing after all.
            _ => IdentityRef::Defined(
                self.identities
                    .iter()
                    .find(|i| i.name == name && i.vendor == vendor)
                    .map_or(&[], |i| &i.secrets),
            ),
        };
        Some((vendor, name, identity))
    }

    /// True when `principal` belongs to `group`: a namespaced provider group the caller is
    /// in, or a document group listing one of the principal's names (no provider group of the
    /// same name joins it: anyone can create a GitHub organisation called `platform`).
    pub(crate) fn in_group(&self, principal: &str, group: &str) -> bool {
        if valid_provider_group(group) {
            return self
                .caller_named(principal)
                .is_some_and(|c| c.in_provider_group(group));
        }
        self.groups
            .get(group)
            .is_some_and(|members| members.iter().any(|m| self.names(principal, m)))
    }

    /// The policy for calls by `caller`, whose verified aliases and provider groups then count
    /// for the rules and the approvers.
    pub(crate) fn with_caller(mut self, caller: &Principal) -> Policy {
        self.caller = Some(caller.clone());
        self
    }

    fn caller_named(&self, principal: &str) -> Option<&Principal> {
        self.caller.as_ref().filter(|c| c.name() == principal)
    }

    /// True when the document's name `entry` means `principal`: the name itself, or one of
    /// the caller's verified aliases.
    fn names(&self, principal: &str, entry: &str) -> bool {
        match self.caller_named(principal) {
            Some(caller) => caller.answers_to(entry),
            None => principal == entry,
        }
    }

    fn subject_matches(&self, rule: &Rule, principal: &str) -> bool {
        match (&rule.principals, &rule.groups) {
            (None, None) => true,
            (names, groups) => {
                names.iter().flatten().any(|n| self.names(principal, n))
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
            if !paths.iter().any(|g| g.matches(target.path())) {
                return false;
            }
        }
        true
    }

    /// The approvers of `rule`: its principals, its document groups' members, and its
    /// namespaced provider groups as such (their members are known only when they call),
    /// sorted, once each.
    pub(crate) fn approvers_of(&self, rule: &Rule) -> Vec<String> {
        let mut all: Vec<String> = rule.approvers.principals.clone();
        for g in &rule.approvers.groups {
            if valid_provider_group(g) {
                all.push(g.clone());
            } else {
                all.extend(self.groups.get(g).into_iter().flatten().cloned());
            }
        }
        all.sort_unstable();
        all.dedup();
        all
    }

    /// True when some approval rule names `principal` as an approver.
    pub(crate) fn is_approver(&self, principal: &str) -> bool {
        self.rules
            .iter()
            .filter(|r| r.effect == Effect::ApprovalRequired)
            .any(|r| {
                self.approvers_of(r)
                    .iter()
                    .any(|a| match valid_provider_group(a) {
                        true => self.in_group(principal, a),
                        false => self.names(principal, a),
                    })
            })
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

    /// How the policy restricts `tool` for `principal`, ignoring method and path.
    pub(crate) fn restriction(&self, principal: &str, tool: &str) -> Restriction {
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
            (_, false) => Restriction::None,
            (false, true) => Restriction::All,
            (true, true) => Restriction::Some,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::ApiPath;

    fn policy(rules: &str) -> Policy {
        let doc = format!(
            r#"{{"identities": [
                {{"name": "gh-bot", "vendor": "github", "secret": "GH"}},
                {{"name": "bb", "vendor": "bitbucket", "userSecret": "BU", "tokenSecret": "BT"}}],
              "groups": {{"ops": ["olga", "oscar"]}},
              "rules": {rules}}}"#
        );
        Policy::parse(&doc, &|name| Some(format!("value-of-{name}"))).unwrap()
    }

    fn target(vendor: Vendor, method: Method, path: &str) -> Option<Target> {
        Some(Target::new(vendor, method, &ApiPath::parse(path).unwrap()))
    }

    fn person(name: &str, attributes: &[&str]) -> Principal {
        let attributes: Vec<String> = attributes.iter().map(|a| a.to_string()).collect();
        Principal::signed_in(name, &attributes, Vec::new())
    }

    #[test]
    fn provider_groups_match_only_in_their_namespace_and_for_that_caller() {
        let p = policy(
            r#"[{"id": "gh-acme", "match": {"groups": ["github:acme"], "tools": ["github_*"]},
                 "effect": "allow", "identities": {"github": "signed-in-user"}},
                {"id": "ops-read", "match": {"groups": ["ops"], "tools": ["jira_*"]}, "effect": "allow"}]"#,
        );
        let get = || target(Vendor::GitHub, Method::Get, "/repos/o/r");
        let pat = person("github~7", &["login:pat", "github:ACME", "github:ops"]);
        assert_eq!(p.decide("github~7", "github_x", get()).effect, Effect::Deny);
        let signed_in = p.clone().with_caller(&pat);
        let d = signed_in.decide("github~7", "github_x", get());
        assert_eq!(
            (d.effect, d.identity.as_deref()),
            (Effect::Allow, Some(SIGNED_IN_IDENTITY))
        );
        // Another caller's groups do not count, and an organisation named like a document
        // group (ops: olga, oscar) does not join it.
        assert_eq!(
            signed_in.decide("quinn", "github_x", get()).effect,
            Effect::Deny
        );
        assert_eq!(
            signed_in.decide("github~7", "jira_x", None).effect,
            Effect::Deny
        );
    }

    #[test]
    fn verified_aliases_stand_for_the_person_in_rules_groups_and_approvers() {
        let p = policy(
            r#"[{"id": "ask", "match": {"tools": ["bb_*"]}, "effect": "approval_required",
                 "approvers": {"groups": ["ops", "oidc:Release Managers"]}},
                {"id": "ops-jira", "match": {"groups": ["ops"], "tools": ["jira_*"]}, "effect": "allow"},
                {"id": "ann", "match": {"principals": ["ann@example.com"]}, "effect": "allow"}]"#,
        );
        let olga = person("github~1", &["login:Olga"]);
        let as_olga = p.clone().with_caller(&olga);
        assert_eq!(
            as_olga.decide("github~1", "jira_x", None).effect,
            Effect::Allow
        );
        assert!(as_olga.is_approver("github~1"));
        assert!(!p.is_approver("github~1"));
        let ann = person(
            "oidc~00000000000000000000000000000000",
            &["email:ann@example.com"],
        );
        let as_ann = p.clone().with_caller(&ann);
        assert_eq!(
            as_ann.decide(ann.name(), "jira_x", None).effect,
            Effect::Allow
        );
        assert!(!as_ann.is_approver(ann.name()));
        let rm = person(
            "oidc~11111111111111111111111111111111",
            &["oidc:release managers"],
        );
        assert!(p.clone().with_caller(&rm).is_approver(rm.name()));
        let d = p.decide("zed", "bb_x", None);
        assert_eq!(d.approvers, ["oidc:Release Managers", "olga", "oscar"]);
    }

    #[test]
    fn first_match_decides_and_nothing_matching_is_denied() {
        let p = policy(
            r#"[{"id": "ops-deny-delete", "match": {"groups": ["ops"], "methods": ["DELETE"]}, "effect": "deny"},
                {"id": "ops-all", "match": {"groups": ["ops"]}, "effect": "allow", "identities": {"github": "gh-bot"}},
                {"id": "ann-reads", "match": {"principals": ["ann"], "methods": ["GET"]}, "effect": "allow"}]"#,
        );
        let d = p.decide(
            "olga",
            "bb_delete",
            target(Vendor::Bitbucket, Method::Delete, "/x"),
        );
        assert_eq!(
            (d.effect, d.rule.as_deref()),
            (Effect::Deny, Some("ops-deny-delete"))
        );
        assert_eq!(d.identity, None);
        let d = p.decide(
            "oscar",
            "github_list_workflow_runs",
            target(Vendor::GitHub, Method::Get, "/repos/a/b/actions/runs"),
        );
        assert_eq!(
            (d.effect, d.identity.as_deref()),
            (Effect::Allow, Some("gh-bot"))
        );
        // The rule names no Bitbucket identity: the configured credential acts.
        let d = p.decide(
            "oscar",
            "bb_get",
            target(Vendor::Bitbucket, Method::Get, "/x"),
        );
        assert_eq!(d.identity.as_deref(), Some(DEFAULT_IDENTITY));
        let d = p.decide(
            "ann",
            "bb_get",
            target(Vendor::Bitbucket, Method::Get, "/x"),
        );
        assert_eq!(d.rule.as_deref(), Some("ann-reads"));
        let d = p.decide(
            "ann",
            "bb_post",
            target(Vendor::Bitbucket, Method::Post, "/x"),
        );
        assert_eq!((d.effect, d.rule), (Effect::Deny, None));
        // A rule with methods or paths never matches a tool without an upstream request.
        let d = p.decide("ann", "local_tool", None);
        assert_eq!((d.effect, d.rule), (Effect::Deny, None));
        let d = p.decide("olga", "local_tool", None);
        assert_eq!(
            (d.effect, d.rule.as_deref(), d.identity),
            (Effect::Allow, Some("ops-all"), None)
        );
    }

    #[test]
    fn approvers_expand_groups_once_each() {
        let p = policy(
            r#"[{"id": "ask", "effect": "approval_required", "approvers": {"principals": ["oscar", "zed"], "groups": ["ops"]}}]"#,
        );
        let d = p.decide("ann", "jira_post", target(Vendor::Jira, Method::Post, "/x"));
        assert_eq!(d.approvers, ["olga", "oscar", "zed"]);
        assert!(p.is_approver("zed") && p.is_approver("olga") && !p.is_approver("ann"));
    }

    #[test]
    fn restrictions_summarise_the_rules_for_one_principal() {
        let p = policy(
            r#"[{"id": "a", "match": {"principals": ["ann"], "tools": ["jira_get"]}, "effect": "allow"},
                {"id": "b", "match": {"tools": ["jira_*"], "paths": ["/rest/**"]}, "effect": "allow"},
                {"id": "c", "match": {"tools": ["bb_*"]}, "effect": "deny"}]"#,
        );
        assert_eq!(p.restriction("ann", "jira_get"), Restriction::None);
        assert_eq!(p.restriction("bob", "jira_get"), Restriction::Some);
        assert_eq!(p.restriction("ann", "bb_get"), Restriction::All);
        assert_eq!(p.restriction("ann", "conf_get"), Restriction::All);
    }

    #[test]
    fn a_decision_names_an_identity_never_a_credential() {
        let p = policy(
            r#"[{"id": "bot", "match": {"tools": ["github_*"]}, "effect": "allow",
                 "identities": {"github": "gh-bot", "jira": "signed-in-user"}},
                {"id": "rest", "effect": "allow"}]"#,
        );
        let gh = p.decide("ann", "github_x", target(Vendor::GitHub, Method::Get, "/x"));
        let secret = [Secret::new("value-of-GH")];
        assert_eq!(
            p.acting(&gh),
            Some((Vendor::GitHub, "gh-bot", IdentityRef::Defined(&secret[..])))
        );
        let jira = p.decide("ann", "github_x", target(Vendor::Jira, Method::Get, "/x"));
        assert_eq!(
            p.acting(&jira),
            Some((Vendor::Jira, SIGNED_IN_IDENTITY, IdentityRef::SignedIn))
        );
        let bb = p.decide("ann", "bb_x", target(Vendor::Bitbucket, Method::Get, "/x"));
        assert_eq!(
            p.acting(&bb),
            Some((Vendor::Bitbucket, DEFAULT_IDENTITY, IdentityRef::Configured))
        );
        assert_eq!(p.acting(&p.decide("ann", "local", None)), None);
    }
}
