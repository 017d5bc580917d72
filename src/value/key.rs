//! Object keys: shared, immutable strings.
//!
//! A page of API results repeats the same few dozen keys in every item. Parsing gives each
//! distinct key one allocation and every entry a reference to it ([`Interner`]), where a
//! `String` per entry would cost an allocation each and four more bytes in every entry.

use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An object key: a string shared by every entry that has it.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Key(Arc<str>);

impl Key {
    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Key {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key(s.into())
    }
}

impl From<String> for Key {
    fn from(s: String) -> Key {
        Key(s.into())
    }
}

impl From<&String> for Key {
    fn from(s: &String) -> Key {
        Key(s.as_str().into())
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.as_str().to_owned()
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Key {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Key {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The keys met so far in one parse, each shared by every entry that has it. Bounded, so that
/// a body of ever new keys costs no more than one allocation per key, as without it: keys
/// longer than [`Interner::MAX_KEY_BYTES`] and keys met once the set holds
/// [`Interner::MAX_KEYS`] are allocated on their own. An ordered set rather than a hash table:
/// its cost does not depend on the keys' hashes, which the upstream chooses.
#[derive(Default)]
pub struct Interner {
    keys: BTreeSet<Key>,
}

impl Interner {
    /// Longest key shared, in bytes.
    pub const MAX_KEY_BYTES: usize = 64;
    /// Most keys shared in one parse.
    pub const MAX_KEYS: usize = 4096;

    /// The key `text`, shared with earlier ones when it is one of them.
    pub fn key(&mut self, text: &str) -> Key {
        if text.len() > Self::MAX_KEY_BYTES {
            return Key::from(text);
        }
        if let Some(key) = self.keys.get(text) {
            return key.clone();
        }
        let key = Key::from(text);
        if self.keys.len() < Self::MAX_KEYS {
            self.keys.insert(key.clone());
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(a: &Key, b: &Key) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    #[test]
    fn a_repeated_key_is_one_allocation() {
        let mut keys = Interner::default();
        let a = keys.key("id");
        let b = keys.key("id");
        assert_eq!(a, b);
        assert!(shared(&a, &b));
        assert!(!shared(&a, &keys.key("name")));
    }

    #[test]
    fn long_keys_and_keys_past_the_bound_are_not_kept() {
        let mut keys = Interner::default();
        let long = "k".repeat(Interner::MAX_KEY_BYTES + 1);
        assert!(!shared(&keys.key(&long), &keys.key(&long)));
        for i in 0..Interner::MAX_KEYS {
            keys.key(&format!("k{i}"));
        }
        assert_eq!(keys.keys.len(), Interner::MAX_KEYS);
        assert!(!shared(&keys.key("new"), &keys.key("new")));
        // Those kept before the bound are still shared.
        assert!(shared(&keys.key("k0"), &keys.key("k0")));
    }
}
