//! [`QueryData`]: what a query hands out per entity (`Entity`, `&T`, `&mut T`, `Option<..>`,
//! tuples), and how each element finds its value.
//!
//! Each element *prepares* once per query run (finds its storage, takes raw pointers into its
//! dense values), *offers* itself as the driver (the smallest required storage), and then
//! *fetches* by entity index: a sparse lookup, or, for the driver, the dense position the
//! loop is at.

use alloc::vec::Vec;

use dod::sparse_set::SparseView;
use dod::BitSet;

use super::access::{Access, Kind};
use crate::entity::{Entities, Entity};
use crate::storage::{is_tag, tag_mut, tag_ref, Component, Storage};
use crate::World;

/// How a run walks its entities: a dense slice of entity indices, or a tag's bits. (Public
/// only so that the query traits can name it; not reachable outside.)
#[derive(Clone, Copy)]
#[allow(unreachable_pub)]
pub enum Driver<'w> {
    /// A sparse set's dense indices: the loop's position is a dense position of it.
    Dense(&'w [u32]),
    /// A tag's presence bits.
    Bits(&'w BitSet),
}

/// The best driver offered so far: the smallest required storage.
#[allow(unreachable_pub)]
pub struct Candidate<'w> {
    pub(crate) len: usize,
    pub(crate) which: usize,
    pub(crate) driver: Driver<'w>,
}

/// Records `(len, driver)` as element `*n`'s offer if it is the smallest so far.
#[inline]
pub(crate) fn offer<'w>(
    best: &mut Option<Candidate<'w>>,
    n: &mut usize,
    len: usize,
    driver: Driver<'w>,
) {
    let which = *n;
    *n += 1;
    if best.as_ref().is_none_or(|b| len < b.len) {
        *best = Some(Candidate { len, which, driver });
    }
}

/// What a query hands out for each entity: [`Entity`], `&T`, `&mut T`, `Option<&T>`,
/// `Option<&mut T>`, and tuples of up to 12 of them.
///
/// # Safety
///
/// Implementations hand out references built from raw pointers; the world relies on
/// `fetch` returning references only into the storages `access` declares, with the
/// mutability it declares. Not meant to be implemented outside this crate.
#[allow(unsafe_code)]
pub unsafe trait QueryData {
    /// The value handed out for one entity.
    type Item<'w>;
    /// What one run of the query holds: the storages, as pointers valid for `'w`.
    #[doc(hidden)]
    type State<'w>;

    /// Declares the storages read and written.
    #[doc(hidden)]
    fn access(world: &World, out: &mut Vec<Access>);

    /// Prepares a run; `None` if no entity can match (a required type was never registered).
    ///
    /// # Safety
    ///
    /// The caller has checked `access` against every other live access to the world (the
    /// query's own elements included) and holds what it needs for `'w`.
    #[doc(hidden)]
    unsafe fn prepare<'w>(world: &'w World) -> Option<Self::State<'w>>;

    /// Offers the element's storage as the driver, numbering the elements with `n`.
    #[doc(hidden)]
    fn offer<'w>(state: &Self::State<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>);

    /// Marks element `which` (numbered as in `offer`) as the driver.
    #[doc(hidden)]
    fn choose(state: &mut Self::State<'_>, n: &mut usize, which: usize);

    /// The item of entity `index`, or `None` if it lacks a required component. `pos` is the
    /// dense position the loop is at in the driver's storage (meaningful only to the driver).
    ///
    /// # Safety
    ///
    /// `index` is a live entity; no item of this run for `index` is alive.
    #[doc(hidden)]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<Self::Item<'w>>;

    /// An item with a shorter lifetime (every item is covariant in it).
    #[doc(hidden)]
    fn shrink<'long: 'short, 'short>(item: Self::Item<'long>) -> Self::Item<'short>;
}

/// A [`QueryData`] that only reads: usable through `&World`
/// ([`World::query_ref`](crate::World::query_ref)).
///
/// # Safety
///
/// `access` declares no write.
#[allow(unsafe_code)]
pub unsafe trait ReadOnlyQueryData: QueryData {}

// --- Entity ---------------------------------------------------------------------------------

// SAFETY: `Entity` reads only the allocator's tags, which no query writes.
#[allow(unsafe_code)]
unsafe impl QueryData for Entity {
    type Item<'w> = Entity;
    type State<'w> = &'w Entities;

    fn access(_: &World, _: &mut Vec<Access>) {}

    unsafe fn prepare<'w>(world: &'w World) -> Option<Self::State<'w>> {
        Some(world.entities())
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut usize, _: &mut Option<Candidate<'w>>) {}

    #[inline]
    fn choose(_: &mut Self::State<'_>, _: &mut usize, _: usize) {}

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, _: usize) -> Option<Self::Item<'w>> {
        Some(state.entity_at(index))
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: Entity) -> Entity {
        item
    }
}

// SAFETY: declares no access.
#[allow(unsafe_code)]
unsafe impl ReadOnlyQueryData for Entity {}

// --- &T -------------------------------------------------------------------------------------

/// A run's view of one storage: a sparse set's lookup and dense values, or a tag's bits.
#[allow(unreachable_pub, missing_docs)]
pub enum Column<'w, P> {
    /// Values in a sparse set: the lookup, the values as a pointer (shared or not), their
    /// number, and whether this column drives the run.
    Set {
        sparse: SparseView<'w, { dod::sparse_set::DEFAULT_PAGE_SIZE }>,
        values: P,
        len: usize,
        driver: bool,
    },
    /// A tag: presence bits and their count.
    Tag { bits: &'w BitSet, len: usize },
}

impl<'w, P: Copy> Column<'w, P> {
    #[inline]
    fn offer(this: &Column<'w, P>, n: &mut usize, best: &mut Option<Candidate<'w>>) {
        match *this {
            Column::Set { sparse, len, .. } => offer(best, n, len, Driver::Dense(sparse.indices())),
            Column::Tag { bits, len } => offer(best, n, len, Driver::Bits(bits)),
        }
    }

    #[inline]
    fn choose(&mut self, n: &mut usize, which: usize) {
        if let Column::Set { driver, .. } = self {
            *driver = *n == which;
        }
        *n += 1;
    }
}

/// Where the value of entity `index` is in a set column, or `None`.
#[inline]
fn position(
    sparse: &SparseView<'_, { dod::sparse_set::DEFAULT_PAGE_SIZE }>,
    driver: bool,
    index: u32,
    pos: usize,
) -> Option<usize> {
    if driver {
        Some(pos)
    } else {
        sparse.get_index_of(index)
    }
}

/// The shared column of `T`, if registered.
///
/// # Safety
///
/// No `&mut` to `T`'s storage is live for `'w` (the caller's access checks).
#[allow(unsafe_code)]
unsafe fn shared_column<'w, T: Component>(world: &'w World) -> Option<Column<'w, *const T>> {
    let storage: &'w Storage<T> = world.components().storage::<T>()?;
    Some(if is_tag::<T>() {
        Column::Tag {
            bits: &storage.tags,
            len: storage.tag_count,
        }
    } else {
        let (sparse, values) = storage.set.split();
        Column::Set {
            sparse,
            values: values.as_ptr(),
            len: values.len(),
            driver: false,
        }
    })
}

/// The exclusive column of `T`, if registered.
///
/// # Safety
///
/// The caller has exclusive access to `T`'s storage for `'w`.
#[allow(unsafe_code)]
unsafe fn exclusive_column<'w, T: Component>(world: &'w World) -> Option<Column<'w, *mut T>> {
    let column = world.components().column::<T>()?;
    // SAFETY: exclusive access to this column for `'w` is the caller's contract.
    let storage: &'w mut Storage<T> = unsafe { column.storage_mut::<T>() };
    Some(if is_tag::<T>() {
        let len = storage.tag_count;
        Column::Tag {
            bits: &storage.tags,
            len,
        }
    } else {
        let (sparse, values) = storage.set.split_mut();
        Column::Set {
            sparse,
            len: values.len(),
            values: values.as_mut_ptr(),
            driver: false,
        }
    })
}

// SAFETY: reads `T`'s storage only, as declared.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryData for &T {
    type Item<'w> = &'w T;
    type State<'w> = Column<'w, *const T>;

    fn access(world: &World, out: &mut Vec<Access>) {
        Access::push::<T>(world, Kind::Read, out);
    }

    unsafe fn prepare<'w>(world: &'w World) -> Option<Self::State<'w>> {
        // SAFETY: the caller checked that no write to `T` is live.
        unsafe { shared_column(world) }
    }

    #[inline]
    fn offer<'w>(state: &Self::State<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>) {
        Column::offer(state, n, best);
    }

    #[inline]
    fn choose(state: &mut Self::State<'_>, n: &mut usize, which: usize) {
        state.choose(n, which);
    }

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<&'w T> {
        match *state {
            Column::Set {
                ref sparse,
                values,
                driver,
                ..
            } => {
                let p = position(sparse, driver, index, pos)?;
                // SAFETY: `p` is a position of the dense values (the sparse side's answer, or
                // the driver's loop position below `len`), valid for `'w`; no write to `T` is
                // live.
                Some(unsafe { &*values.add(p) })
            }
            Column::Tag { bits, .. } => bits.contains(index).then(tag_ref),
        }
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: &'long T) -> &'short T {
        item
    }
}

// SAFETY: declares a read only.
#[allow(unsafe_code)]
unsafe impl<T: Component> ReadOnlyQueryData for &T {}

// --- &mut T ---------------------------------------------------------------------------------

// SAFETY: writes `T`'s storage only, as declared; each entity index is fetched at most once
// per live item (the caller's contract), so the `&mut` handed out never alias.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryData for &mut T {
    type Item<'w> = &'w mut T;
    type State<'w> = Column<'w, *mut T>;

    fn access(world: &World, out: &mut Vec<Access>) {
        Access::push::<T>(world, Kind::Write, out);
    }

    unsafe fn prepare<'w>(world: &'w World) -> Option<Self::State<'w>> {
        // SAFETY: the caller checked that this is the only access to `T`.
        unsafe { exclusive_column(world) }
    }

    #[inline]
    fn offer<'w>(state: &Self::State<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>) {
        Column::offer(state, n, best);
    }

    #[inline]
    fn choose(state: &mut Self::State<'_>, n: &mut usize, which: usize) {
        state.choose(n, which);
    }

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<&'w mut T> {
        match *state {
            Column::Set {
                ref sparse,
                values,
                driver,
                ..
            } => {
                let p = position(sparse, driver, index, pos)?;
                // SAFETY: `p` is a dense position below `len`, valid for `'w`; the storage is
                // exclusively this run's, and no other item for `index` (so for `p`) is live.
                Some(unsafe { &mut *values.add(p) })
            }
            Column::Tag { bits, .. } => bits.contains(index).then(tag_mut),
        }
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: &'long mut T) -> &'short mut T {
        item
    }
}

// --- Option<Q> ------------------------------------------------------------------------------

/// The state of an optional element: its inner state, if its storage exists.
#[allow(unreachable_pub)]
pub struct Optional<S>(Option<S>);

// SAFETY: the inner element's accesses, as declared by it.
#[allow(unsafe_code)]
unsafe impl<Q: QueryData> QueryData for Option<Q> {
    type Item<'w> = Option<Q::Item<'w>>;
    type State<'w> = Optional<Q::State<'w>>;

    fn access(world: &World, out: &mut Vec<Access>) {
        Q::access(world, out);
    }

    unsafe fn prepare<'w>(world: &'w World) -> Option<Self::State<'w>> {
        // SAFETY: forwarded contract.
        Some(Optional(unsafe { Q::prepare(world) }))
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut usize, _: &mut Option<Candidate<'w>>) {
        // Optional elements never drive: they match every entity.
    }

    #[inline]
    fn choose(_: &mut Self::State<'_>, _: &mut usize, _: usize) {}

    #[inline]
    unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<Self::Item<'w>> {
        Some(match &state.0 {
            // SAFETY: forwarded contract; the inner element is never the driver, so it looks
            // `index` up itself.
            Some(s) => unsafe { Q::fetch(s, index, pos) },
            None => None,
        })
    }

    #[inline]
    fn shrink<'long: 'short, 'short>(item: Self::Item<'long>) -> Self::Item<'short> {
        item.map(Q::shrink)
    }
}

// SAFETY: reads only if `Q` does.
#[allow(unsafe_code)]
unsafe impl<Q: ReadOnlyQueryData> ReadOnlyQueryData for Option<Q> {}

// --- tuples ---------------------------------------------------------------------------------

macro_rules! tuple_data {
    ($($q:ident $i:tt),*) => {
        // SAFETY: the union of the elements' declared accesses.
        #[allow(unsafe_code, clippy::unused_unit, unused_variables)]
        unsafe impl<$($q: QueryData),*> QueryData for ($($q,)*) {
            type Item<'w> = ($($q::Item<'w>,)*);
            type State<'w> = ($($q::State<'w>,)*);

            fn access(world: &World, out: &mut Vec<Access>) {
                $($q::access(world, out);)*
            }

            unsafe fn prepare<'w>(world: &'w World) -> Option<Self::State<'w>> {
                // SAFETY: forwarded contract.
                Some(($(unsafe { $q::prepare(world)? },)*))
            }

            #[inline]
            fn offer<'w>(state: &Self::State<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>) {
                $($q::offer(&state.$i, n, best);)*
            }

            #[inline]
            fn choose(state: &mut Self::State<'_>, n: &mut usize, which: usize) {
                $($q::choose(&mut state.$i, n, which);)*
            }

            #[inline]
            unsafe fn fetch<'w>(state: &Self::State<'w>, index: u32, pos: usize) -> Option<Self::Item<'w>> {
                // SAFETY: forwarded contract, element by element.
                Some(($(unsafe { $q::fetch(&state.$i, index, pos)? },)*))
            }

            #[inline]
            fn shrink<'long: 'short, 'short>(item: Self::Item<'long>) -> Self::Item<'short> {
                ($($q::shrink(item.$i),)*)
            }
        }

        // SAFETY: reads only if every element does.
        #[allow(unsafe_code)]
        unsafe impl<$($q: ReadOnlyQueryData),*> ReadOnlyQueryData for ($($q,)*) {}
    };
}

tuple_data!();
tuple_data!(A 0);
tuple_data!(A 0, B 1);
tuple_data!(A 0, B 1, C 2);
tuple_data!(A 0, B 1, C 2, D 3);
tuple_data!(A 0, B 1, C 2, D 3, E 4);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_data!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
