//! Object keys: shared, immutable strings.
//!
//! A page of API results repeats the same few dozen keys in every item. Parsing gives each
//! distinct key one allocation and every entry a reference to it ([`Interner`]), where a
//! `String` per entry would cost an allocation each and four more bytes in every entry.

use std::borrow::Borrow;
use std::collections::BTreeMap;
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
/// [`Interner::MAX_KEYS`] are allocated on their own. An ordered map rather than a hash table:
/// its cost does not depend on the keys' hashes, which the upstream chooses.
///
/// The items of a page have the same keys in the same order, so each shared key remembers the
/// keys of the last object that was its value (or an item of its array value), and the n-th key
/// of the next such object is first compared with the n-th key of that one
/// ([`Interner::guessed`], on the JSON text itself): a page's keys are found with one comparison
/// each, the ordered map searched only when the guess is wrong (a hostile body can make every
/// guess wrong, which costs one comparison more).
#[derive(Default)]
pub struct Interner {
    /// The shared keys, by id.
    slots: Vec<Slot>,
    /// The id of every shared key.
    ids: BTreeMap<Key, u32>,
    /// The mark [`Interner::close_object`] set on the keys of the object it saw last.
    mark: u32,
    /// The slot of [`Interner::root`], once asked for.
    root: Option<u32>,
}

struct Slot {
    key: Key,
    /// Whether the key is integer-like (see [`crate::js::array_index_key`]).
    array_index: bool,
    /// Whether the key is written in JSON as it is (no character in it needs an escape).
    plain: bool,
    /// The last [`Interner::close_object`] mark set on it.
    mark: u32,
    /// The ids of the keys of the last object that was this key's value (at most
    /// [`Interner::SHAPE_KEYS`]).
    shape: Vec<u32>,
}

impl Interner {
    /// Longest key shared, in bytes.
    pub(crate) const MAX_KEY_BYTES: usize = 64;
    /// Most keys shared in one parse.
    pub(crate) const MAX_KEYS: usize = 4096;
    /// The id of a key not shared, and the owner of an object that is no key's value.
    pub(crate) const UNSHARED: u32 = u32::MAX;
    /// Most keys of an object remembered for the guess.
    const SHAPE_KEYS: usize = 256;

    /// The key `text`, shared with earlier ones when it is one of them (the tests' shorthand for
    /// [`Interner::key_and_id`]).
    #[cfg(test)]
    fn key(&mut self, text: &str) -> Key {
        self.key_and_id(text).0
    }

    /// The guess for the `index`-th key of an object that is the value of the key of id `owner`,
    /// and its id, when `json` (the JSON text after the key's opening quote) starts with it: the
    /// key as written, then the closing quote.
    pub(crate) fn guessed(&self, owner: u32, index: usize, json: &[u8]) -> Option<(Key, u32)> {
        let id = *self.slot(owner)?.shape.get(index)?;
        let slot = self.slot(id)?;
        let key = slot.key.as_bytes();
        // A plain key's text cannot hold a quote, so the quote after it closes the JSON string.
        (slot.plain && json.get(key.len()) == Some(&b'"') && json.starts_with(key))
            .then(|| (slot.key.clone(), id))
    }

    /// The key `text` and its id for [`Interner::close_object`] ([`Interner::UNSHARED`] when the
    /// key is not shared).
    pub(crate) fn key_and_id(&mut self, text: &str) -> (Key, u32) {
        let id = match self.ids.get(text) {
            Some(&id) => id,
            None if text.len() > Self::MAX_KEY_BYTES || self.slots.len() >= Self::MAX_KEYS => {
                return (Key::from(text), Self::UNSHARED);
            }
            None => {
                let key = Key::from(text);
                // Fewer than MAX_KEYS, so below UNSHARED.
                let id = self.slots.len() as u32;
                self.ids.insert(key.clone(), id);
                self.slots.push(Slot {
                    array_index: crate::js::array_index_key(text).is_some(),
                    plain: crate::js::next_escape(text.as_bytes(), 0) == text.len(),
                    key,
                    mark: 0,
                    shape: Vec::new(),
                });
                id
            }
        };
        (self.slots[id as usize].key.clone(), id)
    }

    /// The owner of the whole text's value, which no key owns: the items of a top-level array
    /// are guessed from the item before, as a key's are. Its slot is never a key's: no text
    /// finds it and no object's keys include it.
    pub(crate) fn root(&mut self) -> u32 {
        if let Some(id) = self.root {
            return id;
        }
        // At most MAX_KEYS slots before it, so far below UNSHARED.
        let id = self.slots.len() as u32;
        self.slots.push(Slot {
            key: Key::from(""),
            array_index: false,
            plain: false,
            mark: 0,
            shape: Vec::new(),
        });
        self.root = Some(id);
        id
    }

    fn slot(&self, id: u32) -> Option<&Slot> {
        self.slots.get(id as usize)
    }

    /// An object whose keys have these ids closes, the value of the key of id `owner`: its keys
    /// become the guess for the next one's. Returns whether its keys are known to be distinct
    /// and none integer-like, so that the object keeps its entries as they come
    /// ([`crate::js::JsMap::from_distinct_named`]); false when in doubt (a key not shared), so
    /// that the object is built the general way.
    pub(crate) fn close_object(&mut self, owner: u32, ids: &[u32]) -> bool {
        if let Some(slot) = self.slots.get_mut(owner as usize) {
            let ids = &ids[..ids.len().min(Self::SHAPE_KEYS)];
            if slot.shape != ids {
                slot.shape.clear();
                slot.shape.extend_from_slice(ids);
            }
        }
        // A mark repeats only after 2^32 objects; a stale one can only make the answer false.
        self.mark = self.mark.wrapping_add(1);
        for &id in ids {
            match self.slots.get_mut(id as usize) {
                Some(slot) if !slot.array_index && slot.mark != self.mark => slot.mark = self.mark,
                _ => return false,
            }
        }
        true
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
    fn the_guess_is_the_key_at_the_same_place_in_the_last_object_of_the_owner() {
        let mut keys = Interner::default();
        let (owner, (a, ida), (ab, idab)) = (
            keys.key_and_id("items").1,
            keys.key_and_id("a"),
            keys.key_and_id("a\"b"),
        );
        assert!(keys.guessed(owner, 0, b"a\":1").is_none());
        assert!(keys.close_object(owner, &[ida, idab]));
        let (guess, id) = keys.guessed(owner, 0, b"a\":1").unwrap();
        assert!(shared(&guess, &a) && id == ida);
        for other in [&b"ab\":1"[..], b"b\":1", b"a", b""] {
            assert!(keys.guessed(owner, 0, other).is_none(), "{other:?}");
        }
        // Not a key as written in JSON: it is never guessed, but still shared.
        assert!(keys.guessed(owner, 1, b"a\"b\":1").is_none());
        assert!(shared(&keys.key("a\"b"), &ab));
        assert!(keys.guessed(owner, 2, b"a\":1").is_none());
        // A repeated or integer-like key makes an object not known distinct.
        assert!(!keys.close_object(owner, &[ida, ida]));
        let (_, one) = keys.key_and_id("1");
        assert!(!keys.close_object(owner, &[one]));
        assert!(!keys.close_object(owner, &[ida, Interner::UNSHARED]));
    }

    #[test]
    fn long_keys_and_keys_past_the_bound_are_not_kept() {
        let mut keys = Interner::default();
        let long = "k".repeat(Interner::MAX_KEY_BYTES + 1);
        assert!(!shared(&keys.key(&long), &keys.key(&long)));
        for i in 0..Interner::MAX_KEYS {
            keys.key(&format!("k{i}"));
        }
        assert_eq!(keys.slots.len(), Interner::MAX_KEYS);
        assert!(!shared(&keys.key("new"), &keys.key("new")));
        // Those kept before the bound are still shared.
        assert!(shared(&keys.key("k0"), &keys.key("k0")));
    }
}
