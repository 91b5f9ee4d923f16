//! Reordering the dense values: full sorts and the incremental, budgeted `defragment`.
//!
//! Both work the same way. The comparator ranks the dense positions (a sort of `u32` indices;
//! the values do not move while user code runs, so a panicking comparator leaves the map as it
//! was). The ranking is kept as a *plan*: the slots in their target order. Applying the plan
//! walks a cursor over the dense positions; at each position it swaps the planned value in from
//! wherever it is now (found through its slot), so every swap puts one value in its final
//! place, at most `len - 1` swaps in all. A swap is the unit of work `defragment` counts and
//! budgets. Values are only ever swapped, never cloned or copied.

use alloc::vec::Vec;
use core::cmp::Ordering;

use super::HandleMap;
use crate::key::Key;

/// What is known about the dense order.
///
/// `epoch` counts structural changes (values inserted, removed or moved); a fact about the order
/// holds only while the epoch it was established at is current, so marking a change is one
/// increment on the hot paths.
#[derive(Clone, Debug)]
pub(super) struct OrderState {
    epoch: u64,
    /// The epoch at which the last completed pass left the values sorted, with no value
    /// mutably borrowed since; [`NEVER`] otherwise.
    sorted_at: u64,
    /// A `defragment` in progress, valid while its epoch is current.
    plan: Option<Plan>,
}

const NEVER: u64 = u64::MAX;

#[derive(Clone, Debug)]
struct Plan {
    epoch: u64,
    /// Slots in their target dense order.
    slots: Vec<u32>,
    /// Dense positions before this are final.
    cursor: usize,
}

impl OrderState {
    pub(super) const fn new() -> Self {
        OrderState {
            epoch: 0,
            sorted_at: 0,
            plan: None,
        }
    }

    /// Nothing is known about the order (a map just loaded).
    #[cfg(feature = "serde")]
    pub(super) const fn unknown() -> Self {
        OrderState {
            epoch: 0,
            sorted_at: NEVER,
            plan: None,
        }
    }

    /// A value may have changed: the order is no longer known to be sorted. A plan in
    /// progress stays valid (it names slots, not values) and is checked when it completes.
    #[inline]
    pub(super) fn touched(&mut self) {
        self.sorted_at = NEVER;
    }

    /// Values were inserted, removed or moved: the order is unknown and any plan is void.
    #[inline]
    pub(super) fn changed(&mut self) {
        self.epoch += 1;
    }

    fn is_sorted(&self) -> bool {
        self.sorted_at == self.epoch
    }

    fn set_sorted(&mut self, sorted: bool) {
        self.sorted_at = if sorted { self.epoch } else { NEVER };
    }

    /// The plan in progress, if it is still valid.
    fn take_plan(&mut self) -> Option<Plan> {
        self.plan.take().filter(|p| p.epoch == self.epoch)
    }

    /// Drops a plan that can no longer be used.
    pub(super) fn release(&mut self) {
        if self.plan.as_ref().is_some_and(|p| p.epoch != self.epoch) {
            self.plan = None;
        }
    }
}

impl<T, K: Key> HandleMap<T, K> {
    /// The slots ranked by `cmp` over their values.
    fn rank(&self, cmp: &mut impl FnMut(&T, &T) -> Ordering, stable: bool) -> Vec<u32> {
        let values = &self.values;
        let mut order: Vec<u32> = (0..values.len() as u32).collect();
        let by = |a: &u32, b: &u32| cmp(&values[*a as usize], &values[*b as usize]);
        if stable {
            order.sort_by(by);
        } else {
            order.sort_unstable_by(by);
        }
        for d in &mut order {
            *d = self.links[*d as usize];
        }
        order
    }

    /// Applies `plan` from its cursor, making at most `max_moves` swaps; returns the swaps made.
    fn apply(&mut self, plan: &mut Plan, max_moves: usize) -> usize {
        let mut moves = 0;
        while plan.cursor < plan.slots.len() {
            let i = plan.cursor;
            let j = self.slots[plan.slots[i] as usize].idx as usize;
            if j != i {
                if moves == max_moves {
                    break;
                }
                self.swap_dense(i, j);
                moves += 1;
            }
            plan.cursor += 1;
        }
        moves
    }

    fn sort_with(&mut self, mut cmp: impl FnMut(&T, &T) -> Ordering, stable: bool) {
        let mut plan = Plan {
            epoch: 0,
            slots: self.rank(&mut cmp, stable),
            cursor: 0,
        };
        self.apply(&mut plan, usize::MAX);
        self.order.plan = None;
        self.order.changed();
        self.order.set_sorted(true);
    }

    /// Sorts the dense values with a comparator, stably; every handle stays valid.
    /// O(n log n) comparisons and at most n − 1 swaps.
    ///
    /// If `cmp` panics, the map is left as it was.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let hs = map.insert_many([3, 1, 2]);
    /// map.sort_by(|a, b| a.cmp(b));
    /// assert_eq!(map.values(), [1, 2, 3]);
    /// assert_eq!(map[hs[0]], 3);
    /// assert!(!map.is_fragmented());
    /// ```
    pub fn sort_by(&mut self, cmp: impl FnMut(&T, &T) -> Ordering) {
        self.sort_with(cmp, true);
    }

    /// Sorts the dense values by a key, stably; every handle stays valid. O(n log n).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many([-3i32, 1, -2]);
    /// map.sort_by_key(|v| v.abs());
    /// assert_eq!(map.values(), [1, -2, -3]);
    /// ```
    pub fn sort_by_key<B: Ord>(&mut self, mut f: impl FnMut(&T) -> B) {
        self.sort_with(|a, b| f(a).cmp(&f(b)), true);
    }

    /// Sorts the dense values with a comparator, not keeping the order of equal values; every
    /// handle stays valid. O(n log n), and faster than [`sort_by`](HandleMap::sort_by) when
    /// there are few equal values.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many([2, 3, 1]);
    /// map.sort_unstable_by(|a, b| b.cmp(a));
    /// assert_eq!(map.values(), [3, 2, 1]);
    /// ```
    pub fn sort_unstable_by(&mut self, cmp: impl FnMut(&T, &T) -> Ordering) {
        self.sort_with(cmp, false);
    }

    /// Sorts the dense values by a key, not keeping the order of equal values. O(n log n).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many(["ccc", "a", "bb"]);
    /// map.sort_unstable_by_key(|s| s.len());
    /// assert_eq!(map.values(), ["a", "bb", "ccc"]);
    /// ```
    pub fn sort_unstable_by_key<B: Ord>(&mut self, mut f: impl FnMut(&T) -> B) {
        self.sort_with(|a, b| f(a).cmp(&f(b)), false);
    }

    /// Moves the dense values towards the order of `cmp`, making at most `max_moves` moves,
    /// and returns how many it made. Call it once a frame with a small budget and the map
    /// converges on that order without a long pause; every handle stays valid throughout.
    ///
    /// A move swaps two values and puts at least one of them in its final place, so a map of
    /// n values is sorted after at most n − 1 moves in all. The first call after the map
    /// changed ranks the values (O(n log n) comparisons, the values untouched, so a
    /// panicking `cmp` leaves the map as it was); the following calls resume where the
    /// previous one stopped. When the plan completes, one pass of n − 1 comparisons checks
    /// the result, which also catches values edited or a comparator switched meanwhile.
    /// A call on a map that has not changed since it was found sorted does nothing: O(1).
    ///
    /// Inserting, removing or reordering values abandons the plan (the next call ranks
    /// again); editing values through `get_mut` and friends does not.
    ///
    /// To sort with another comparator while the map is still known sorted by the previous
    /// one, use [`sort_by`](HandleMap::sort_by) or call
    /// [`mark_fragmented`](HandleMap::mark_fragmented) first.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many((0..100).rev());
    /// let mut calls = 0;
    /// while map.is_fragmented() {
    ///     map.defragment(|a, b| a.cmp(b), 10);
    ///     calls += 1;
    /// }
    /// assert!(map.values().is_sorted());
    /// assert!(calls <= 7);
    /// ```
    pub fn defragment(
        &mut self,
        mut cmp: impl FnMut(&T, &T) -> Ordering,
        max_moves: usize,
    ) -> usize {
        if self.order.is_sorted() {
            return 0;
        }
        let in_order = |v: &[T], cmp: &mut dyn FnMut(&T, &T) -> Ordering| {
            v.is_sorted_by(|a, b| cmp(a, b) != Ordering::Greater)
        };
        let mut plan = match self.order.take_plan() {
            Some(plan) => plan,
            None => {
                if in_order(&self.values, &mut cmp) {
                    self.order.set_sorted(true);
                    return 0;
                }
                Plan {
                    epoch: self.order.epoch,
                    slots: self.rank(&mut cmp, true),
                    cursor: 0,
                }
            }
        };
        let moves = self.apply(&mut plan, max_moves);
        if plan.cursor < plan.slots.len() {
            self.order.plan = Some(plan);
        } else {
            drop(plan);
            let sorted = in_order(&self.values, &mut cmp);
            self.order.set_sorted(sorted);
        }
        moves
    }

    /// Whether the dense order may differ from the order of the last completed
    /// [`sort_by`](HandleMap::sort_by) or [`defragment`](HandleMap::defragment) pass: `false`
    /// only when such a pass found or left the values sorted and nothing was inserted,
    /// removed, moved or mutably borrowed since.
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// let h = map.insert(2);
    /// map.insert(1);
    /// assert!(map.is_fragmented());
    /// map.sort_by(|a, b| a.cmp(b));
    /// assert!(!map.is_fragmented());
    /// map[h] = 0; // a value changed: the order is no longer known
    /// assert!(map.is_fragmented());
    /// ```
    pub fn is_fragmented(&self) -> bool {
        !self.order.is_sorted()
    }

    /// Forgets that the values are sorted, so the next
    /// [`defragment`](HandleMap::defragment) checks the order again (for instance with a new
    /// comparator).
    ///
    /// ```
    /// let mut map = dod::HandleMap::new();
    /// map.insert_many([1, 2, 3]);
    /// map.sort_by(|a, b| a.cmp(b));
    /// map.mark_fragmented();
    /// map.defragment(|a, b| b.cmp(a), usize::MAX);
    /// assert_eq!(map.values(), [3, 2, 1]);
    /// ```
    pub fn mark_fragmented(&mut self) {
        self.order.touched();
    }
}
