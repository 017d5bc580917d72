//! The JavaScript-ordered map: the key order of a JavaScript object, with inserts and lookups
//! that stay O(log n) however large the object grows.
//!
//! A JavaScript object lists integer-like keys ("0" to "4294967294" in canonical form) first in
//! ascending numeric order, then every other key in insertion order; assigning a key it already
//! has keeps the key's place and replaces the value. The JSON value and the JMESPath
//! interpreter's own objects both keep that order through [`JsMap`].

use std::borrow::Borrow;
use std::collections::{btree_map, BTreeMap};

/// Up to this many named entries, a lookup scans them: faster than any index for the small
/// objects most documents are made of, and no memory spent on one.
const LINEAR_MAX: usize = 16;

/// The numeric value of a key that JavaScript treats as an array index ("0".."4294967294",
/// no leading zeros, no sign).
pub fn array_index_key(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || (bytes.len() > 1 && bytes[0] == b'0') {
        return None;
    }
    if !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    (n <= 4_294_967_294).then_some(n as u32)
}

/// Entries in JavaScript object key order.
///
/// The common object (a few named keys) is one vector scanned on lookup. Integer-like keys live
/// in an ordered tree, and a named-key index is built once the object passes [`LINEAR_MAX`]
/// named keys and a key is assigned, so that building an object of n keys costs O(n log n) in
/// any key order. Ordered trees rather than hash tables: their cost does not depend on the keys'
/// hashes, which a hostile caller or upstream chooses.
#[derive(Clone, Debug)]
pub struct JsMap<K, V> {
    /// Entries whose keys are not array indices, in insertion order, each key once.
    named: Vec<(K, V)>,
    /// Only for objects with integer-like keys or many named ones.
    extra: Option<Box<Extra<K, V>>>,
}

#[derive(Clone, Debug)]
struct Extra<K, V> {
    /// Entries with integer-like keys, by numeric value.
    indexed: BTreeMap<u32, (K, V)>,
    /// The position in `named` of every named key, or empty while the map has not needed it.
    positions: BTreeMap<K, usize>,
}

impl<K, V> Default for Extra<K, V> {
    fn default() -> Self {
        Extra {
            indexed: BTreeMap::new(),
            positions: BTreeMap::new(),
        }
    }
}

impl<K, V> Default for JsMap<K, V> {
    fn default() -> Self {
        JsMap {
            named: Vec::new(),
            extra: None,
        }
    }
}

impl<K: PartialEq, V: PartialEq> PartialEq for JsMap<K, V> {
    /// Equal when both list the same entries in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// Whether two entries share a key: pairwise for small objects, by sorting for large ones.
fn has_repeated_key<K: Borrow<str>, V>(entries: &[(K, V)]) -> bool {
    if entries.len() <= LINEAR_MAX {
        return entries.iter().enumerate().any(|(i, (k, _))| {
            entries[..i]
                .iter()
                .any(|(other, _)| other.borrow() == k.borrow())
        });
    }
    let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.borrow()).collect();
    keys.sort_unstable();
    keys.windows(2).any(|pair| pair[0] == pair[1])
}

impl<K, V> JsMap<K, V> {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.named.len() + self.extra.as_ref().map_or(0, |x| x.indexed.len())
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entries in JavaScript key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter {
            indexed: self.extra.as_ref().map(|x| x.indexed.values()),
            named: self.named.iter(),
        }
    }

    /// Keys in JavaScript key order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }

    /// Values in JavaScript key order.
    pub(crate) fn values(&self) -> impl ExactSizeIterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }

    /// The values in JavaScript key order, mutably (keys and their order cannot change).
    pub(crate) fn values_mut(&mut self) -> impl ExactSizeIterator<Item = &mut V> {
        IterMut {
            indexed: self.extra.as_mut().map(|x| x.indexed.values_mut()),
            named: self.named.iter_mut(),
        }
    }
}

impl<K: Borrow<str> + Ord, V> JsMap<K, V> {
    /// The value at `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        let Some(extra) = &self.extra else {
            return self.scan(key).map(|i| &self.named[i].1);
        };
        match array_index_key(key) {
            Some(n) => extra.indexed.get(&n).map(|(_, v)| v),
            None => self.named_position(key).map(|i| &self.named[i].1),
        }
    }

    /// The value at `key`, mutably.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        if let Some(n) = array_index_key(key) {
            return self.extra.as_mut()?.indexed.get_mut(&n).map(|(_, v)| v);
        }
        let i = self.named_position(key)?;
        Some(&mut self.named[i].1)
    }

    /// Whether `key` is present.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn named_position(&self, key: &str) -> Option<usize> {
        match &self.extra {
            Some(extra) if !extra.positions.is_empty() => extra.positions.get(key).copied(),
            _ => self.scan(key),
        }
    }

    fn scan(&self, key: &str) -> Option<usize> {
        self.named.iter().position(|(k, _)| k.borrow() == key)
    }
}

impl<K: Borrow<str> + Ord + Clone, V> JsMap<K, V> {
    /// An object from entries in insertion order, as `JSON.parse` or an object literal builds it.
    pub(crate) fn from_entries<Q: Into<K>, I: IntoIterator<Item = (Q, V)>>(entries: I) -> Self {
        let named: Vec<(K, V)> = entries.into_iter().map(|(k, v)| (k.into(), v)).collect();
        // The common case, no integer-like and no repeated key, keeps the vector as it is.
        if !named
            .iter()
            .any(|(k, _)| array_index_key(k.borrow()).is_some())
            && !has_repeated_key(&named)
        {
            return JsMap { named, extra: None };
        }
        let mut map = JsMap::new();
        for (k, v) in named {
            map.insert(k, v);
        }
        map
    }

    /// An object of entries whose keys the caller knows to be distinct and none integer-like, in
    /// insertion order: [`JsMap::from_entries`] without its checks (the parser knows its keys).
    pub(crate) fn from_distinct_named(named: Vec<(K, V)>) -> Self {
        debug_assert!(
            !has_repeated_key(&named)
                && !named
                    .iter()
                    .any(|(k, _)| array_index_key(k.borrow()).is_some())
        );
        JsMap { named, extra: None }
    }

    /// Sets `key` to `value`, as `object[key] = value` does: a new integer-like key takes its
    /// numeric place, any other new key goes last, an existing key keeps its place. Returns the
    /// previous value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(n) = array_index_key(key.borrow()) {
            let extra = self.extra.get_or_insert_with(Box::default);
            return match extra.indexed.entry(n) {
                btree_map::Entry::Occupied(mut slot) => {
                    Some(std::mem::replace(&mut slot.get_mut().1, value))
                }
                btree_map::Entry::Vacant(slot) => {
                    slot.insert((key, value));
                    None
                }
            };
        }
        if self.named.len() >= LINEAR_MAX {
            self.index_names();
        }
        if let Some(i) = self.named_position(key.borrow()) {
            return Some(std::mem::replace(&mut self.named[i].1, value));
        }
        if let Some(extra) = self.extra.as_mut().filter(|x| !x.positions.is_empty()) {
            extra.positions.insert(key.clone(), self.named.len());
        }
        self.named.push((key, value));
        None
    }

    /// Builds the named-key index unless it exists.
    fn index_names(&mut self) {
        let extra = self.extra.get_or_insert_with(Box::default);
        if extra.positions.is_empty() {
            extra.positions = self
                .named
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect();
        }
    }
}

/// The entries of a [`JsMap`] in JavaScript key order.
pub struct Iter<'a, K, V> {
    indexed: Option<btree_map::Values<'a, u32, (K, V)>>,
    named: std::slice::Iter<'a, (K, V)>,
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(indexed) = &mut self.indexed {
            if let Some((k, v)) = indexed.next() {
                return Some((k, v));
            }
        }
        self.named.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.named.len() + self.indexed.as_ref().map_or(0, ExactSizeIterator::len);
        (n, Some(n))
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

struct IterMut<'a, K, V> {
    indexed: Option<btree_map::ValuesMut<'a, u32, (K, V)>>,
    named: std::slice::IterMut<'a, (K, V)>,
}

impl<'a, K, V> Iterator for IterMut<'a, K, V> {
    type Item = &'a mut V;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(indexed) = &mut self.indexed {
            if let Some((_, v)) = indexed.next() {
                return Some(v);
            }
        }
        self.named.next().map(|(_, v)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.named.len() + self.indexed.as_ref().map_or(0, ExactSizeIterator::len);
        (n, Some(n))
    }
}

impl<K, V> ExactSizeIterator for IterMut<'_, K, V> {}

/// The entries of a [`JsMap`] by value, in JavaScript key order.
pub struct IntoIter<K, V> {
    indexed: Option<btree_map::IntoValues<u32, (K, V)>>,
    named: std::vec::IntoIter<(K, V)>,
}

impl<K, V> Iterator for IntoIter<K, V> {
    type Item = (K, V);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(indexed) = &mut self.indexed {
            if let Some(entry) = indexed.next() {
                return Some(entry);
            }
        }
        self.named.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.named.len() + self.indexed.as_ref().map_or(0, ExactSizeIterator::len);
        (n, Some(n))
    }
}

impl<K, V> ExactSizeIterator for IntoIter<K, V> {}

impl<K, V> IntoIterator for JsMap<K, V> {
    type Item = (K, V);
    type IntoIter = IntoIter<K, V>;

    fn into_iter(self) -> IntoIter<K, V> {
        IntoIter {
            indexed: self.extra.map(|x| x.indexed.into_values()),
            named: self.named.into_iter(),
        }
    }
}

impl<'a, K, V> IntoIterator for &'a JsMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Iter<'a, K, V> {
        self.iter()
    }
}

impl<K: Borrow<str> + Ord + Clone, V> FromIterator<(K, V)> for JsMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        JsMap::from_entries(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(m: &JsMap<String, i32>) -> Vec<&str> {
        m.keys().map(String::as_str).collect()
    }

    fn build(keys: impl IntoIterator<Item = String>) -> JsMap<String, usize> {
        let mut m = JsMap::new();
        for (i, k) in keys.into_iter().enumerate() {
            m.insert(k, i);
        }
        m
    }

    #[test]
    fn array_index_keys() {
        for (key, want) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("4294967294", Some(4_294_967_294)),
            ("4294967295", None),
            ("01", None),
            ("-1", None),
            ("+1", None),
            ("1.0", None),
            ("", None),
            ("99999999999", None),
        ] {
            assert_eq!(array_index_key(key), want, "{key:?}");
        }
    }

    #[test]
    fn insert_orders_keys_as_javascript_does() {
        let mut m = JsMap::new();
        for (i, k) in ["b", "10", "a", "2", "01", "-1", "4294967295", "4294967294"]
            .into_iter()
            .enumerate()
        {
            assert_eq!(m.insert(k.to_owned(), i as i32), None);
        }
        assert_eq!(
            keys(&m),
            ["2", "10", "4294967294", "b", "a", "01", "-1", "4294967295"]
        );
        // A repeated key keeps its place and takes the new value.
        assert_eq!(m.insert("a".into(), 40), Some(2));
        assert_eq!(m.insert("10".into(), 41), Some(1));
        assert_eq!(keys(&m)[4], "a");
        assert_eq!(
            (m.get("a"), m.get("10"), m.get("zz")),
            (Some(&40), Some(&41), None)
        );
        assert_eq!(m.len(), 8);
        *m.get_mut("2").unwrap() += 100;
        *m.get_mut("b").unwrap() += 100;
        assert_eq!(
            m.values().copied().collect::<Vec<_>>()[..4],
            [103, 41, 7, 100]
        );
        assert!(m.contains_key("-1") && !m.contains_key("3"));
    }

    #[test]
    fn from_entries_dedupes_small_and_large_objects() {
        for n in [3, LINEAR_MAX, LINEAR_MAX + 1, 100] {
            let mut entries: Vec<(String, i32)> =
                (0..n).map(|i| (format!("k{i}"), i as i32)).collect();
            entries.push(("k1".into(), -1));
            entries.push(("5".into(), -5));
            let m = JsMap::from_entries(entries);
            assert_eq!(m.len(), n + 1, "n {n}");
            assert_eq!(keys(&m)[0], "5");
            assert_eq!(keys(&m)[2], "k1");
            assert_eq!(m.get("k1"), Some(&-1));
            assert_eq!(m.get(&format!("k{}", n - 1)), Some(&(n as i32 - 1)));
        }
    }

    /// The order and lookups are the same below and above the size where the named-key index
    /// takes over, and after it was built lazily on a map made by `from_entries`.
    #[test]
    fn named_index_agrees_with_the_scan() {
        let names: Vec<String> = (0..3 * LINEAR_MAX)
            .map(|i| format!("n{}", i * 7 % 41))
            .collect();
        let m = build(names.iter().cloned());
        let mut distinct: Vec<&String> = Vec::new();
        for name in &names {
            if !distinct.contains(&name) {
                distinct.push(name);
            }
        }
        assert_eq!(m.keys().collect::<Vec<_>>(), distinct);
        for name in &distinct {
            let last = names.iter().rposition(|n| n == *name).unwrap();
            assert_eq!(m.get(name), Some(&last), "{name}");
        }
        let mut lazy: JsMap<String, usize> =
            JsMap::from_entries(distinct.iter().map(|k| ((*k).clone(), 0)));
        assert_eq!(lazy.insert(distinct[3].clone(), 9), Some(0));
        assert_eq!(lazy.insert("new".into(), 1), None);
        assert_eq!(lazy.get(distinct[3]), Some(&9));
        assert_eq!(lazy.keys().last().map(String::as_str), Some("new"));
        assert_eq!(lazy.len(), distinct.len() + 1);
    }

    #[test]
    fn integer_keys_sort_in_any_insertion_order() {
        let n = 2_000u32;
        let descending = build((0..n).rev().map(|i| i.to_string()));
        let scattered = build((0..n).map(|i| (i * 7919 % n).to_string()));
        let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        for m in [&descending, &scattered] {
            assert_eq!(m.keys().cloned().collect::<Vec<_>>(), want);
            assert_eq!(m.iter().len(), n as usize);
        }
        assert_eq!(descending.get("0"), Some(&(n as usize - 1)));
    }

    thread_local! {
        static KEY_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A key that counts every time the map reads it (compares, hashes or borrows it).
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Counted(String);

    impl Counted {
        fn read(&self) -> &str {
            KEY_READS.with(|n| n.set(n.get() + 1));
            &self.0
        }
    }

    impl Borrow<str> for Counted {
        fn borrow(&self) -> &str {
            self.read()
        }
    }

    impl PartialOrd for Counted {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }

    impl Ord for Counted {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.read().cmp(other.read())
        }
    }

    /// Building an object reads each key O(log n) times in any key order, so building grows
    /// linearly (times a logarithm) with the object; a scan per insert would read ~n²/2 keys.
    #[test]
    fn building_reads_each_key_a_logarithmic_number_of_times() {
        let n = 30_000usize;
        let key = |order: &str, i: usize| match order {
            "named" => format!("key{i}"),
            "integers ascending" => i.to_string(),
            "integers descending" => (n - i).to_string(),
            _ if i.is_multiple_of(2) => i.to_string(),
            _ => format!("k{i}"),
        };
        for name in [
            "named",
            "integers ascending",
            "integers descending",
            "mixed",
        ] {
            KEY_READS.with(|c| c.set(0));
            let mut m = JsMap::new();
            for i in 0..n {
                m.insert(Counted(key(name, i)), i);
            }
            // Assigning every key again must not scan either.
            for i in (0..n).step_by(10) {
                assert_eq!(m.insert(Counted(key(name, i)), 0), Some(i));
            }
            let reads = KEY_READS.with(std::cell::Cell::get);
            assert_eq!(m.len(), n);
            // About 90 reads per key at this size (log2 n is 15): a tree search compares a few
            // keys per level and reads both sides. A scan per insert would be ~4·10^8 reads.
            let log2 = n.ilog2() as usize + 1;
            assert!(
                reads < 10 * n * log2,
                "{name}: {reads} key reads for {n} keys"
            );
        }
    }

    #[test]
    fn iterators_and_equality() {
        let a: JsMap<String, i32> = [("x".into(), 1), ("3".into(), 2)].into_iter().collect();
        let mut b = JsMap::new();
        b.insert("3".to_owned(), 2);
        b.insert("x".to_owned(), 1);
        assert_eq!(a, b);
        b.insert("y".to_owned(), 0);
        assert_ne!(a, b);
        for v in b.values_mut() {
            *v *= 10;
        }
        assert_eq!(b.values_mut().len(), 3);
        let owned: Vec<(String, i32)> = b.into_iter().collect();
        assert_eq!(owned, [("3".into(), 20), ("x".into(), 10), ("y".into(), 0)]);
        assert!(JsMap::<String, i32>::new().is_empty());
    }
}
