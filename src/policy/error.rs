//! Why a policy document cannot be used, classified by who can act on it. The text
//! ([`fmt::Display`]) is written only where it is shown: the refusal a client reads and the log
//! line an operator reads. It names the entry at fault and never quotes a secret's value.

use std::fmt;

/// Why a policy document cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyError {
    /// The document is not JSON: where the parser stopped.
    NotJson {
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
    },
    /// The document is JSON but not of the document's shape (an unknown member, a wrong type).
    Shape(String),
    /// A value the document gives is not valid: a name, a glob, a method, a reference to an
    /// undefined group or identity, or members that do not go together.
    Invalid(String),
    /// A secret an identity names is not set in the deployment.
    SecretUnset(String),
    /// A secret name that cannot hold a credential (`MCP_` settings are the server's).
    SecretReserved(String),
    /// The problem of one entry of the document, named as the document lists it
    /// (`identities[0] ("bot")`, `rules[2] ("ops")`).
    At(String, Box<PolicyError>),
    /// The stored document is not UTF-8 text.
    NotText,
    /// No document is stored where the settings say.
    Missing,
    /// The store holding the document could not be read; the detail is the store's.
    Unreadable(String),
}

/// Who can act on a [`PolicyError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// The document's author: its text is to be fixed.
    Document,
    /// The deployment's operator: a secret the document names is to be set.
    Secret,
    /// Nobody in the document: the store is missing the document or failing.
    Store,
}

impl Class {
    /// The stable name log lines carry.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Class::Document => "document",
            Class::Secret => "secret",
            Class::Store => "store",
        }
    }
}

impl PolicyError {
    /// This error, as the problem of the entry named `entry`.
    pub(crate) fn at(self, entry: String) -> PolicyError {
        PolicyError::At(entry, Box::new(self))
    }

    /// Who can act on it.
    pub(crate) fn class(&self) -> Class {
        match self {
            PolicyError::At(_, inner) => inner.class(),
            PolicyError::NotJson { .. }
            | PolicyError::Shape(_)
            | PolicyError::Invalid(_)
            | PolicyError::SecretReserved(_) => Class::Document,
            PolicyError::SecretUnset(_) => Class::Secret,
            PolicyError::NotText | PolicyError::Missing | PolicyError::Unreadable(_) => {
                Class::Store
            }
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::NotJson { line, column } => {
                write!(f, "not valid JSON (line {line}, column {column})")
            }
            PolicyError::Shape(text) | PolicyError::Invalid(text) => f.write_str(text),
            PolicyError::SecretUnset(name) => write!(f, "secret {name} is not set"),
            PolicyError::SecretReserved(name) => write!(
                f,
                "{name:?} cannot hold a credential (MCP_ settings belong to the server)"
            ),
            PolicyError::At(entry, inner) => write!(f, "{entry}: {inner}"),
            PolicyError::NotText => f.write_str("not UTF-8 text"),
            PolicyError::Missing => f.write_str("missing"),
            PolicyError::Unreadable(detail) => f.write_str(detail),
        }
    }
}

impl From<serde_json::Error> for PolicyError {
    fn from(error: serde_json::Error) -> PolicyError {
        if error.is_data() {
            PolicyError::Shape(error.to_string())
        } else {
            PolicyError::NotJson {
                line: error.line(),
                column: error.column(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_the_class_of_their_problem() {
        let unset = PolicyError::SecretUnset("GH".into()).at("identities[0] (\"bot\")".into());
        assert_eq!(
            unset.to_string(),
            "identities[0] (\"bot\"): secret GH is not set"
        );
        assert_eq!(unset.class(), Class::Secret);
        let shape = PolicyError::from(serde_json::from_str::<u8>("\"x\"").unwrap_err());
        assert_eq!(shape.class(), Class::Document);
        assert_eq!(PolicyError::Missing.class().as_str(), "store");
    }
}
