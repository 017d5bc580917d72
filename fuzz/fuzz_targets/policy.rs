//! The policy matcher: an arbitrary document (after four lines: principal, tool, method, path)
//! and one call. For every document that validates:
//! - default deny: no deciding rule means deny, with no identity and no approvers;
//! - first match: the deciding rule matches on its own, and no earlier rule does;
//! - the decision carries its rule's effect; deny never names an identity; only approval rules
//!   name approvers;
//! - spelling: the decision is the same when a letter of the path is upper-cased or written as
//!   a percent escape (no spelling slips past a deny rule);
//! - bounded work: glob matching takes at most a constant times (globs' bytes) x (path's and
//!   tool's bytes) steps, counted rather than timed so a loaded machine reports no false crash.
#![no_main]

use devtools_mcp_edge::policy::{glob, Decision, Effect, Policy};
use devtools_mcp_edge::upstream::{ApiPath, Method, Target, Vendor};
use devtools_mcp_edge_fuzz::split_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (principal, rest) = split_line(data);
    let (tool, rest) = split_line(rest);
    let (method, rest) = split_line(rest);
    let (path, document) = split_line(rest);
    let (Ok(principal), Ok(tool), Ok(method), Ok(path), Ok(document)) = (
        std::str::from_utf8(principal),
        std::str::from_utf8(tool),
        std::str::from_utf8(method),
        std::str::from_utf8(path),
        std::str::from_utf8(document),
    ) else {
        return;
    };
    // Every named secret is set, so documents fail only on their own shape.
    let Ok(policy) = Policy::parse(document, &|name| Some(format!("secret-of-{name}"))) else {
        return;
    };
    let method = match method {
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "PATCH" => Method::Patch,
        "DELETE" => Method::Delete,
        _ => Method::Get,
    };
    let vendor = vendor_of(tool);
    let api_path = if path.is_empty() {
        None
    } else {
        ApiPath::parse(path).ok()
    };
    let target = api_path.as_ref().map(|p| Target::new(vendor, method, p));
    let before = glob::steps();
    let decision = policy.decide(principal, tool, target.clone());
    let steps = glob::steps() - before;
    // Each glob is matched once per call, and a glob of g bytes against a text of t bytes takes
    // at most (g + 1)(t + 1) steps of the wildcard plus a step per path segment and glob segment.
    let bound = 4 * (document.len() as u64 + 1) * ((path.len() + tool.len()) as u64 + 2);
    assert!(
        steps <= bound,
        "glob matching took {steps} steps, over {bound}, for {} bytes of policy",
        document.len()
    );

    match &decision.rule {
        None => {
            assert_eq!(
                decision.effect,
                Effect::Deny,
                "no rule but not deny: {decision:?}"
            );
            assert!(
                decision.identity.is_none(),
                "default deny names an identity"
            );
            for (i, rule) in policy.rules.iter().enumerate() {
                let alone = only(&policy, i).decide(principal, tool, target.clone());
                assert!(
                    alone.rule.is_none(),
                    "rule {} matches alone but not in order",
                    rule.id
                );
            }
        }
        Some(id) => {
            let k = policy
                .rules
                .iter()
                .position(|r| &r.id == id)
                .unwrap_or_else(|| panic!("deciding rule {id} is not in the document"));
            assert_eq!(decision.effect, policy.rules[k].effect, "effect of {id}");
            let alone = only(&policy, k).decide(principal, tool, target.clone());
            assert_eq!(
                alone.rule.as_deref(),
                Some(id.as_str()),
                "{id} does not match alone"
            );
            for j in 0..k {
                let earlier = only(&policy, j).decide(principal, tool, target.clone());
                assert!(
                    earlier.rule.is_none(),
                    "earlier rule {} matches too",
                    policy.rules[j].id
                );
            }
        }
    }
    if decision.effect == Effect::Deny {
        assert!(
            decision.identity.is_none(),
            "a deny names an identity: {decision:?}"
        );
    }
    if decision.effect != Effect::ApprovalRequired {
        assert!(
            decision.approvers.is_empty(),
            "approvers outside approval: {decision:?}"
        );
    }

    if let Some(api_path) = &api_path {
        for spelling in respellings(api_path.path()) {
            let Ok(other) = ApiPath::parse(&spelling) else {
                continue;
            };
            let other = policy.decide(principal, tool, Some(Target::new(vendor, method, &other)));
            assert!(
                same_outcome(&decision, &other),
                "{spelling:?} decides {other:?} but {:?} decides {decision:?}",
                api_path.path()
            );
        }
    }
});

fn vendor_of(tool: &str) -> Vendor {
    match tool.split('_').next() {
        Some("github") => Vendor::GitHub,
        Some("circleci") => Vendor::CircleCi,
        Some("conf") => Vendor::Confluence,
        Some("bb") => Vendor::Bitbucket,
        _ => Vendor::Jira,
    }
}

/// The policy with only rule `i`.
fn only(policy: &Policy, i: usize) -> Policy {
    let mut alone = policy.clone();
    alone.rules = vec![policy.rules[i].clone()];
    alone
}

/// The path with its first ASCII letter upper-cased, and with it percent-escaped.
fn respellings(path: &str) -> Vec<String> {
    let Some(at) = path.find(|c: char| c.is_ascii_alphabetic()) else {
        return Vec::new();
    };
    let letter = path.as_bytes()[at];
    let (head, tail) = (&path[..at], &path[at + 1..]);
    vec![
        format!("{head}{}{tail}", letter.to_ascii_uppercase() as char),
        format!("{head}%{letter:02X}{tail}"),
    ]
}

fn same_outcome(a: &Decision, b: &Decision) -> bool {
    a.effect == b.effect && a.rule == b.rule && a.identity == b.identity
}
