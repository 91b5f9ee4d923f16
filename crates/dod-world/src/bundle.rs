//! [`Bundle`]: the components an entity is spawned with or given at once.

use core::any::type_name;

use dod::sparse_set::AppendRun;

use crate::entity::Entity;
use crate::group::GroupMoves;
use crate::storage::{Component, ComponentId, Components, Ctx, Storage};

/// A set of components given to one entity at once: a tuple of up to 12 component values of
/// distinct types, or `()` for none.
///
/// Implemented for tuples; not meant to be implemented by hand (the methods are the world's
/// internals).
///
/// # Panics
///
/// A bundle that holds one type twice (`(Pos, Pos)`) makes the call that received it panic,
/// naming the type, before anything changes.
///
/// ```
/// use dod_world::World;
/// let mut world = World::new();
/// let e = world.spawn((1u8, 2u16, "three"));
/// assert_eq!(world.get::<&str>(e), Some(&"three"));
/// let empty = world.spawn(());
/// assert!(world.is_alive(empty));
/// ```
///
/// ```should_panic
/// let mut world = dod_world::World::new();
/// world.spawn((1u32, 2u32)); // panics: `u32` twice in one bundle
/// ```
///
/// A single component is a one-element tuple, `(Frozen,)`; on its own it does not compile:
///
/// ```compile_fail
/// struct Frozen;
/// let mut world = dod_world::World::new();
/// world.spawn(Frozen); // error: `Frozen` is not a bundle
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a bundle: a bundle is a tuple of up to 12 components, or `()`",
    label = "a tuple of components is expected here",
    note = "to spawn, insert or take a single component, write a one-element tuple: `(component,)`"
)]
pub trait Bundle: Send + Sync + Sized + 'static {
    /// The storages of the bundle's types, borrowed mutably together.
    #[doc(hidden)]
    type Targets<'w>;

    /// The ids of the bundle's types.
    #[doc(hidden)]
    type Ids: AsRef<[ComponentId]> + Copy;

    /// Runs of appends in every storage, for a batch of new entities.
    #[doc(hidden)]
    type Runs<'a>;

    /// Registers the bundle's types and borrows their storages; panics if a type appears
    /// twice.
    #[doc(hidden)]
    fn targets(components: &mut Components) -> (Self::Ids, Self::Targets<'_>);

    /// Room for `additional` more entities in every storage.
    #[doc(hidden)]
    fn reserve(targets: &mut Self::Targets<'_>, additional: usize);

    /// Starts loading the slots of entity `index` in every storage into the cache.
    #[doc(hidden)]
    fn prefetch(targets: &Self::Targets<'_>, index: u32);

    /// Runs of appends from the new entity `first` in every storage, if every storage takes
    /// one (see [`Storage::append_run`]).
    #[doc(hidden)]
    fn runs<'a>(targets: &'a mut Self::Targets<'_>, first: Entity) -> Option<Self::Runs<'a>>;

    /// How many more entities every run can take without growing: pushes within it
    /// allocate nothing, so a bundle is never pushed to some storages and not to others.
    #[doc(hidden)]
    fn runs_room(runs: &Self::Runs<'_>) -> usize;

    /// Reserves in every run the values and dense indices of `n` more entities, so that
    /// pushing them allocates nothing.
    #[doc(hidden)]
    fn reserve_runs(runs: &mut Self::Runs<'_>, n: usize);

    /// Appends every component to its run: the components of the runs' next entity.
    #[doc(hidden)]
    fn push_runs(self, runs: &mut Self::Runs<'_>);

    /// Gives entity `e` every component, dropping the ones it replaces (through the hooks).
    #[doc(hidden)]
    fn put(self, targets: &mut Self::Targets<'_>, e: Entity, ctx: &mut Ctx<'_>);

    /// [`put`](Bundle::put), if every storage is plain (no bits, stamps or hooks): then no
    /// context is needed and no hook runs. Else changes nothing and hands the bundle back.
    /// It does not look at groups: the caller takes this path only in a world without any.
    #[doc(hidden)]
    fn put_plain(self, targets: &mut Self::Targets<'_>, e: Entity) -> Result<(), Self> {
        let _ = (targets, e);
        Err(self)
    }

    /// The ids of the bundle's types, registering them, in order (a type named twice gives
    /// its id twice).
    #[doc(hidden)]
    fn ids(components: &mut Components, out: &mut alloc::vec::Vec<ComponentId>);

    /// How an entity enters and leaves an owning group of the bundle's types, in the order
    /// of [`ids`](Bundle::ids).
    #[doc(hidden)]
    fn group_moves() -> GroupMoves;

    /// The name of a type the bundle holds twice, if any (no world needed: for commands,
    /// which check when they record).
    #[doc(hidden)]
    fn repeated_type() -> Option<&'static str>;

    /// The ids of the bundle's types if every one is registered. Every type is looked up,
    /// also after one that is not registered, so that a misspelled one (`&Pos` for `Pos`)
    /// panics whatever comes before it.
    #[doc(hidden)]
    fn look_up(components: &Components) -> Option<Self::Ids>;

    /// Takes every component of the bundle out of live entity `e` if it has them all (each
    /// leaves its group first, hooks record into `ctx`), else changes nothing. `ids` are the
    /// bundle's ([`look_up`](Bundle::look_up)), and the caller has checked that the bundle
    /// holds no type twice (`check_distinct`).
    #[doc(hidden)]
    fn take(
        components: &mut Components,
        ids: Self::Ids,
        e: Entity,
        ctx: &mut Ctx<'_>,
    ) -> Option<Self>;
}

/// Panics if `B` holds a type twice, naming it.
#[track_caller]
pub(crate) fn check_distinct<B: Bundle>() {
    if let Some(name) = B::repeated_type() {
        repeated(name);
    }
}

impl Bundle for () {
    type Targets<'w> = ();
    type Ids = [ComponentId; 0];
    type Runs<'a> = ();

    #[inline]
    fn targets(_: &mut Components) -> ([ComponentId; 0], ()) {
        ([], ())
    }

    #[inline]
    fn reserve(_: &mut (), _: usize) {}

    #[inline]
    fn prefetch(_: &(), _: u32) {}

    #[inline]
    fn runs(_: &mut (), _: Entity) -> Option<()> {
        Some(())
    }

    #[inline]
    fn runs_room(_: &()) -> usize {
        usize::MAX
    }

    #[inline]
    fn reserve_runs(_: &mut (), _: usize) {}

    #[inline]
    fn push_runs(self, _: &mut ()) {}

    #[inline]
    fn put(self, _: &mut (), _: Entity, _: &mut Ctx<'_>) {}

    #[inline]
    fn put_plain(self, _: &mut (), _: Entity) -> Result<(), ()> {
        Ok(())
    }

    fn ids(_: &mut Components, _: &mut alloc::vec::Vec<ComponentId>) {}

    fn repeated_type() -> Option<&'static str> {
        None
    }

    fn look_up(_: &Components) -> Option<[ComponentId; 0]> {
        Some([])
    }

    fn take(_: &mut Components, _: [ComponentId; 0], _: Entity, _: &mut Ctx<'_>) -> Option<()> {
        Some(())
    }

    fn group_moves() -> GroupMoves {
        // A group owns two types at least: `World::group` refuses `()` before these can run.
        GroupMoves {
            enter: |_, _, _| unreachable!("no group owns no type"),
            leave: |_, _, _, _| unreachable!("no group owns no type"),
        }
    }
}

/// Panics naming the type a bundle holds twice.
#[cold]
#[track_caller]
fn repeated(name: &str) -> ! {
    panic!("a bundle holds the component type `{name}` twice; each type at most once")
}

macro_rules! tuple_bundle {
    ($n:literal; $($t:ident $i:tt),+) => {
        impl<$($t: Component),+> Bundle for ($($t,)+) {
            type Targets<'w> = ($(&'w mut Storage<$t>,)+);
            type Ids = [ComponentId; $n];
            type Runs<'a> = ($(AppendRun<'a, $t>,)+);

            #[inline]
            #[allow(non_snake_case)]
            #[track_caller]
            fn targets(components: &mut Components) -> (Self::Ids, Self::Targets<'_>) {
                let cids: [ComponentId; $n] =
                    components.bundle_ids::<Self, $n>(|c| [$(c.register::<$t>()),+]);
                let ids: [usize; $n] = cids.map(ComponentId::index);
                let columns = match components.columns.get_disjoint_mut(ids) {
                    Ok(c) => c,
                    Err(_) => {
                        // A type twice gives its id twice: name it.
                        check_distinct::<Self>();
                        unreachable!("distinct registered ids are in range")
                    }
                };
                let [$($t),+] = columns;
                // SAFETY: each id came from `register::<$t>()` (or from the ids remembered for
                // this bundle type, made the same way), so its column holds a `Storage<$t>`.
                #[allow(unsafe_code)]
                let targets = unsafe { ($($t.storage_of_mut_unchecked::<$t>(),)+) };
                (cids, targets)
            }

            #[inline]
            fn reserve(targets: &mut Self::Targets<'_>, additional: usize) {
                $(targets.$i.reserve(additional);)+
            }

            #[inline]
            fn prefetch(targets: &Self::Targets<'_>, index: u32) {
                $(targets.$i.prefetch(index);)+
            }

            #[inline]
            fn runs<'a>(targets: &'a mut Self::Targets<'_>, first: Entity) -> Option<Self::Runs<'a>> {
                Some(($(targets.$i.append_run(first)?,)+))
            }

            #[inline]
            fn runs_room(runs: &Self::Runs<'_>) -> usize {
                [$(runs.$i.capacity_left()),+].into_iter().min().unwrap_or(usize::MAX)
            }

            #[inline]
            fn reserve_runs(runs: &mut Self::Runs<'_>, n: usize) {
                $(runs.$i.reserve(n);)+
            }

            // Always inlined: it is the body of the loop of `spawn_run` (`spawn_batch`'s fast
            // path). In a program that spawns many bundle types the compiler kept it out of
            // line despite `#[inline]`, and each entity paid a call and a copy of its bundle
            // (simple_insert took 1.4x as long as with it inlined).
            #[inline(always)]
            fn push_runs(self, runs: &mut Self::Runs<'_>) {
                $(runs.$i.push(self.$i);)+
            }

            #[inline]
            fn put(self, targets: &mut Self::Targets<'_>, e: Entity, ctx: &mut Ctx<'_>) {
                $(targets.$i.insert(e, self.$i, ctx);)+
            }

            #[inline]
            fn put_plain(self, targets: &mut Self::Targets<'_>, e: Entity) -> Result<(), Self> {
                if !(true $(&& targets.$i.is_plain())+) {
                    return Err(self);
                }
                $(
                    let put = targets.$i.insert_plain(e, self.$i);
                    debug_assert!(put.is_ok(), "a plain storage takes a plain insert");
                )+
                Ok(())
            }

            fn group_moves() -> GroupMoves {
                crate::group::typed_group_moves!($n; $($t $i),+)
            }

            fn ids(components: &mut Components, out: &mut alloc::vec::Vec<ComponentId>) {
                $(out.push(components.register::<$t>());)+
            }

            fn repeated_type() -> Option<&'static str> {
                let types = [$(core::any::TypeId::of::<$t>()),+];
                let names: [&'static str; $n] = [$(type_name::<$t>()),+];
                (0..$n).find(|&a| types[a + 1..].contains(&types[a])).map(|a| names[a])
            }

            fn look_up(components: &Components) -> Option<[ComponentId; $n]> {
                let found = [$(components.id::<$t>()),+];
                Some([$(found[$i]?),+])
            }

            fn take(
                components: &mut Components,
                ids: [ComponentId; $n],
                e: Entity,
                ctx: &mut Ctx<'_>,
            ) -> Option<Self> {
                // All or nothing: a missing value takes nothing.
                $(
                    if !components.columns[ids[$i].index()].storage::<$t>().contains(e.index()) {
                        return None;
                    }
                )+
                // Hooks only record here, so no value can go between the check and its
                // removal.
                let taken = ($({
                    components.leave_group_of(e.index(), ids[$i]);
                    components.columns[ids[$i].index()].storage_of_mut::<$t>().remove(e, ctx)
                },)+);
                Some(($(taken.$i?,)+))
            }
        }
    };
}

tuple_bundle!(1; A 0);
tuple_bundle!(2; A 0, B 1);
tuple_bundle!(3; A 0, B 1, C 2);
tuple_bundle!(4; A 0, B 1, C 2, D 3);
tuple_bundle!(5; A 0, B 1, C 2, D 3, E 4);
tuple_bundle!(6; A 0, B 1, C 2, D 3, E 4, F 5);
tuple_bundle!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_bundle!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_bundle!(9; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_bundle!(10; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_bundle!(11; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_bundle!(12; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
