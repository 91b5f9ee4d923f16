//! `rayon`: a query's entities split over threads.

use rayon::iter::plumbing::UnindexedConsumer;
use rayon::iter::Either;
use rayon::prelude::*;

use super::{Driver, Form, Query, QueryData, QueryFilter, QueryForm, Run};
use crate::World;

/// A run shared by the threads of one parallel query.
struct Shared<'r, 'w, Q: QueryData, F: QueryFilter>(&'r Run<'w, Q, F>);

// SAFETY: the run holds pointers into the storages the query may use (checked when it was
// prepared); every entity index is handed to exactly one thread, so the items the threads
// make never alias; items are `&T` (needs `T: Sync`) and `&mut T` (needs `T: Send`), and every
// component is `Send + Sync`.
#[allow(unsafe_code)]
unsafe impl<Q: QueryData, F: QueryFilter> Sync for Shared<'_, '_, Q, F> {}
// SAFETY: as above; only the reference crosses threads.
#[allow(unsafe_code)]
unsafe impl<Q: QueryData, F: QueryFilter> Send for Shared<'_, '_, Q, F> {}

impl<Q: QueryData, F: QueryFilter> Clone for Shared<'_, '_, Q, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q: QueryData, F: QueryFilter> Copy for Shared<'_, '_, Q, F> {}

impl<'w, Q: QueryData, F: QueryFilter> Shared<'_, 'w, Q, F> {
    /// The item of entity `index` at driver position `pos`, if it matches.
    ///
    /// # Safety
    ///
    /// `(index, pos)` comes from [`candidates`] of this run, and no other call of the run's
    /// has it: then no two items alias.
    #[inline]
    #[allow(unsafe_code)]
    unsafe fn fetch(self, index: u32, pos: usize) -> Option<Q::Item<'w>> {
        let run = self.0;
        if !F::matches(&run.filter, index, pos) {
            return None;
        }
        // SAFETY: forwarded contract.
        unsafe { Q::fetch(&run.data, index, pos) }
    }

    /// Calls `f` with the item of entity `index` at driver position `pos`, if it matches.
    #[inline]
    fn visit<R>(self, index: u32, pos: usize, f: impl FnOnce(Q::Item<'_>) -> R) -> Option<R> {
        // SAFETY: each index comes once, to one thread, from the driver; the item lives only
        // for the call.
        #[allow(unsafe_code)]
        let item = unsafe { self.fetch(index, pos) }?;
        Some(f(Q::shrink(item)))
    }
}

/// The items of a query's matching entities as a rayon [`ParallelIterator`]: see
/// [`Query::par_iter`].
pub struct QueryParIter<'q, Q: QueryData, F: QueryFilter> {
    run: Option<Run<'q, Q, F>>,
    world: &'q World,
}

// SAFETY: the run holds pointers into the storages the query may use for `'q` (the query is
// borrowed that long); the iterator hands each entity's item out once, on whatever thread
// rayon runs it, and items are `&T` (`T: Sync`) or `&mut T` (`T: Send`) of components, which
// are `Send + Sync`.
#[allow(unsafe_code)]
unsafe impl<Q: QueryData, F: QueryFilter> Send for QueryParIter<'_, Q, F> {}

impl<'q, Q: QueryData, F: QueryFilter> ParallelIterator for QueryParIter<'q, Q, F>
where
    Q::Item<'q>: Send,
{
    type Item = Q::Item<'q>;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let Some(run) = &self.run else {
            return rayon::iter::empty().drive_unindexed(consumer);
        };
        let shared = Shared(run);
        candidates(run, self.world)
            .filter_map(move |(index, pos)| {
                // SAFETY: every candidate comes once, and this iterator is driven once (it is
                // taken by value).
                #[allow(unsafe_code)]
                unsafe {
                    shared.fetch(index, pos)
                }
            })
            .drive_unindexed(consumer)
    }
}

/// The `(index, driver position)` of every entity a run visits, split over rayon's threads:
/// the driver's entities, or every live entity when nothing is required.
fn candidates<'r, Q: QueryData, F: QueryFilter>(
    run: &'r Run<'_, Q, F>,
    world: &'r crate::World,
) -> impl ParallelIterator<Item = (u32, usize)> + 'r {
    match run.driver {
        Some(Driver::Dense(indices)) => Either::Left(
            indices
                .par_iter()
                .enumerate()
                .map(|(pos, &index)| (index, pos)),
        ),
        Some(Driver::Bits(bits)) => Either::Right(Either::Left(
            bits.par_iter().map(|index| (index, usize::MAX)),
        )),
        None => {
            let es = world.entities();
            Either::Right(Either::Right(
                (0..es.slot_count() as u32)
                    .into_par_iter()
                    .filter(move |&i| es.is_occupied(i))
                    .map(|index| (index, usize::MAX)),
            ))
        }
    }
}

impl<Q: QueryData, F: QueryFilter, const SHARED: bool> Query<'_, Q, F, SHARED>
where
    Form<SHARED>: QueryForm,
{
    /// The items of every matching entity, as a rayon [`ParallelIterator`] that splits the
    /// driver's entities over rayon's threads: for rayon's adaptors (`map`, `filter`, `sum`,
    /// `max_by_key`, `collect`, ...). The items are the ones [`iter`](Query::iter) gives, each
    /// once. Rayon's `collect` into a `Vec` keeps the order of its pieces, which is the order
    /// [`for_each`](Query::for_each) visits in. [`par_for_each`](Query::par_for_each) and
    /// [`par_fold`](Query::par_fold) are the same walk with a closure. O(smallest storage ×
    /// components / threads).
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each), when called (not when driven).
    ///
    /// ```
    /// use dod_world::{Entity, World};
    /// use rayon::prelude::*;
    /// let mut world = World::new();
    /// world.spawn_batch((0..1_000u32).map(|i| (i, i as f32)));
    /// let total: u64 = world.query::<&u32>().par_iter().map(|&n| u64::from(n)).sum();
    /// assert_eq!(total, 499_500);
    /// let (fastest, speed) = world
    ///     .query::<(Entity, &f32)>()
    ///     .par_iter()
    ///     .map(|(e, speed)| (e, *speed))
    ///     .max_by(|a, b| a.1.total_cmp(&b.1))
    ///     .unwrap();
    /// assert_eq!((world.get::<u32>(fastest), speed), (Some(&999), 999.0));
    /// ```
    #[track_caller]
    pub fn par_iter(&mut self) -> QueryParIter<'_, Q, F> {
        let world = self.world;
        QueryParIter {
            run: self.start(),
            world,
        }
    }

    /// Calls `f` with the item of every matching entity, the driver's entities split over
    /// rayon's threads (rayon splits adaptively, so a few heavy items spread as well as many
    /// light ones). O(smallest storage × components / threads).
    ///
    /// # Panics
    ///
    /// As [`for_each`](Query::for_each); a panic in `f` goes on after the threads finish.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn_batch((0..10_000u64).map(|i| (i,)));
    /// world.query::<&mut u64>().par_for_each(|v| *v *= 2);
    /// assert_eq!(world.query::<&u64>().iter().sum::<u64>(), 2 * (0..10_000u64).sum::<u64>());
    /// ```
    #[track_caller]
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        let world = self.world;
        let Some(run) = self.start() else {
            return;
        };
        let shared = Shared(&run);
        candidates(&run, world).for_each(|(index, pos)| {
            shared.visit(index, pos, &f);
        });
    }

    /// [`par_for_each`](Query::par_for_each) with a value of `init`'s making that `f` gets
    /// mutably beside each item: a scratch buffer or a random generator per piece of work,
    /// made far less often than once per item (as rayon's `for_each_init`: once per piece that
    /// rayon splits off, so possibly more than once per thread). Each value is dropped when
    /// its piece ends; to keep what they gather, use [`par_fold`](Query::par_fold).
    ///
    /// # Panics
    ///
    /// As [`par_for_each`](Query::par_for_each).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn_batch((0..1_000u32).map(|i| (i, 0u64)));
    /// // A scratch vector per piece instead of one allocation per entity.
    /// world.query::<(&u32, &mut u64)>().par_for_each_init(Vec::new, |digits, (n, out)| {
    ///     digits.clear();
    ///     let mut n = *n;
    ///     loop {
    ///         digits.push(n % 10);
    ///         n /= 10;
    ///         if n == 0 { break; }
    ///     }
    ///     *out = digits.iter().map(|&d| u64::from(d)).sum();
    /// });
    /// assert_eq!(world.query::<&u64>().iter().sum::<u64>(), 13_500);
    /// ```
    #[track_caller]
    pub fn par_for_each_init<T>(
        &mut self,
        init: impl Fn() -> T + Send + Sync,
        f: impl Fn(&mut T, Q::Item<'_>) + Send + Sync,
    ) {
        let world = self.world;
        let Some(run) = self.start() else {
            return;
        };
        let shared = Shared(&run);
        candidates(&run, world).for_each_init(init, |state, (index, pos)| {
            shared.visit(index, pos, |item| f(state, item));
        });
    }

    /// Folds the items of every matching entity on rayon's threads and merges the results:
    /// each piece of work that has a matching entity starts from `identity()` and folds its
    /// items in with `fold`, and the pieces' results are merged with `reduce`, the earlier
    /// piece's on the left (as rayon's `fold` then `reduce`). The left-to-right order of the
    /// merged result is the order [`for_each`](Query::for_each) visits the items in. A query
    /// with no match returns `identity()`, made once; pieces with no match make nothing. As
    /// with rayon, `identity()` should be an identity of `reduce` (an empty buffer, a zero):
    /// how many pieces there are is rayon's choice.
    ///
    /// The way to record [`Commands`](crate::Commands) from many threads: a buffer per piece,
    /// merged with [`Commands::append`](crate::Commands::append), then applied once.
    ///
    /// # Panics
    ///
    /// As [`par_for_each`](Query::par_for_each), for a panic in any of the three closures.
    ///
    /// ```
    /// use dod_world::{Commands, Entity, World};
    /// let mut world = World::new();
    /// world.spawn_batch((0..1_000i32).map(|hp| (hp,)));
    /// let mut dead = world.query::<(Entity, &i32)>().par_fold(
    ///     Commands::new,
    ///     |mut commands, (e, hp)| {
    ///         if *hp < 10 {
    ///             commands.despawn(e);
    ///         }
    ///         commands
    ///     },
    ///     |mut left, mut right| {
    ///         left.append(&mut right);
    ///         left
    ///     },
    /// );
    /// world.apply(&mut dead);
    /// assert_eq!(world.len(), 990);
    /// ```
    #[track_caller]
    pub fn par_fold<T: Send>(
        &mut self,
        identity: impl Fn() -> T + Send + Sync,
        fold: impl Fn(T, Q::Item<'_>) -> T + Send + Sync,
        reduce: impl Fn(T, T) -> T + Send + Sync,
    ) -> T {
        let world = self.world;
        let Some(run) = self.start() else {
            return identity();
        };
        let shared = Shared(&run);
        candidates(&run, world)
            .fold(
                || None,
                |mut acc: Option<T>, (index, pos)| {
                    // A piece's value is made at its first match.
                    let folded = shared.visit(index, pos, |item| {
                        fold(acc.take().unwrap_or_else(&identity), item)
                    });
                    folded.or(acc)
                },
            )
            .reduce(
                || None,
                |left, right| match (left, right) {
                    (Some(left), Some(right)) => Some(reduce(left, right)),
                    (left, None) => left,
                    (None, right) => right,
                },
            )
            .unwrap_or_else(identity)
    }
}
