//! Slices of a group's packed prefix, for code that works on whole arrays (SIMD).

use core::slice;

use core::fmt;

use super::data::Column;
use super::{Form, Query, QueryData, QueryForm};
use crate::entity::{Entities, Entity};
use crate::storage::{Component, ComponentId};

/// A [`QueryData`] made only of [`Entity`], `&T` and `&mut T` (or tuples of them): what
/// [`Query::slices`] can hand out as slices ([`GroupEntities`] for `Entity`).
///
/// # Safety
///
/// `slices` hands out slices of the first `len` values of each element's storage; `len` is a
/// group's length, which every owned storage holds.
#[allow(unsafe_code)]
pub unsafe trait SliceData: QueryData {
    /// The slices: `&[T]` for `&T`, `&mut [T]` for `&mut T`.
    type Slices<'w>;

    /// The components, in element order.
    #[doc(hidden)]
    fn ids(state: &Self::State<'_>, out: &mut alloc::vec::Vec<ComponentId>);

    /// The first `len` values of each storage; `indices` are the group's entity indices, in
    /// its order (`len` of them).
    ///
    /// # Safety
    ///
    /// Every element's storage holds at least `len` values; the run is exclusively the
    /// caller's, and nothing else of it is live.
    #[doc(hidden)]
    unsafe fn slices<'w>(
        state: &Self::State<'w>,
        len: usize,
        indices: &'w [u32],
    ) -> Self::Slices<'w>;
}

/// The component of a column.
fn column_id<P>(c: &Column<'_, P>) -> ComponentId {
    match c {
        Column::Set { id, .. } | Column::Tag { id, .. } => *id,
    }
}

// SAFETY: a shared slice of values the run may read.
#[allow(unsafe_code)]
unsafe impl<T: Component> SliceData for &T {
    type Slices<'w> = &'w [T];

    fn ids(state: &Self::State<'_>, out: &mut alloc::vec::Vec<ComponentId>) {
        out.push(column_id(state));
    }

    unsafe fn slices<'w>(state: &Self::State<'w>, len: usize, _: &'w [u32]) -> &'w [T] {
        match *state {
            // SAFETY: `len` values are there (the caller's contract) and the run may read
            // them for `'w`.
            Column::Set { values, .. } => unsafe { slice::from_raw_parts(values, len) },
            Column::Tag { .. } => unreachable!("grouped types are kept in sets"),
        }
    }
}

// SAFETY: a mutable slice of values the run owns exclusively, stamped as changed when tracked.
#[allow(unsafe_code)]
unsafe impl<T: Component> SliceData for &mut T {
    type Slices<'w> = &'w mut [T];

    fn ids(state: &Self::State<'_>, out: &mut alloc::vec::Vec<ComponentId>) {
        out.push(column_id(state));
    }

    unsafe fn slices<'w>(state: &Self::State<'w>, len: usize, _: &'w [u32]) -> &'w mut [T] {
        match *state {
            Column::Set {
                values,
                changed,
                now,
                ..
            } => {
                if !changed.is_null() {
                    // SAFETY: a tracked storage keeps one stamp per value; `len` values exist.
                    unsafe { slice::from_raw_parts_mut(changed, len) }.fill(now);
                }
                // SAFETY: `len` values are there, exclusively this run's for `'w`, and no other
                // item of the run is live.
                unsafe { slice::from_raw_parts_mut(values, len) }
            }
            Column::Tag { .. } => unreachable!("grouped types are kept in sets"),
        }
    }
}

/// The entities of an owning group in its packed order, handed out by [`Query::slices`] for an
/// [`Entity`] element: the entity at position `p` owns the values at `p` of every slice.
///
/// ```
/// use std::collections::HashMap;
/// use dod_world::{Entity, World};
/// struct Parent(Option<Entity>);
/// struct Depth(u32);
///
/// let mut world = World::builder().group::<(Parent, Depth)>().build();
/// let root = world.spawn((Parent(None), Depth(0)));
/// let kid = world.spawn((Parent(Some(root)), Depth(0)));
/// world.spawn((Parent(Some(kid)), Depth(0)));
/// world.sort_group_by::<Parent>(|a, b| a.0.is_some().cmp(&b.0.is_some())); // root first
/// let mut q = world.query::<(Entity, &Parent, &mut Depth)>();
/// let (entities, parents, depths) = q.slices().unwrap();
/// let at: HashMap<Entity, usize> = entities.iter().enumerate().map(|(p, e)| (e, p)).collect();
/// // Parents before children: each depth from the parent's, found by position.
/// for p in 0..entities.len() {
///     if let Some(parent) = parents[p].0 {
///         if at[&parent] < p {
///             depths[p].0 = depths[at[&parent]].0 + 1;
///         }
///     }
/// }
/// assert_eq!(entities.get(0), Some(root));
/// assert_eq!(depths.iter().map(|d| d.0).collect::<Vec<_>>(), [0, 1, 2]);
/// ```
#[derive(Clone, Copy)]
pub struct GroupEntities<'w> {
    indices: &'w [u32],
    entities: &'w Entities,
}

impl<'w> GroupEntities<'w> {
    /// How many entities the group holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// Whether the group holds no entity.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The entity at position `p`, or `None` past the end.
    #[inline]
    pub fn get(&self, p: usize) -> Option<Entity> {
        let &i = self.indices.get(p)?;
        Some(self.entities.entity_at(i))
    }

    /// The entities, in the group's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Entity> + DoubleEndedIterator + 'w {
        let entities = self.entities;
        self.indices.iter().map(move |&i| entities.entity_at(i))
    }

    /// The entities' indices ([`Entity::index`]), in the group's order.
    #[inline]
    pub fn indices(&self) -> &'w [u32] {
        self.indices
    }
}

impl fmt::Debug for GroupEntities<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

// SAFETY: reads only the allocator's tags, which no query writes, and the group's indices,
// which nothing writes while the run lives.
#[allow(unsafe_code)]
unsafe impl SliceData for Entity {
    type Slices<'w> = GroupEntities<'w>;

    fn ids(_: &Self::State<'_>, _: &mut alloc::vec::Vec<ComponentId>) {}

    unsafe fn slices<'w>(state: &&'w Entities, _: usize, indices: &'w [u32]) -> GroupEntities<'w> {
        GroupEntities {
            indices,
            entities: state,
        }
    }
}

macro_rules! tuple_slices {
    ($($q:ident $i:tt),+) => {
        // SAFETY: element by element; the elements name distinct storages (checked).
        #[allow(unsafe_code)]
        unsafe impl<$($q: SliceData),+> SliceData for ($($q,)+) {
            type Slices<'w> = ($($q::Slices<'w>,)+);

            fn ids(state: &Self::State<'_>, out: &mut alloc::vec::Vec<ComponentId>) {
                $($q::ids(&state.$i, out);)+
            }

            unsafe fn slices<'w>(
                state: &Self::State<'w>,
                len: usize,
                indices: &'w [u32],
            ) -> Self::Slices<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $q::slices(&state.$i, len, indices) },)+)
            }
        }
    };
}

tuple_slices!(A 0);
tuple_slices!(A 0, B 1);
tuple_slices!(A 0, B 1, C 2);
tuple_slices!(A 0, B 1, C 2, D 3);
tuple_slices!(A 0, B 1, C 2, D 3, E 4);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_slices!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

impl<'w, Q: SliceData, const SHARED: bool> Query<'w, Q, (), SHARED>
where
    Form<SHARED>: QueryForm,
{
    /// The packed values of an owning group, as slices position for position: entity
    /// `group[p]` has `slices.0[p]`, `slices.1[p]`, ... `None` unless `Q`'s component types
    /// are exactly the types of one group (in any order). For code that works on whole
    /// arrays. An [`Entity`] element hands out the group's entities in the same order
    /// ([`GroupEntities`]), to find a position by entity or an entity by position.
    ///
    /// A `&mut [T]` of a tracked type marks every value of it changed.
    ///
    /// Only a query with no filter has `slices`: the slices hold every entity of the group,
    /// which a filter ([`with`](Query::with), [`without`](Query::without),
    /// [`filter`](Query::filter)) would have to leave out. A filtered query walks the packed
    /// prefix all the same ([`for_each`](Query::for_each)), one entity at a time.
    ///
    /// # Panics
    ///
    /// As [`Query::for_each`].
    ///
    /// ```
    /// use dod_world::World;
    /// struct Pos(f32);
    /// struct Vel(f32);
    ///
    /// let mut world = World::builder().group::<(Pos, Vel)>().build();
    /// for i in 0..8 {
    ///     world.spawn((Pos(0.0), Vel(i as f32)));
    /// }
    /// world.spawn((Pos(100.0),)); // not in the group
    /// let mut q = world.query::<(&mut Pos, &Vel)>();
    /// let (pos, vel) = q.slices().unwrap();
    /// assert_eq!(pos.len(), 8);
    /// for (p, v) in pos.iter_mut().zip(vel) {
    ///     p.0 += v.0;
    /// }
    /// drop(q);
    /// assert_eq!(world.query::<&Pos>().iter().map(|p| p.0).sum::<f32>(), 128.0);
    /// ```
    #[track_caller]
    pub fn slices(&mut self) -> Option<Q::Slices<'_>> {
        let world = self.world;
        let run = self.prepare()?;
        let mut ids = alloc::vec::Vec::new();
        Q::ids(&run.data, &mut ids);
        ids.sort_unstable();
        let group = world.components().group_of(*ids.first()?)?;
        let mut owned = group.owned.clone();
        owned.sort_unstable();
        if owned != ids {
            return None;
        }
        // The group's invariant, checked where breaking it would read past a storage's
        // values: O(owned types).
        let columns = &world.components().columns;
        assert!(
            owned
                .iter()
                .all(|id| columns[id.index()].any().len() >= group.len),
            "a group's length is past one of its storages"
        );
        let indices = &columns[owned[0].index()].any().dense_indices()[..group.len];
        // SAFETY: every owned storage holds the group's `len` packed values (just checked);
        // the run is fresh, exclusively the query's (checked by `prepare`), and the slices
        // borrow `self`.
        #[allow(unsafe_code)]
        let slices = unsafe { Q::slices(&run.data, group.len, indices) };
        Some(slices)
    }
}
