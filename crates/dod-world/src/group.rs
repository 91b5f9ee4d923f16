//! Owning groups: the entities that have every component of a group, packed at the front of
//! each owned storage, in the same order.
//!
//! A group owns the storages of its types (a type belongs to at most one group). Its `len`
//! first dense entries of every owned storage are exactly its entities, position for position:
//! entity `indices[p]` of one owned storage is entity `indices[p]` of every other, for every
//! `p < len`. An entity that gains the last component it lacked is swapped to position `len` in
//! every owned storage and `len` grows; one that loses a component is swapped to position
//! `len - 1` and `len` shrinks, before the component leaves. Both are O(owned storages), the
//! swap-and-pop of the sparse-set article once per storage.
//!
//! A query that requires every type of a group walks the packed prefix in lockstep: no sparse
//! lookup for the owned types.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::storage::{ComponentId, Components};

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

/// How an entity enters and leaves one group: `fn(components, group, entity index)`, made
/// for the group's types, so the lookups and swaps inline, with no call through the erased
/// storage and no type test.
#[derive(Clone, Copy, Debug)]
pub struct GroupMoves {
    pub(crate) enter: fn(&mut Components, usize, u32),
    pub(crate) leave: fn(&mut Components, usize, u32, Leaving),
}

/// Why an entity leaves a group: what the caller removes from the owned storages right after.
///
/// A storage the entity is about to be removed from needs no swap when the group's last member
/// is its last value: the swap-and-pop of the removal moves that member into the leaving
/// entity's position, which is what the swap would have done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leaving {
    /// It loses this component (removed next); the others stay.
    Loses(ComponentId),
    /// It is despawned: every component is removed next.
    Despawned,
}

impl Leaving {
    /// Whether the storage of `id` loses the entity's value right after.
    #[inline]
    pub(crate) fn removes(self, id: ComponentId) -> bool {
        match self {
            Leaving::Loses(lost) => lost == id,
            Leaving::Despawned => true,
        }
    }
}

/// The typed [`GroupMoves`] of a group that owns the types of a tuple, in its order; made by
/// [`Bundle`](crate::Bundle) for its tuples.
macro_rules! typed_group_moves {
    ($n:literal; $($t:ident $i:tt),+) => {{
        /// Puts entity `index` into group `g` if it has every owned type and is not in yet.
        fn enter<$($t: crate::storage::Component),+>(components: &mut crate::storage::Components, g: usize, index: u32) {
            let group = &components.groups[g];
            let len = group.len;
            let owned: [crate::storage::ComponentId; $n] = [$(group.owned[$i]),+];
            let columns = &components.columns;
            let positions: [usize; $n] = [$({
                // SAFETY: the group owns `$t` at `owned[$i]` (it was made from this tuple),
                // and `&mut crate::storage::Components` excludes any other access to the column.
                #[allow(unsafe_code)]
                let storage = unsafe { columns[owned[$i].index()].storage_of::<$t>() };
                match storage.position_of(index) {
                    Some(at) if at >= len => at,
                    // Already in (position below `len`), or lacking a type.
                    _ => return,
                }
            }),+];
            $(
                if positions[$i] != len {
                    // SAFETY: as above; `&mut crate::storage::Components` is exclusive access to the column,
                    // and this is its only reference.
                    #[allow(unsafe_code)]
                    let storage = unsafe { columns[owned[$i].index()].storage_mut::<$t>() };
                    storage.swap_positions(positions[$i], len);
                }
            )+
            components.groups[g].len += 1;
        }

        /// Takes entity `index` out of group `g` if it is in, before the caller removes what
        /// `leaving` says.
        fn leave<$($t: crate::storage::Component),+>(
            components: &mut crate::storage::Components,
            g: usize,
            index: u32,
            leaving: crate::group::Leaving,
        ) {
            let group = &components.groups[g];
            let len = group.len;
            let owned: [crate::storage::ComponentId; $n] = [$(group.owned[$i]),+];
            let columns = &components.columns;
            // A member sits below `len` in every owned storage; one lookup per storage finds
            // both whether it is a member and where to swap from.
            let positions: [usize; $n] = [$({
                // SAFETY: as in `enter`.
                #[allow(unsafe_code)]
                let storage = unsafe { columns[owned[$i].index()].storage_of::<$t>() };
                match storage.position_of(index) {
                    Some(at) if at < len => at,
                    _ => return,
                }
            }),+];
            let last = len - 1;
            $(
                if positions[$i] != last {
                    // SAFETY: as in `enter`.
                    #[allow(unsafe_code)]
                    let storage = unsafe { columns[owned[$i].index()].storage_mut::<$t>() };
                    // A storage that loses the value next and ends with the group's last
                    // member: its swap-and-pop puts that member at the position.
                    if !(leaving.removes(owned[$i]) && storage.set.indices().len() == len) {
                        storage.swap_positions(positions[$i], last);
                    }
                }
            )+
            components.groups[g].len = last;
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
        self.groups[g].len = 0;
        let first = self.groups[g].owned[0];
        let candidates = self.columns[first.index()].any().indices();
        for index in candidates {
            self.enter(g, index);
        }
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
                self.enter(g as usize, index);
            }
        }
    }

    /// Puts entity `index` into group `g` if it has every owned type and is not in yet.
    #[inline]
    pub(crate) fn enter(&mut self, g: usize, index: u32) {
        (self.groups[g].moves.enter)(self, g, index);
    }

    /// Takes entity `index` out of the group of `id`, if `id` is grouped and `index` is in it:
    /// right before its value of that type is removed.
    pub(crate) fn leave_group_of(&mut self, index: u32, id: ComponentId) {
        if let Some(g) = self.columns[id.index()].group {
            self.leave(g as usize, index, Leaving::Loses(id));
        }
    }

    /// Takes entity `index` out of every group: right before it is despawned (every value of
    /// it removed).
    pub(crate) fn leave_all_groups(&mut self, index: u32) {
        for g in 0..self.groups.len() {
            self.leave(g, index, Leaving::Despawned);
        }
    }

    /// Takes entity `index` out of group `g` if it is in, right before the removal `leaving`
    /// names.
    #[inline]
    pub(crate) fn leave(&mut self, g: usize, index: u32, leaving: Leaving) {
        (self.groups[g].moves.leave)(self, g, index, leaving);
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
