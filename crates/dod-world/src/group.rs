//! Owning groups: the entities that have every component of a group, packed at the front of
//! each owned storage, in the same order.
//!
//! A group owns the storages of its types (a type belongs to at most one group). Its `len`
//! first dense entries of every owned storage are exactly its entities, position for position:
//! entity `indices[p]` of one owned storage is entity `indices[p]` of every other, for every
//! `p < len`. An entity that gains the last component it lacked is swapped to position `len` in
//! every owned storage and `len` grows; one that loses a component is swapped to position
//! `len - 1` and `len` shrinks, before the component leaves. Both are O(owned storages), the
//! swap-and-pop once per storage.
//!
//! A query that requires every type of a group walks the packed prefix in lockstep: no sparse
//! lookup for the owned types.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::storage::{AnyStorage, Column, Component, ComponentId, Components, Storage};

/// The most types one group owns: the most a [`Bundle`](crate::Bundle) tuple holds, since
/// a group is declared with one.
pub const MAX_OWNED: usize = crate::storage::MAX_BUNDLE;

/// One owning group.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// The owned storages, in declaration order.
    pub(crate) owned: Vec<ComponentId>,
    /// How many entities are packed at the front.
    pub(crate) len: usize,
    /// How an entity enters and leaves, typed for the owned storages.
    pub(crate) moves: GroupMoves,
}

impl Group {
    /// Puts entity `index` into the group, whose storages are `owned`, if it has every owned
    /// type and is not in yet.
    #[inline]
    pub(crate) fn enter(&mut self, owned: &mut OwnedStorages<'_>, index: u32) {
        (self.moves.enter)(owned, &mut self.len, index);
    }

    /// Takes entity `index` out of the group, whose storages are `owned`, if it is in, right
    /// before the removal `leaving` names.
    #[inline]
    pub(crate) fn leave(&mut self, owned: &mut OwnedStorages<'_>, index: u32, leaving: Leaving) {
        (self.moves.leave)(owned, &mut self.len, index, leaving);
    }

    /// Where `id` is among the owned types (its entry in [`OwnedStorages`]); `id` is one of
    /// them.
    #[inline]
    pub(crate) fn rank_of(&self, id: ComponentId) -> usize {
        match self.owned.iter().position(|&o| o == id) {
            Some(k) => k,
            None => unreachable!("a type's group owns it"),
        }
    }
}

/// The storages of the types `owned`, in that order, written into the first entries of
/// `storages`, whose entries must all be `None` before (the moves read the entries past the
/// group's types as `None`). An out-parameter rather than a result: a 192-byte array returned
/// by value is copied into the caller's local on every call.
///
/// # Safety
///
/// The ids of `owned` are distinct, and there are at most [`MAX_OWNED`] of them (as a group's
/// are: `add_group` checks both).
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn resolve_owned<'a>(
    columns: &'a mut [Column],
    owned: &[ComponentId],
    storages: &mut OwnedStorages<'a>,
) {
    debug_assert!(owned.len() <= MAX_OWNED);
    debug_assert!(owned
        .iter()
        .enumerate()
        .all(|(i, a)| !owned[i + 1..].contains(a)));
    let n = columns.len();
    let base = columns.as_mut_ptr();
    for (slot, id) in storages.iter_mut().zip(owned) {
        let i = id.index();
        assert!(i < n, "a group owns a registered type");
        // SAFETY: `i < n`, so `base.add(i)` is a column of the slice. The ids are distinct
        // (the caller's contract), so every `&mut` made here is to another column; all of
        // them derive from the `&'a mut` slice, which nothing else uses while they live.
        *slot = Some(unsafe { (*base.add(i)).any_mut() });
    }
}

/// The storages a group owns, resolved once: entry `i` is the storage of the group's `i`-th
/// type, and the entries past the group's types are `None`. A [`ViewMut`](crate::ViewMut) of
/// an owned type keeps them for its whole life, so that its moves start at the storages
/// instead of finding them again (group, owned ids, column, boxed storage: four dependent
/// loads) for every entity.
pub(crate) type OwnedStorages<'a> = [Option<&'a mut dyn AnyStorage>; MAX_OWNED];

/// How an entity enters and leaves one group: `fn(owned storages, group len, entity index)`,
/// made for the group's types, so the lookups and swaps inline, with no call through the
/// erased storage and no type test.
#[derive(Clone, Copy, Debug)]
pub struct GroupMoves {
    pub(crate) enter: fn(&mut OwnedStorages<'_>, &mut usize, u32),
    pub(crate) leave: fn(&mut OwnedStorages<'_>, &mut usize, u32, Leaving),
}

/// Why an entity leaves a group: what the caller removes from the owned storages right after.
///
/// A storage the entity is about to be removed from needs no swap when the group's last member
/// is its last value: the swap-and-pop of the removal moves that member into the leaving
/// entity's position, which is what the swap would have done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leaving {
    /// It loses the component of the group's `k`-th type (removed next); the others stay.
    Loses(usize),
    /// It is despawned: every component is removed next.
    Despawned,
}

impl Leaving {
    /// Whether the storage of the group's `k`-th type loses the entity's value right after.
    #[inline]
    pub(crate) fn removes(self, k: usize) -> bool {
        match self {
            Leaving::Loses(lost) => lost == k,
            Leaving::Despawned => true,
        }
    }
}

/// The typed storage in `slot`.
///
/// # Safety
///
/// `slot` holds the storage of `T` (a [`GroupMoves`] made for the group's tuple reads entry
/// `i` as the tuple's `i`-th type).
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) unsafe fn owned_storage<'s, T: Component>(
    slot: &'s mut Option<&mut dyn AnyStorage>,
) -> &'s mut Storage<T> {
    match slot {
        Some(any) => {
            debug_assert!(any.as_any().is::<Storage<T>>(), "a storage of another type");
            // SAFETY: the entry is `T`'s storage (the caller's contract), which is what the
            // data part of the `dyn AnyStorage` points at; `&mut` to the entry makes the
            // borrow unique.
            unsafe { &mut *(&mut **any as *mut dyn AnyStorage).cast::<Storage<T>>() }
        }
        None => unreachable!("a group's moves read only its own types' storages"),
    }
}

/// The typed storage in `slot`, shared: [`owned_storage`] for a shared borrow.
///
/// # Safety
///
/// As for [`owned_storage`]: `slot` holds the storage of `T`.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) unsafe fn owned_storage_ref<'s, T: Component>(
    slot: &'s Option<&mut dyn AnyStorage>,
) -> &'s Storage<T> {
    match slot {
        Some(any) => {
            debug_assert!(any.as_any().is::<Storage<T>>(), "a storage of another type");
            // SAFETY: the entry is `T`'s storage (the caller's contract), which is what the
            // data part of the `dyn AnyStorage` points at.
            unsafe { &*(&**any as *const dyn AnyStorage).cast::<Storage<T>>() }
        }
        None => unreachable!("a group's moves read only its own types' storages"),
    }
}

/// The typed [`GroupMoves`] of a group that owns the types of a tuple, in its order; made by
/// [`Bundle`](crate::Bundle) for its tuples.
macro_rules! typed_group_moves {
    ($n:literal; $($t:ident $i:tt),+) => {{
        /// Puts entity `index` into the group of `len` members whose storages are `owned`, if
        /// it has every owned type and is not in yet.
        fn enter<$($t: crate::storage::Component),+>(
            owned: &mut crate::group::OwnedStorages<'_>,
            len: &mut usize,
            index: u32,
        ) {
            let at = *len;
            let positions: [usize; $n] = [$({
                // SAFETY: the group's moves were made from this tuple, so entry `$i` is the
                // storage of `$t`.
                #[allow(unsafe_code)]
                let storage = unsafe { crate::group::owned_storage::<$t>(&mut owned[$i]) };
                match storage.position_of(index) {
                    Some(p) if p >= at => p,
                    // Already in (position below `len`), or lacking a type.
                    _ => return,
                }
            }),+];
            $(
                if positions[$i] != at {
                    // SAFETY: as above.
                    #[allow(unsafe_code)]
                    let storage = unsafe { crate::group::owned_storage::<$t>(&mut owned[$i]) };
                    storage.swap_positions(positions[$i], at);
                }
            )+
            *len = at + 1;
        }

        /// Takes entity `index` out of the group of `len` members whose storages are `owned`,
        /// if it is in, before the caller removes what `leaving` says.
        fn leave<$($t: crate::storage::Component),+>(
            owned: &mut crate::group::OwnedStorages<'_>,
            len: &mut usize,
            index: u32,
            leaving: crate::group::Leaving,
        ) {
            let members = *len;
            // A member sits below `len` in every owned storage; one lookup per storage finds
            // both whether it is a member and where to swap from.
            let positions: [usize; $n] = [$({
                // SAFETY: as in `enter`.
                #[allow(unsafe_code)]
                let storage = unsafe { crate::group::owned_storage::<$t>(&mut owned[$i]) };
                match storage.position_of(index) {
                    Some(p) if p < members => p,
                    _ => return,
                }
            }),+];
            let last = members - 1;
            $(
                if positions[$i] != last {
                    // SAFETY: as in `enter`.
                    #[allow(unsafe_code)]
                    let storage = unsafe { crate::group::owned_storage::<$t>(&mut owned[$i]) };
                    // A storage that loses the value next and ends with the group's last
                    // member: its swap-and-pop puts that member at the position.
                    if !(leaving.removes($i) && storage.set.indices().len() == members) {
                        storage.swap_positions(positions[$i], last);
                    }
                }
            )+
            *len = last;
        }

        crate::group::GroupMoves {
            enter: enter::<$($t),+>,
            leave: leave::<$($t),+>,
        }
    }};
}
pub(crate) use typed_group_moves;

/// A group could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupError {
    /// The type already belongs to another group.
    AlreadyGrouped {
        /// The type's name.
        component: &'static str,
    },
    /// The group names one type twice, or fewer than two types.
    BadTypes {
        /// What is wrong.
        why: String,
    },
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupError::AlreadyGrouped { component } => write!(
                f,
                "`{component}` already belongs to an owning group; a type belongs to at most one"
            ),
            GroupError::BadTypes { why } => f.write_str(why),
        }
    }
}

impl std::error::Error for GroupError {}

impl Components {
    /// Makes a group owning `ids`, packing the entities that already have them all; `moves`
    /// are typed for `ids` in this order.
    pub(crate) fn add_group(
        &mut self,
        ids: &[ComponentId],
        moves: GroupMoves,
    ) -> Result<(), GroupError> {
        // The group exists already (the same types, in any order): nothing to do, as a second
        // registration of a type does nothing.
        if let Some(g) = ids.first().and_then(|id| self.columns[id.index()].group) {
            let owned = &self.groups[g as usize].owned;
            // Both ways, so that a list naming one of the group's types twice is not taken
            // for it.
            let same = owned.len() == ids.len()
                && ids.iter().all(|id| owned.contains(id))
                && owned.iter().all(|id| ids.contains(id));
            if same {
                return Ok(());
            }
        }
        if ids.len() < 2 || ids.len() > MAX_OWNED {
            return Err(GroupError::BadTypes {
                why: alloc::format!(
                    "an owning group owns 2 to {MAX_OWNED} component types, not {}",
                    ids.len()
                ),
            });
        }
        for (i, a) in ids.iter().enumerate() {
            if ids[i + 1..].contains(a) {
                return Err(GroupError::BadTypes {
                    why: alloc::format!(
                        "an owning group names `{}` twice",
                        self.columns[a.index()].name
                    ),
                });
            }
            if self.columns[a.index()].group.is_some() {
                return Err(GroupError::AlreadyGrouped {
                    component: self.columns[a.index()].name,
                });
            }
        }
        let g = self.groups.len() as u32;
        for id in ids {
            let column = &mut self.columns[id.index()];
            column.group = Some(g);
            column.any_mut().leave_bits();
        }
        self.groups.push(Group {
            owned: ids.to_vec(),
            len: 0,
            moves,
        });
        self.pack(g as usize);
        Ok(())
    }

    /// Packs every entity that has all of group `g`'s types (after a load, or when the group
    /// is made).
    pub(crate) fn pack(&mut self, g: usize) {
        let first = self.groups[g].owned[0];
        let candidates = self.columns[first.index()].any().indices();
        self.with_group(g, |owned, group| {
            group.len = 0;
            for index in candidates {
                group.enter(owned, index);
            }
        });
    }

    /// Group `g` and its owned storages, apart: what its moves work on. For a view, which
    /// keeps them; one move goes through [`with_group`](Self::with_group).
    #[inline]
    pub(crate) fn group_parts(&mut self, g: usize) -> (OwnedStorages<'_>, &mut Group) {
        let mut owned: OwnedStorages<'_> = [const { None }; MAX_OWNED];
        let group = self.split_group(g, &mut owned);
        (owned, group)
    }

    /// Runs `f` on group `g` and its owned storages, apart: for one move, where
    /// [`group_parts`](Self::group_parts) would return the storages by value and have them
    /// copied out of its result on every call.
    #[inline(always)]
    fn with_group<R>(
        &mut self,
        g: usize,
        f: impl FnOnce(&mut OwnedStorages<'_>, &mut Group) -> R,
    ) -> R {
        let mut owned: OwnedStorages<'_> = [const { None }; MAX_OWNED];
        let group = self.split_group(g, &mut owned);
        f(&mut owned, group)
    }

    /// Group `g`, with its owned storages written into `owned` (all `None` before).
    #[inline(always)]
    fn split_group<'a>(&'a mut self, g: usize, owned: &mut OwnedStorages<'a>) -> &'a mut Group {
        let group = &mut self.groups[g];
        // SAFETY: a group's ids are distinct and at most `MAX_OWNED` (`add_group` checks
        // both, and nothing else changes them).
        #[allow(unsafe_code)]
        unsafe {
            resolve_owned(&mut self.columns, &group.owned, owned);
        }
        group
    }

    /// Whether any group exists (the fast path skips everything below).
    #[inline]
    pub(crate) fn has_groups(&self) -> bool {
        !self.groups.is_empty()
    }

    /// Puts entity `index` into every group one of `ids` belongs to, if it now has all of that
    /// group's types.
    pub(crate) fn enter_groups(&mut self, index: u32, ids: &[ComponentId]) {
        for id in ids {
            if let Some(g) = self.columns[id.index()].group {
                self.with_group(g as usize, |owned, group| group.enter(owned, index));
            }
        }
    }

    /// Takes entity `index` out of the group of `id`, if `id` is grouped and `index` is in it:
    /// right before its value of that type is removed.
    pub(crate) fn leave_group_of(&mut self, index: u32, id: ComponentId) {
        if let Some(g) = self.columns[id.index()].group {
            self.with_group(g as usize, |owned, group| {
                let k = group.rank_of(id);
                group.leave(owned, index, Leaving::Loses(k));
            });
        }
    }

    /// Takes entity `index` out of every group: right before it is despawned (every value of
    /// it removed).
    pub(crate) fn leave_all_groups(&mut self, index: u32) {
        for g in 0..self.groups.len() {
            self.with_group(g, |owned, group| {
                group.leave(owned, index, Leaving::Despawned);
            });
        }
    }

    /// Empties every group (the storages were cleared).
    pub(crate) fn clear_groups(&mut self) {
        for g in &mut self.groups {
            g.len = 0;
        }
    }

    /// The group whose owned types are all among `ids`, with the fewest entities; for query
    /// drivers.
    pub(crate) fn group_within(&self, ids: &[ComponentId]) -> Option<&Group> {
        self.groups
            .iter()
            .filter(|g| g.owned.iter().all(|id| ids.contains(id)))
            .min_by_key(|g| g.len)
    }

    /// The group that owns `id`.
    pub(crate) fn group_of(&self, id: ComponentId) -> Option<&Group> {
        Some(&self.groups[self.columns[id.index()].group? as usize])
    }

    /// Checks the group invariants; for tests.
    pub(crate) fn assert_groups(&self) {
        for (g, group) in self.groups.iter().enumerate() {
            let lists: Vec<Vec<u32>> = group
                .owned
                .iter()
                .map(|id| self.columns[id.index()].any().indices())
                .collect();
            for (list, id) in lists.iter().zip(&group.owned) {
                assert!(
                    list.len() >= group.len,
                    "group {g}: `{}` holds fewer than its {} entities",
                    self.columns[id.index()].name,
                    group.len
                );
                assert_eq!(
                    &list[..group.len],
                    &lists[0][..group.len],
                    "group {g}: the packed prefix of `{}` is in another order",
                    self.columns[id.index()].name
                );
            }
            // Every entity with all the types is in the prefix, and no other.
            let has_all = |i: u32| lists.iter().all(|l| l.contains(&i));
            for (p, &i) in lists[0].iter().enumerate() {
                assert_eq!(
                    p < group.len,
                    has_all(i),
                    "group {g}: entity {i} at position {p} (len {})",
                    group.len
                );
            }
        }
    }
}
