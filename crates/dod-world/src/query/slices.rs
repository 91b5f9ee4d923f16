//! Slices of a group's packed prefix, for code that works on whole arrays (SIMD).

use core::slice;

use super::data::Column;
use super::{Form, Query, QueryData, QueryForm};
use crate::storage::{Component, ComponentId};

/// A [`QueryData`] made only of `&T` and `&mut T` (or tuples of them): what
/// [`Query::slices`] can hand out as slices.
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

    /// The first `len` values of each storage.
    ///
    /// # Safety
    ///
    /// Every element's storage holds at least `len` values; the run is exclusively the
    /// caller's, and nothing else of it is live.
    #[doc(hidden)]
    unsafe fn slices<'w>(state: &Self::State<'w>, len: usize) -> Self::Slices<'w>;
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

    unsafe fn slices<'w>(state: &Self::State<'w>, len: usize) -> &'w [T] {
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

    unsafe fn slices<'w>(state: &Self::State<'w>, len: usize) -> &'w mut [T] {
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

macro_rules! tuple_slices {
    ($($q:ident $i:tt),+) => {
        // SAFETY: element by element; the elements name distinct storages (checked).
        #[allow(unsafe_code)]
        unsafe impl<$($q: SliceData),+> SliceData for ($($q,)+) {
            type Slices<'w> = ($($q::Slices<'w>,)+);

            fn ids(state: &Self::State<'_>, out: &mut alloc::vec::Vec<ComponentId>) {
                $($q::ids(&state.$i, out);)+
            }

            unsafe fn slices<'w>(state: &Self::State<'w>, len: usize) -> Self::Slices<'w> {
                // SAFETY: forwarded contract.
                ($(unsafe { $q::slices(&state.$i, len) },)+)
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
    /// `group[p]` has `slices.0[p]`, `slices.1[p]`, ... `None` unless `Q`'s types are exactly
    /// the types of one group (in any order). For code that works on whole arrays.
    ///
    /// A `&mut [T]` of a tracked type marks every value of it changed.
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
        // SAFETY: every owned storage holds the group's `len` packed values (just checked);
        // the run is fresh, exclusively the query's (checked by `prepare`), and the slices
        // borrow `self`.
        #[allow(unsafe_code)]
        let slices = unsafe { Q::slices(&run.data, group.len) };
        Some(slices)
    }
}
