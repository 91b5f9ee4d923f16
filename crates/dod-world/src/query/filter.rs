//! [`QueryFilter`]: conditions on components a query does not hand out: [`With`],
//! [`Without`], and tuples of them.

use alloc::vec::Vec;
use core::marker::PhantomData;

use dod::sparse_set::SparseView;
use dod::BitSet;

use super::access::{Access, Kind};
use super::data::{offer, Candidate, Driver};
use crate::storage::{is_tag, Component};
use crate::World;

/// Keeps the entities that have a `T`, without handing it out; added with
/// [`Query::with`](crate::Query::with).
///
/// ```
/// use dod_world::World;
/// struct Enemy;
/// let mut world = World::new();
/// world.spawn((1u32, Enemy));
/// world.spawn((2u32,));
/// let mut seen = Vec::new();
/// world.query::<&u32>().with::<Enemy>().for_each(|v| seen.push(*v));
/// assert_eq!(seen, [1]);
/// ```
pub struct With<T>(PhantomData<fn() -> T>);

/// Keeps the entities that have no `T`; added with [`Query::without`](crate::Query::without).
///
/// ```
/// use dod_world::World;
/// struct Tank;
/// let mut world = World::new();
/// world.spawn((1u32, Tank));
/// world.spawn((2u32,));
/// let mut seen = Vec::new();
/// world.query::<&u32>().without::<Tank>().for_each(|v| seen.push(*v));
/// assert_eq!(seen, [2]);
/// ```
pub struct Without<T>(PhantomData<fn() -> T>);

/// Presence of one component type: the sparse side of its set, or its tag bits.
#[derive(Clone, Copy)]
#[allow(unreachable_pub)]
pub enum Presence<'w> {
    /// A sparse set's lookup.
    Set(SparseView<'w, { dod::sparse_set::DEFAULT_PAGE_SIZE }>),
    /// A tag's bits.
    Tag(&'w BitSet, usize),
}

impl Presence<'_> {
    #[inline]
    fn contains(&self, index: u32) -> bool {
        match self {
            Presence::Set(s) => s.contains(index),
            Presence::Tag(b, _) => b.contains(index),
        }
    }
}

/// The presence of `T` in `world`, if `T` is registered.
fn presence<T: Component>(world: &World) -> Option<Presence<'_>> {
    let storage = world.components().storage::<T>()?;
    Some(if is_tag::<T>() {
        Presence::Tag(&storage.tags, storage.tag_count)
    } else {
        Presence::Set(storage.set.split().0)
    })
}

/// A condition a query's entities meet: `()` (none), [`With<T>`], [`Without<T>`], and tuples
/// of up to 12 of them (all must hold).
///
/// # Safety
///
/// `access` declares every storage `matches` reads. Not meant to be implemented outside this
/// crate.
#[allow(unsafe_code)]
pub unsafe trait QueryFilter {
    /// What one run of the query holds.
    #[doc(hidden)]
    type State<'w>;

    /// Declares the storages read (as filters: only their sparse side).
    #[doc(hidden)]
    fn access(world: &World, out: &mut Vec<Access>);

    /// Prepares a run; `None` if no entity can match.
    #[doc(hidden)]
    fn prepare(world: &World) -> Option<Self::State<'_>>;

    /// Offers the filter's storage as the driver.
    #[doc(hidden)]
    fn offer<'w>(state: &Self::State<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>);

    /// Whether entity `index` meets the condition.
    #[doc(hidden)]
    fn matches(state: &Self::State<'_>, index: u32) -> bool;
}

// SAFETY: reads the sparse side of `T`'s storage, as declared.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryFilter for With<T> {
    type State<'w> = Presence<'w>;

    fn access(world: &World, out: &mut Vec<Access>) {
        Access::push::<T>(world, Kind::Filter, out);
    }

    fn prepare(world: &World) -> Option<Presence<'_>> {
        presence::<T>(world)
    }

    #[inline]
    fn offer<'w>(state: &Presence<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>) {
        match *state {
            Presence::Set(s) => offer(best, n, s.indices().len(), Driver::Dense(s.indices())),
            Presence::Tag(b, len) => offer(best, n, len, Driver::Bits(b)),
        }
    }

    #[inline]
    fn matches(state: &Presence<'_>, index: u32) -> bool {
        state.contains(index)
    }
}

// SAFETY: reads the sparse side of `T`'s storage, as declared.
#[allow(unsafe_code)]
unsafe impl<T: Component> QueryFilter for Without<T> {
    type State<'w> = Option<Presence<'w>>;

    fn access(world: &World, out: &mut Vec<Access>) {
        Access::push::<T>(world, Kind::Filter, out);
    }

    fn prepare(world: &World) -> Option<Option<Presence<'_>>> {
        Some(presence::<T>(world))
    }

    #[inline]
    fn offer<'w>(_: &Self::State<'w>, _: &mut usize, _: &mut Option<Candidate<'w>>) {}

    #[inline]
    fn matches(state: &Self::State<'_>, index: u32) -> bool {
        state.as_ref().is_none_or(|p| !p.contains(index))
    }
}

macro_rules! tuple_filter {
    ($($f:ident $i:tt),*) => {
        // SAFETY: the union of the filters' declared accesses.
        #[allow(unsafe_code, clippy::unused_unit, unused_variables)]
        unsafe impl<$($f: QueryFilter),*> QueryFilter for ($($f,)*) {
            type State<'w> = ($($f::State<'w>,)*);

            fn access(world: &World, out: &mut Vec<Access>) {
                $($f::access(world, out);)*
            }

            fn prepare(world: &World) -> Option<Self::State<'_>> {
                Some(($($f::prepare(world)?,)*))
            }

            #[inline]
            fn offer<'w>(state: &Self::State<'w>, n: &mut usize, best: &mut Option<Candidate<'w>>) {
                $($f::offer(&state.$i, n, best);)*
            }

            #[inline]
            fn matches(state: &Self::State<'_>, index: u32) -> bool {
                true $(&& $f::matches(&state.$i, index))*
            }
        }
    };
}

tuple_filter!();
tuple_filter!(A 0);
tuple_filter!(A 0, B 1);
tuple_filter!(A 0, B 1, C 2);
tuple_filter!(A 0, B 1, C 2, D 3);
tuple_filter!(A 0, B 1, C 2, D 3, E 4);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
