//! The size of jaq values (see `projection::meter`), remembered per shared container.
//!
//! jaq-json's arrays and objects are reference-counted and have no room for a size, and a part
//! taken out of a value (`.items`, `.[]`) arrives without one. Walking it again on every use
//! would make a loop that keeps touching one large part quadratic, so the size of every
//! container of at least [`REMEMBER_FROM`] bytes is remembered by its address for the run. The
//! memo holds a weak reference, which keeps the address from being reused while the entry
//! lives, and a container is never changed in place while a weak reference to it exists
//! (`Rc::make_mut` moves it out first), so a remembered size never goes stale.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::{Rc, Weak};

use jaq_json::{Map, Num, Val};

use crate::projection::meter;

/// Containers smaller than this are walked again rather than remembered: walking one costs no
/// more than this, and the memo stays small.
const REMEMBER_FROM: u64 = 256;

/// A remembered container, held weakly.
enum Held {
    Arr(Weak<Vec<Val>>),
    Obj(Weak<Map<Val, Val>>),
}

impl Held {
    fn alive(&self) -> bool {
        match self {
            Held::Arr(w) => w.strong_count() > 0,
            Held::Obj(w) => w.strong_count() > 0,
        }
    }
}

/// Addresses are already well spread; one multiplication mixes the alignment bits away.
#[derive(Default)]
pub(super) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[derive(Default)]
struct Memo {
    sizes: HashMap<usize, (Held, u64), BuildHasherDefault<AddressHasher>>,
    /// Dead entries are dropped when the memo reaches this many.
    prune_at: usize,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// Forgets every remembered size (and releases the weak references).
fn forget_all() {
    MEMO.with(|m| *m.borrow_mut() = Memo::default());
}

/// The memo of one run: empty at the start, emptied again when dropped.
pub(crate) struct Scope(());

impl Scope {
    /// Starts a run's memo.
    pub(super) fn new() -> Scope {
        forget_all();
        Scope(())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        forget_all();
    }
}

fn address(v: &Val) -> Option<usize> {
    match v {
        Val::Arr(a) => Some(Rc::as_ptr(a) as *const () as usize),
        Val::Obj(o) => Some(Rc::as_ptr(o) as *const () as usize),
        _ => None,
    }
}

fn recall(v: &Val) -> Option<u64> {
    let key = address(v)?;
    MEMO.with(|m| {
        let memo = m.borrow();
        let (held, size) = memo.sizes.get(&key)?;
        held.alive().then_some(*size)
    })
}

/// Whether a container of `size` is worth remembering.
pub(super) fn remembered(size: u64) -> bool {
    size >= REMEMBER_FROM
}

/// Remembers the size of `v` when it is a container large enough to be worth it.
pub(crate) fn remember(v: &Val, size: u64) {
    if !remembered(size) {
        return;
    }
    let held = match v {
        Val::Arr(a) => Held::Arr(Rc::downgrade(a)),
        Val::Obj(o) => Held::Obj(Rc::downgrade(o)),
        _ => return,
    };
    let key = address(v).unwrap_or_default();
    MEMO.with(|m| {
        let mut memo = m.borrow_mut();
        if memo.sizes.len() >= memo.prune_at {
            memo.sizes.retain(|_, (held, _)| held.alive());
            memo.prune_at = (2 * memo.sizes.len()).max(1024);
        }
        memo.sizes.insert(key, (held, size));
    });
}

/// The printed length of a number: its digits, or at most 24 bytes for a double.
fn num_size(n: &Num) -> u64 {
    match n {
        Num::Int(i) => {
            u64::from(i.unsigned_abs().checked_ilog10().unwrap_or(0)) + 1 + u64::from(*i < 0)
        }
        // Decimal digits are fewer than a third of the bits, plus the sign.
        Num::BigInt(b) => b.bits() / 3 + 2,
        Num::Float(_) => 24,
        Num::Dec(s) => s.len() as u64,
    }
}

/// The size of a scalar, or `None` for a container.
pub(crate) fn scalar_size(v: &Val) -> Option<u64> {
    Some(match v {
        Val::Null | Val::Bool(true) => 4,
        Val::Bool(false) => 5,
        Val::Num(n) => num_size(n),
        Val::TStr(b) | Val::BStr(b) => b.len() as u64 + 2,
        Val::Arr(_) | Val::Obj(_) => return None,
    })
}

/// The size of `v`, charging the run for the nodes walked to find it. A walk stops once the
/// size passes the run's value bound, so it never costs more than that bound.
pub(crate) fn of(v: &Val) -> u64 {
    if let Some(size) = scalar_size(v) {
        return size;
    }
    let mut nodes = 0;
    let size = walk(v, meter::max_value_bytes(), &mut nodes);
    meter::charge_items(nodes);
    size
}

fn walk(v: &Val, cap: u64, nodes: &mut u64) -> u64 {
    if let Some(size) = scalar_size(v) {
        return size;
    }
    if let Some(size) = recall(v) {
        return size;
    }
    *nodes += 1;
    let mut size = 0u64;
    let complete = match v {
        Val::Arr(a) => {
            size = 1 + a.len().max(1) as u64;
            a.iter().all(|x| {
                size = size.saturating_add(walk(x, cap, nodes));
                size <= cap
            })
        }
        Val::Obj(o) => {
            size = 1 + o.len().max(1) as u64;
            o.iter().all(|(k, x)| {
                size = size
                    .saturating_add(walk(k, cap, nodes))
                    .saturating_add(1)
                    .saturating_add(walk(x, cap, nodes));
                size <= cap
            })
        }
        _ => true,
    };
    if complete {
        remember(v, size);
    }
    size
}

/// The size of an array of items whose sizes add up to `items`, `n` of them.
pub(crate) fn array(n: usize, items: u64) -> u64 {
    items.saturating_add(1 + n.max(1) as u64)
}

/// The size of an object of `n` entries whose keys and values add up to `entries`.
pub(crate) fn object(n: usize, entries: u64) -> u64 {
    entries.saturating_add(1 + n.max(1) as u64 + n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(items: Vec<Val>) -> Val {
        Val::Arr(Rc::new(items))
    }

    #[test]
    fn sizes_are_the_printed_lengths() {
        let _run = meter::start(&meter::Limits::default());
        let _memo = Scope::new();
        for (v, text) in [
            (Val::from(-120isize), "-120"),
            (Val::from(0isize), "0"),
            (Val::from("ab".to_owned()), "\"ab\""),
            (arr(vec![]), "[]"),
            (arr(vec![Val::Null, Val::Bool(false)]), "[null,false]"),
        ] {
            assert_eq!(of(&v), text.len() as u64, "{text}");
        }
        let mut map = Map::default();
        map.insert(Val::from("a".to_owned()), arr(vec![Val::from(1isize)]));
        assert_eq!(of(&Val::obj(map)), r#"{"a":[1]}"#.len() as u64);
    }

    #[test]
    fn shared_parts_count_every_time_and_are_walked_once() {
        let _run = meter::start(&meter::Limits::default());
        let _memo = Scope::new();
        let mut v = arr(vec![Val::from("x".repeat(300))]);
        let mut expected = 304;
        for level in 0..40 {
            v = arr(vec![v.clone(), v]);
            expected = 2 * expected + 3;
            if level == 10 {
                assert_eq!(of(&v), expected);
            }
        }
        forget_all();
        let fuel = meter::fuel_left();
        assert!(of(&v) > meter::max_value_bytes());
        // Each level's second half is its first, remembered: one node per level is walked.
        assert!(
            fuel - meter::fuel_left() <= 4,
            "{}",
            fuel - meter::fuel_left()
        );
    }

    #[test]
    fn a_remembered_size_dies_with_its_container() {
        let _run = meter::start(&meter::Limits::default());
        let _memo = Scope::new();
        let v = arr(vec![Val::from("y".repeat(400))]);
        assert_eq!(of(&v), 404);
        assert_eq!(recall(&v), Some(404));
        let copy = v.clone();
        drop(v);
        assert_eq!(recall(&copy), Some(404));
        let Val::Arr(rc) = copy else { unreachable!() };
        let mut items = Rc::unwrap_or_clone(rc);
        items.push(Val::Null);
        let grown = Val::Arr(Rc::new(items));
        assert_eq!(recall(&grown), None);
        assert_eq!(of(&grown), 409);
    }
}
