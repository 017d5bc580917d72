//! Reading a policy document: the JSON shape (unknown members refused), and validation into a
//! [`Policy`] with every reference checked and every named secret read. Each error names the
//! entry at fault and never quotes a secret's value.

use super::error::PolicyError;
use super::glob::{PathGlob, ToolGlob};
use super::{Approvers, Effect, Identity, Policy, Rule, DEFAULT_IDENTITY, SIGNED_IN_IDENTITY};
use crate::auth::{valid_principal_reference, valid_provider_group, GITHUB_GROUP, OIDC_GROUP};
use crate::upstream::{Method, Secret, Vendor};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    identities: Vec<RawIdentity>,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawIdentity {
    name: String,
    vendor: String,
    secret: Option<String>,
    user_secret: Option<String>,
    token_secret: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMatch {
    principals: Option<Vec<String>>,
    groups: Option<Vec<String>>,
    tools: Option<Vec<String>>,
    methods: Option<Vec<String>>,
    paths: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawApprovers {
    #[serde(default)]
    principals: Vec<String>,
    #[serde(default)]
    groups: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    #[serde(default, rename = "match")]
    matching: RawMatch,
    effect: Effect,
    #[serde(default)]
    identities: BTreeMap<String, String>,
    approvers: Option<RawApprovers>,
    reason: Option<String>,
}

/// A name in the policy: 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn vendor_by_id(id: &str) -> Option<Vendor> {
    Vendor::ALL.into_iter().find(|v| v.id() == id)
}

fn method_by_name(name: &str) -> Option<Method> {
    [
        Method::Get,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
    ]
    .into_iter()
    .find(|m| m.as_str() == name)
}

/// A list that must not be empty when present.
fn non_empty<T>(list: Option<Vec<T>>, what: &str) -> Result<Option<Vec<T>>, PolicyError> {
    match list {
        Some(l) if l.is_empty() => Err(invalid(format!(
            "match.{what} is an empty list, which never matches (leave it out to match every value)"
        ))),
        other => Ok(other),
    }
}

/// Parses and validates `text`; `setting` reads a secret by name.
pub(crate) fn parse(
    text: &str,
    setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Policy, PolicyError> {
    let raw: RawPolicy = serde_json::from_str(text)?;
    let mut identities = Vec::with_capacity(raw.identities.len());
    for (i, entry) in raw.identities.into_iter().enumerate() {
        let at = format!("identities[{i}] ({:?})", entry.name);
        identities.push(identity(entry, setting).map_err(|e| e.at(at))?);
    }
    for (i, a) in identities.iter().enumerate() {
        if identities[..i].iter().any(|b| b.name == a.name) {
            return Err(invalid(format!("identity {:?} is defined twice", a.name)));
        }
    }
    for (name, members) in &raw.groups {
        if !valid_name(name) {
            return Err(invalid(format!(
                "group name {name:?} must be 1 to 64 characters of A-Z a-z 0-9 . _ -"
            )));
        }
        if members.is_empty() {
            // Before provider groups had their namespace, an empty group stood for the provider
            // group of that name; say so rather than let it silently match nobody.
            return Err(invalid(format!(
                "groups.{name} lists nobody: a group of the identity provider is named directly \
                 in rules and approvers as github:{name} (a GitHub organisation) or oidc:{name} \
                 (an OpenID Connect group), without a definition"
            )));
        }
        if let Some(bad) = members.iter().find(|m| !valid_principal(m)) {
            return Err(invalid(format!(
                "groups.{name}: {bad:?} is not a principal name ({PRINCIPAL_SYNTAX})"
            )));
        }
    }
    let mut rules: Vec<Rule> = Vec::with_capacity(raw.rules.len());
    for (i, entry) in raw.rules.into_iter().enumerate() {
        let at = format!("rules[{i}] ({:?})", entry.id);
        let rule = rule(entry, &identities, &raw.groups).map_err(|e| e.at(at.clone()))?;
        if rules.iter().any(|r| r.id == rule.id) {
            return Err(invalid(format!("rule id {:?} is used twice", rule.id)).at(at));
        }
        rules.push(rule);
    }
    Ok(Policy {
        identities,
        groups: raw.groups,
        rules,
        caller: None,
    })
}

/// What a principal name in the document may be, for error messages.
const PRINCIPAL_SYNTAX: &str = "a static token's principal, a GitHub login, an e-mail address, or \
     a signed-in person's stable name such as github~583231";

/// A principal in the document: a static token's name, a GitHub login or e-mail address (matched
/// against a signed-in person's verified aliases), or a stable name.
fn valid_principal(name: &str) -> bool {
    valid_principal_reference(name)
}

fn invalid(text: impl Into<String>) -> PolicyError {
    PolicyError::Invalid(text.into())
}

fn identity(
    raw: RawIdentity,
    setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Identity, PolicyError> {
    if !valid_name(&raw.name) {
        return Err(invalid(
            "the name must be 1 to 64 characters of A-Z a-z 0-9 . _ -",
        ));
    }
    if raw.name == DEFAULT_IDENTITY {
        return Err(invalid(format!(
            "the name {DEFAULT_IDENTITY:?} is reserved for the vendor's configured credential"
        )));
    }
    if raw.name == SIGNED_IN_IDENTITY {
        return Err(invalid(format!(
            "the name {SIGNED_IN_IDENTITY:?} is reserved for a signed-in person's own token"
        )));
    }
    let vendor = vendor_by_id(&raw.vendor).ok_or_else(|| {
        invalid(format!(
            "vendor {:?} is not one of github, circleci, jira, confluence, bitbucket",
            raw.vendor
        ))
    })?;
    let read = |name: &str| -> Result<Secret, PolicyError> {
        if name.is_empty() || name.starts_with("MCP_") {
            return Err(PolicyError::SecretReserved(name.to_owned()));
        }
        setting(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .map(Secret::new)
            .ok_or_else(|| PolicyError::SecretUnset(name.to_owned()))
    };
    // The vendor's credential is a token or a Basic pair; the document names its secrets so.
    let secrets = match (vendor.uses_basic_pair(), raw.secret, raw.user_secret, raw.token_secret) {
        (false, Some(secret), None, None) => vec![read(&secret)?],
        (false, ..) => {
            return Err(invalid(format!(
                "a {} identity names its token with \"secret\" (and no userSecret/tokenSecret)",
                vendor.id()
            )))
        }
        (true, None, Some(user), Some(token)) => vec![read(&user)?, read(&token)?],
        (true, ..) => {
            return Err(invalid(format!(
                "a {} identity names its Basic pair with \"userSecret\" and \"tokenSecret\" (and no \"secret\")",
                vendor.id()
            )))
        }
    };
    Ok(Identity {
        name: raw.name,
        vendor,
        secrets,
    })
}

fn rule(
    raw: RawRule,
    identities: &[Identity],
    groups: &BTreeMap<String, Vec<String>>,
) -> Result<Rule, PolicyError> {
    if !valid_name(&raw.id) {
        return Err(invalid(
            "the id must be 1 to 64 characters of A-Z a-z 0-9 . _ -",
        ));
    }
    let known_group = |g: &String| -> Result<(), PolicyError> {
        if groups.contains_key(g) || valid_provider_group(g) {
            Ok(())
        } else if g.starts_with(GITHUB_GROUP) || g.starts_with(OIDC_GROUP) {
            Err(invalid(format!(
                "{g:?} is not a provider group: github: takes an organisation's name, oidc: 1 to \
                 128 characters without control characters or outer spaces"
            )))
        } else {
            Err(invalid(format!(
                "group {g:?} is not defined (a group of the identity provider is written \
                 github:{g} or oidc:{g})"
            )))
        }
    };
    let m = raw.matching;
    let principals = non_empty(m.principals, "principals")?;
    if let Some(bad) = principals.iter().flatten().find(|p| !valid_principal(p)) {
        return Err(invalid(format!(
            "{bad:?} is not a principal name ({PRINCIPAL_SYNTAX})"
        )));
    }
    let match_groups = non_empty(m.groups, "groups")?;
    for g in match_groups.iter().flatten() {
        known_group(g)?;
    }
    let tools = non_empty(m.tools, "tools")?
        .map(|l| {
            l.iter()
                .map(|t| ToolGlob::parse(t))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let methods = non_empty(m.methods, "methods")?
        .map(|l| {
            l.iter()
                .map(|name| {
                    method_by_name(name).ok_or_else(|| {
                        invalid(format!(
                            "method {name:?} is not one of GET, POST, PUT, PATCH, DELETE"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let paths = non_empty(m.paths, "paths")?
        .map(|l| {
            l.iter()
                .map(|p| PathGlob::parse(p))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let mut chosen = Vec::new();
    for (vendor_id, name) in raw.identities {
        let vendor = vendor_by_id(&vendor_id).ok_or_else(|| {
            invalid(format!("identities: {vendor_id:?} is not one of github, circleci, jira, confluence, bitbucket"))
        })?;
        if name == SIGNED_IN_IDENTITY && !vendor.takes_personal_token() {
            return Err(invalid(format!(
                "identity {SIGNED_IN_IDENTITY:?} exists for github, jira and confluence only \
                 (the sign-in gives GitHub and Atlassian OAuth tokens), not {vendor_id}"
            )));
        }
        if name != DEFAULT_IDENTITY && name != SIGNED_IN_IDENTITY {
            let identity = identities
                .iter()
                .find(|i| i.name == name)
                .ok_or_else(|| invalid(format!("identity {name:?} is not defined")))?;
            if identity.vendor != vendor {
                return Err(invalid(format!(
                    "identity {name:?} is a {} identity, not {vendor_id}",
                    identity.vendor.id()
                )));
            }
        }
        chosen.push((vendor, name));
    }
    if raw.effect == Effect::Deny && !chosen.is_empty() {
        return Err(invalid("a deny rule cannot name identities"));
    }
    let approvers = match (raw.effect, raw.approvers) {
        (Effect::ApprovalRequired, Some(a)) => {
            if a.principals.is_empty() && a.groups.is_empty() {
                return Err(invalid("approvers names nobody"));
            }
            if let Some(bad) = a.principals.iter().find(|p| !valid_principal(p)) {
                return Err(invalid(format!(
                    "approvers: {bad:?} is not a principal name ({PRINCIPAL_SYNTAX})"
                )));
            }
            for g in &a.groups {
                known_group(g)?;
            }
            Approvers {
                principals: a.principals,
                groups: a.groups,
            }
        }
        (Effect::ApprovalRequired, None) => {
            return Err(invalid("an approval_required rule needs \"approvers\""))
        }
        (_, Some(_)) => return Err(invalid("only approval_required rules take \"approvers\"")),
        (_, None) => Approvers::default(),
    };
    Ok(Rule {
        id: raw.id,
        principals,
        groups: match_groups,
        tools,
        methods,
        paths,
        effect: raw.effect,
        identities: chosen,
        approvers,
        reason: raw.reason.filter(|r| !r.trim().is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(name: &str) -> Option<String> {
        (name != "UNSET").then(|| format!("secret-{name}"))
    }

    #[test]
    fn the_documented_example_is_valid() {
        let doc = include_str!("../../docs/policy.md");
        let start = doc
            .find("```json\n")
            .expect("docs/policy.md has a JSON example")
            + 8;
        let end = start + doc[start..].find("```").unwrap();
        let policy = parse(&doc[start..end], &settings).unwrap();
        assert_eq!(policy.identities.len(), 6);
        assert_eq!(policy.rules.len(), 5);
    }

    #[test]
    fn the_dev_vars_example_is_valid() {
        let example = include_str!("../../.dev.vars.example");
        let line = example
            .lines()
            .find_map(|l| l.strip_prefix("# MCP_POLICY="))
            .expect(".dev.vars.example shows an MCP_POLICY line");
        let policy = parse(line, &settings).unwrap();
        assert_eq!(policy.rules.len(), 1);
    }

    #[test]
    fn provider_groups_logins_addresses_and_stable_names_need_no_definition() {
        let doc = r#"{"groups": {"release": ["carol@example.com", "github~583231"]},
            "rules": [{"id": "a", "match": {"groups": ["github:acme", "oidc:Release Managers/EU"],
                       "principals": ["octo-cat", "ann+ci@example.com", "oidc~0123456789abcdef0123456789abcdef"]},
                       "effect": "allow"},
                      {"id": "b", "effect": "approval_required",
                       "approvers": {"groups": ["github:acme", "release"]}}]}"#;
        let policy = parse(doc, &settings).unwrap();
        assert_eq!(
            policy.rules[0].groups.as_deref(),
            Some(
                &[
                    "github:acme".to_owned(),
                    "oidc:Release Managers/EU".to_owned()
                ][..]
            )
        );
    }

    #[test]
    fn errors_name_the_entry_and_the_problem() {
        let cases = [
            (
                r#"{"rules": [{"id": "a", "effect": "allow", "extra": 1}]}"#,
                "unknown field `extra`",
            ),
            (r#"{"rules": []"#, "not valid JSON"),
            (
                r#"{"identities": [{"name": "x", "vendor": "github", "secret": "UNSET"}], "rules": []}"#,
                "identities[0] (\"x\"): secret UNSET is not set",
            ),
            (
                r#"{"identities": [{"name": "x", "vendor": "jira", "secret": "S"}], "rules": []}"#,
                "userSecret",
            ),
            (
                r#"{"identities": [{"name": "default", "vendor": "github", "secret": "S"}], "rules": []}"#,
                "reserved",
            ),
            (
                r#"{"identities": [{"name": "signed-in-user", "vendor": "github", "secret": "S"}], "rules": []}"#,
                "reserved for a signed-in person's own token",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "allow", "identities": {"bitbucket": "signed-in-user"}}]}"#,
                "exists for github, jira and confluence only",
            ),
            (
                r#"{"identities": [{"name": "x", "vendor": "github", "secret": "S"}, {"name": "x", "vendor": "github", "secret": "S"}], "rules": []}"#,
                "defined twice",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "allow"}, {"id": "a", "effect": "deny"}]}"#,
                "used twice",
            ),
            (
                r#"{"rules": [{"id": "a", "match": {"groups": ["g"]}, "effect": "allow"}]}"#,
                "group \"g\" is not defined",
            ),
            (
                r#"{"rules": [{"id": "a", "match": {"methods": ["get"]}, "effect": "allow"}]}"#,
                "method \"get\"",
            ),
            (
                r#"{"rules": [{"id": "a", "match": {"paths": ["rest/**"]}, "effect": "allow"}]}"#,
                "must start with '/'",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "allow", "identities": {"jira": "nope"}}]}"#,
                "identity \"nope\" is not defined",
            ),
            (
                r#"{"identities": [{"name": "g", "vendor": "github", "secret": "S"}], "rules": [{"id": "a", "effect": "allow", "identities": {"jira": "g"}}]}"#,
                "a github identity, not jira",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "deny", "identities": {"jira": "default"}}]}"#,
                "deny rule cannot name identities",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "approval_required"}]}"#,
                "needs \"approvers\"",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "approval_required", "approvers": {}}]}"#,
                "names nobody",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "allow", "approvers": {"principals": ["x"]}}]}"#,
                "only approval_required",
            ),
            (
                r#"{"rules": [{"id": "a b", "effect": "allow"}]}"#,
                "the id must be",
            ),
            (
                r#"{"groups": {"g": ["bad name"]}, "rules": []}"#,
                "not a principal name",
            ),
            (
                r#"{"groups": {"acme": []}, "rules": []}"#,
                "groups.acme lists nobody: a group of the identity provider is named directly \
                 in rules and approvers as github:acme",
            ),
            (
                r#"{"rules": [{"id": "a", "match": {"groups": ["acme"]}, "effect": "allow"}]}"#,
                "written github:acme or oidc:acme",
            ),
            (
                r#"{"rules": [{"id": "a", "match": {"groups": ["github:a b"]}, "effect": "allow"}]}"#,
                "\"github:a b\" is not a provider group",
            ),
            (
                r#"{"rules": [{"id": "a", "effect": "approval_required", "approvers": {"groups": ["oidc:"]}}]}"#,
                "is not a provider group",
            ),
            (
                r#"{"groups": {"github:acme": ["x"]}, "rules": []}"#,
                "group name \"github:acme\" must be",
            ),
            (
                r#"{"rules": [{"id": "a", "match": {"principals": ["gh:1"]}, "effect": "allow"}]}"#,
                "not a principal name (a static token's principal, a GitHub login",
            ),
        ];
        for (doc, expected) in cases {
            let err = parse(doc, &settings).unwrap_err().to_string();
            assert!(err.contains(expected), "{doc}\n  -> {err}");
            assert!(!err.contains("secret-"), "a secret value leaked: {err}");
        }
    }
}
