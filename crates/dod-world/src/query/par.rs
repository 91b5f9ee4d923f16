//! `rayon`: a query's entities split over threads.

use rayon::prelude::*;

use super::{Driver, Form, Query, QueryData, QueryFilter, QueryForm, Run};

/// A run shared by the threads of one `par_for_each`.
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

impl<Q: QueryData, F: QueryFilter> Shared<'_, '_, Q, F> {
    /// Visits entity `index` at driver position `pos`.
    #[inline]
    fn visit(self, index: u32, pos: usize, f: &(impl Fn(Q::Item<'_>) + Sync)) {
        let run = self.0;
        if !F::matches(&run.filter, index, pos) {
            return;
        }
        // SAFETY: each index comes once, to one thread, from the driver; the item lives only
        // for the call.
        #[allow(unsafe_code)]
        if let Some(item) = unsafe { Q::fetch(&run.data, index, pos) } {
            f(Q::shrink(item));
        }
    }
}

impl<Q: QueryData, F: QueryFilter, const SHARED: bool> Query<'_, Q, F, SHARED>
where
    Form<SHARED>: QueryForm,
{
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
        match run.driver {
            Some(Driver::Dense(indices)) => indices
                .par_iter()
                .enumerate()
                .for_each(|(pos, &index)| shared.visit(index, pos, &f)),
            Some(Driver::Bits(bits)) => bits
                .par_iter()
                .for_each(|index| shared.visit(index, usize::MAX, &f)),
            None => {
                let es = world.entities();
                (0..es.slot_count() as u32)
                    .into_par_iter()
                    .filter(|&i| es.is_occupied(i))
                    .for_each(|index| shared.visit(index, usize::MAX, &f));
            }
        }
    }
}
