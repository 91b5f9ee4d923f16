//! Behaviour of the world, one property per test: liveness at every entry point, queries and
//! their drivers, the borrow checks of both forms, commands, panic safety, drop counts.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dod_world::{Commands, Entity, QueryState, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Enemy;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tank;

/// Counts live instances; `Drop` panics when `boom` is set.
#[derive(Debug)]
struct Counted {
    live: Arc<AtomicUsize>,
    boom: bool,
}

impl Counted {
    fn new(live: &Arc<AtomicUsize>, boom: bool) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Counted {
            live: live.clone(),
            boom,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
        if self.boom && !std::thread::panicking() {
            panic!("boom");
        }
    }
}

#[test]
fn stale_and_foreign_entities_never_see_data() {
    let mut world = World::builder().min_free(0).build();
    let a = world.spawn((Pos(1.0),));
    world.despawn(a);
    let b = world.spawn((Pos(2.0),));
    assert_eq!(a.index(), b.index(), "slot reused at once with min_free 0");
    assert_eq!(world.get::<Pos>(a), None);
    assert!(!world.has::<Pos>(a));
    assert!(world.entity(a).is_err());
    assert_eq!(world.insert(a, (Vel(0.0),)).map_err(|e| e.entity()), Err(a));
    assert_eq!(world.remove::<Pos>(a), None);
    assert!(!world.despawn(a));
    assert!(world.query::<&Pos>().get(a).is_none());
    assert_eq!(world.get::<Pos>(b), Some(&Pos(2.0)));

    let mut other = World::builder().min_free(0).build();
    let c = other.spawn((Pos(3.0),));
    assert_eq!(c.index(), b.index());
    assert_eq!(world.get::<Pos>(c), None, "an entity of another world");
    assert_eq!(other.get::<Pos>(b), None);
}

#[test]
fn a_despawn_batch_stops_where_its_iterator_first_ends() {
    // An iterator that yields again after a `None`: the batch ends at the `None`, as a loop
    // would, and leaves the rest of the iterator unread.
    let mut world = World::new();
    let es: Vec<Entity> = (0..12u32).map(|i| world.spawn((i,))).collect();
    let mut items = es[..5]
        .iter()
        .map(|&e| Some(e))
        .chain([None])
        .chain(es[5..].iter().map(|&e| Some(e)));
    let mut source = std::iter::from_fn(|| items.next());
    let mut yielded = std::iter::from_fn(|| source.next().flatten());
    assert_eq!(world.despawn_batch(&mut yielded), 5);
    assert_eq!(yielded.next(), Some(es[5]), "nothing past the end was read");
    assert_eq!(world.len(), 7);
}

#[test]
fn queries_drive_from_the_smallest_storage_and_match_every_combination() {
    let mut world = World::new();
    let mut expect = Vec::new();
    for i in 0..300u32 {
        let e = world.spawn((Pos(i as f32),));
        if i % 2 == 0 {
            world.insert(e, (Vel(1.0),)).unwrap();
        }
        if i % 7 == 0 {
            world.insert(e, (Enemy,)).unwrap();
        }
        if i % 14 == 0 {
            world.insert(e, (Tank,)).unwrap();
        }
        if i % 2 == 0 && i % 7 == 0 && i % 14 != 0 {
            expect.push(e);
        }
    }
    let got: Vec<Entity> = world
        .query::<(Entity, &Pos, &Vel)>()
        .with::<Enemy>()
        .without::<Tank>()
        .iter()
        .map(|(e, _, _)| e)
        .collect();
    // i % 2 == 0 and i % 7 == 0 means i % 14 == 0, so every such entity is a tank.
    assert_eq!(got, expect);
    assert!(got.is_empty());

    // Enemies that are not tanks, with optional velocity.
    let mut n = 0;
    world
        .query::<(&Pos, Option<&Vel>)>()
        .with::<Enemy>()
        .without::<Tank>()
        .for_each(|(p, v)| {
            let i = p.0 as u32;
            assert!(i % 7 == 0 && i % 14 != 0);
            assert_eq!(v.is_some(), i % 2 == 0);
            n += 1;
        });
    assert_eq!(n, (0..300).filter(|i| i % 7 == 0 && i % 14 != 0).count());

    // A tag-only query drives from the bits.
    let tanks: Vec<Entity> = world.query::<Entity>().with::<Tank>().iter().collect();
    assert_eq!(tanks.len(), (0..300).filter(|i| i % 14 == 0).count());

    // A query with no required component visits every live entity.
    assert_eq!(world.query::<Entity>().count(), 300);
    assert_eq!(world.query::<Option<&Vel>>().count(), 300);
}

#[test]
fn iter_for_each_and_get_agree() {
    let mut world = World::new();
    for i in 0..100u32 {
        let e = world.spawn((Health(i),));
        if i % 3 == 0 {
            world.insert(e, (Pos(i as f32),)).unwrap();
        }
    }
    let mut a = Vec::new();
    world
        .query::<(Entity, &Health, &Pos)>()
        .for_each(|(e, h, _)| a.push((e, h.0)));
    let b: Vec<(Entity, u32)> = world
        .query::<(Entity, &Health, &Pos)>()
        .iter()
        .map(|(e, h, _)| (e, h.0))
        .collect();
    assert_eq!(a, b);
    let mut q = world.query::<(&Health, &Pos)>();
    for &(e, h) in &a {
        assert_eq!(q.get(e).map(|(h, _)| h.0), Some(h));
    }
    drop(q);
    let all: Vec<Entity> = world.query::<Entity>().iter().collect();
    let mut q = world.query::<(&Health, &Pos)>();
    let hits = all.iter().filter(|&&e| q.get(e).is_some()).count();
    assert_eq!(hits, a.len());
}

#[test]
fn mutable_queries_write_each_entity_once() {
    let mut world = World::new();
    let n = if cfg!(miri) { 50 } else { 1000 };
    world.spawn_batch((0..n).map(|i| (Pos(0.0), Vel(i as f32))));
    world
        .query::<(&mut Pos, &Vel)>()
        .for_each(|(p, v)| p.0 += v.0);
    world
        .query::<(&mut Pos, &Vel)>()
        .iter()
        .for_each(|(p, v)| p.0 += v.0);
    let sum: f32 = world.query::<&Pos>().iter().map(|p| p.0).sum();
    assert_eq!(sum, 2.0 * (0..n).sum::<u32>() as f32);
}

#[test]
#[should_panic(expected = "asks for `world::Pos` mutably twice")]
fn a_component_asked_mutably_twice_panics_naming_it() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    world.query::<(&mut Pos, &mut Pos)>().for_each(|_| {});
}

#[test]
#[should_panic(expected = "asks for `world::Pos` both mutably and shared")]
fn a_component_asked_mutably_and_shared_panics_naming_it() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    world.query::<(&Pos, Option<&mut Pos>)>().for_each(|_| {});
}

/// A conflicting query is refused on its first run even while its type has no storage yet
/// (no value was ever inserted), in every form, and two distinct unregistered types do not
/// conflict.
#[test]
fn a_conflict_on_a_type_never_inserted_panics_on_the_first_run() {
    struct Never(#[allow(dead_code)] u8);
    struct Other(#[allow(dead_code)] u8);
    let caught = |f: &mut dyn FnMut()| {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .expect_err("the query runs a conflict");
        err.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    let msg = caught(&mut || {
        world.query::<(&mut Never, &mut Never)>().count();
    });
    assert!(msg.contains("`world::a_conflict_on_a_type_never_inserted_panics_on_the_first_run::Never` mutably twice"), "{msg}");
    let msg = caught(&mut || {
        world
            .query::<(&Never, Option<&mut Never>)>()
            .for_each(|_| {});
    });
    assert!(msg.contains("both mutably and shared"), "{msg}");
    let msg = caught(&mut || {
        let mut state = QueryState::<(&mut Never, &mut Never)>::new();
        state.query(&mut world).count();
    });
    assert!(msg.contains("mutably twice"), "{msg}");
    let msg = caught(&mut || {
        world.share().query::<(&mut Never, &Never)>().count();
    });
    assert!(msg.contains("both mutably and shared"), "{msg}");
    assert_eq!(world.query::<(&mut Never, &mut Other, &Pos)>().count(), 0);
    world.assert_invariants();
}

/// The message of the panic `f` must raise.
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("a misspelled component type");
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn a_reference_or_tuple_of_component_types_is_refused_naming_the_type() {
    let mut world = World::new();
    let e = world.spawn((Pos(1.0), Vel(2.0), Enemy));
    let reference = "is not a component type of this world: components are named by their type";
    let tuple = "a tuple of components is a bundle";
    let msg = panic_message(|| {
        let _ = world.get::<&Pos>(e);
    });
    assert!(
        msg.contains("`&world::Pos`") && msg.contains(reference),
        "{msg}"
    );
    assert!(msg.contains("`world::Pos`"), "{msg}");
    let msg = panic_message(|| {
        let _ = world.has::<&mut Vel>(e);
    });
    assert!(
        msg.contains("`&mut world::Vel`") && msg.contains(reference),
        "{msg}"
    );
    let msg = panic_message(|| {
        let _ = world.remove::<(Pos, Vel)>(e);
    });
    assert!(
        msg.contains("`(world::Pos, world::Vel)`") && msg.contains(tuple),
        "{msg}"
    );
    let msg = panic_message(|| {
        let _ = world.query::<&Pos>().with::<&Enemy>().count();
    });
    assert!(msg.contains("`&world::Enemy`"), "{msg}");
    let msg = panic_message(|| {
        let _ = world.get::<(&Pos, &Vel)>(e);
    });
    assert!(msg.contains(tuple) && msg.contains("World::take"), "{msg}");
    let msg = panic_message(|| {
        let _ = world.get::<(Enemy,)>(e);
    });
    assert!(
        msg.contains("`(world::Enemy,)`") && msg.contains(tuple),
        "{msg}"
    );
    let msg = panic_message(|| world.track::<&Pos>());
    assert!(
        msg.contains("`&world::Pos`") && msg.contains(reference),
        "{msg}"
    );
    assert!(!world.is_tracked::<Pos>());
    // Nothing was lost or added on the way.
    assert_eq!(world.get::<Pos>(e), Some(&Pos(1.0)));
    assert_eq!(world.get::<Vel>(e), Some(&Vel(2.0)));
    assert_eq!(world.len(), 1);
    // References and tuples of types the world does not hold as components stay components.
    let named = world.spawn(("grunt", (1u8, 2u16)));
    assert_eq!(world.get::<&str>(named), Some(&"grunt"));
    assert_eq!(world.get::<(u8, u16)>(named), Some(&(1, 2)));
    assert_eq!(world.get::<&u64>(named), None);
    // Storing a reference or a tuple of held types registers it: from then on it is found
    // like any other component, whatever the order the types came in.
    static PROTO: Pos = Pos(9.0);
    let fly = world.spawn((&PROTO, (Pos(1.0), Vel(1.0))));
    assert_eq!(world.get::<&Pos>(fly), Some(&&PROTO));
    assert_eq!(world.get::<(Pos, Vel)>(fly), Some(&(Pos(1.0), Vel(1.0))));
    assert_eq!(world.get::<&Pos>(e), None);
    assert!(!world.has::<(Pos, Vel)>(e));
    // A registered reference type is tracked like any other.
    world.track::<&Pos>();
    assert!(world.is_tracked::<&Pos>() && !world.is_tracked::<Pos>());
    world.assert_invariants();
}

#[test]
fn filters_on_a_written_component_are_allowed() {
    let mut world = World::new();
    world.spawn((Pos(1.0),));
    let mut n = 0;
    world.query::<&mut Pos>().with::<Pos>().for_each(|p| {
        p.0 += 1.0;
        n += 1;
    });
    assert_eq!(n, 1);
}

#[test]
fn shared_queries_run_side_by_side_and_conflicts_panic() {
    let n = if cfg!(miri) { 40 } else { 5000 };
    let mut world = World::new();
    world.spawn_batch((0..n).map(|i| (Pos(0.0), Vel(1.0), Health(i))));
    let w = world.share();
    std::thread::scope(|s| {
        s.spawn(|| w.query::<(&mut Pos, &Vel)>().for_each(|(p, v)| p.0 += v.0));
        s.spawn(|| w.query::<&mut Health>().for_each(|h| h.0 += 1));
        s.spawn(|| w.query::<&Vel>().count());
    });
    // A conflicting borrow while another query holds `Pos` mutably panics and names it.
    let mut writer = w.query::<&mut Pos>();
    writer.for_each(|_| {});
    let r = catch_unwind(AssertUnwindSafe(|| w.query::<&Pos>().count()));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("world::Pos") && msg.contains("borrowed mutably"),
        "{msg}"
    );
    // Reading something else is fine meanwhile.
    assert_eq!(w.query::<&Vel>().count(), n as usize);
    drop(writer);
    assert_eq!(w.query::<&Pos>().count(), n as usize, "released on drop");
    let total: f32 = world.query::<&Pos>().iter().map(|p| p.0).sum();
    assert_eq!(total, n as f32);
    world.assert_invariants();
}

/// On a shared world, a presence test (`With`, `Without`, `Has`) of a component takes no
/// borrow flag: it runs beside a query that writes that component, on another thread, and
/// sees the same entities. A change filter reads the stamps the writer writes, so it still
/// conflicts.
#[test]
fn presence_filters_run_beside_a_writer_of_their_component() {
    let n: u32 = if cfg!(miri) { 40 } else { 5000 };
    let mut world = World::new();
    world.track::<Health>();
    world.spawn_batch((0..n).map(|i| (Pos(0.0), Vel(1.0), Health(i))));
    world.spawn_batch((0..n / 2).map(|_| (Vel(2.0),)));
    let w = world.share();
    let (with, without, has) = std::thread::scope(|s| {
        s.spawn(|| {
            w.query::<(&mut Pos, &mut Health)>().for_each(|(p, h)| {
                p.0 += 1.0;
                h.0 += 1;
            })
        });
        let with = s.spawn(|| w.query::<&Vel>().with::<Pos>().count());
        let without = s.spawn(|| {
            w.query::<&Vel>()
                .without::<Health>()
                .iter()
                .map(|v| v.0)
                .sum::<f32>()
        });
        let has = s.spawn(|| {
            w.query::<(&Vel, dod_world::Has<Pos>)>()
                .iter()
                .filter(|(_, has)| *has)
                .count()
        });
        (
            with.join().unwrap(),
            without.join().unwrap(),
            has.join().unwrap(),
        )
    });
    assert_eq!((with, has), (n as usize, n as usize));
    assert_eq!(without, (n / 2) as f32 * 2.0);
    // Held across a writer that is still alive, on one thread.
    let mut writer = w.query::<&mut Pos>();
    writer.for_each(|p| p.0 += 1.0);
    assert_eq!(w.query::<&Vel>().with::<Pos>().count(), n as usize);
    let mut changes = QueryState::<&Vel, dod_world::Changed<Health>>::new();
    let mut health = w.query::<&mut Health>();
    health.for_each(|_| {});
    let r = catch_unwind(AssertUnwindSafe(|| changes.query_shared(w).count()));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("world::Health") && msg.contains("borrowed mutably"),
        "a change filter still conflicts with a writer: {msg}"
    );
    drop((writer, health));
    let total: f32 = world.query::<&Pos>().iter().map(|p| p.0).sum();
    assert_eq!(total, 2.0 * n as f32);
    world.assert_invariants();
}

/// A shared world's writers write where the values are when the world is shared: after the
/// values grow (and move) between two shares, the second share's writers find them, beside
/// presence tests on other threads. (A share that kept the first pointers would write freed
/// memory; debug builds also check the pointers against the storage.)
#[test]
fn a_writer_finds_the_values_after_they_move_between_shares() {
    let mut world = World::new();
    world.track::<Pos>();
    world.spawn_batch((0..4).map(|_| (Pos(0.0), Vel(1.0))));
    world.share().query::<&mut Pos>().for_each(|p| p.0 += 1.0);
    let before = world.query::<&Pos>().iter().next().map(|p| p as *const Pos);
    world.spawn_batch((0..1000).map(|_| (Pos(0.0), Vel(1.0))));
    let after = world.query::<&Pos>().iter().next().map(|p| p as *const Pos);
    assert_ne!(before, after, "the values moved (the test needs them to)");
    let w = world.share();
    std::thread::scope(|s| {
        s.spawn(|| w.query::<&mut Pos>().for_each(|p| p.0 += 1.0));
        s.spawn(|| assert_eq!(w.query::<&Vel>().with::<Pos>().count(), 1004));
    });
    let total: f32 = world.query::<&Pos>().iter().map(|p| p.0).sum();
    assert_eq!(total, 4.0 * 2.0 + 1000.0);
    world.assert_invariants();
}

/// A query may test for a component it also writes, in either order: the test reads only
/// the sparse side, which the writer does not touch.
#[test]
fn a_query_tests_presence_of_what_it_writes() {
    let mut world = World::new();
    world.spawn_batch((0..10).map(|i| (Health(i), Vel(1.0))));
    world.spawn_batch((0..5).map(|_| (Vel(2.0),)));
    world
        .query::<(dod_world::Has<Health>, &mut Health)>()
        .for_each(|(has, h)| {
            assert!(has);
            h.0 += 1;
        });
    world
        .query::<(&mut Health, dod_world::Has<Health>)>()
        .with::<Health>()
        .for_each(|(h, has)| {
            assert!(has);
            h.0 += 1;
        });
    let w = world.share();
    w.query::<(dod_world::Has<Health>, &mut Health)>()
        .for_each(|(_, h)| h.0 += 1);
    let sum: u32 = world.query::<&Health>().iter().map(|h| h.0).sum();
    assert_eq!(sum, (0..10).sum::<u32>() + 30);
    // A tag, stored as bits.
    world.spawn_batch((0..3).map(|_| (Enemy,)));
    let n = world
        .query::<(dod_world::Has<Enemy>, &mut Enemy)>()
        .with::<Enemy>()
        .iter()
        .filter(|(has, _)| *has)
        .count();
    assert_eq!(n, 3);
    world.assert_invariants();
}

#[test]
fn a_panicking_query_closure_releases_its_borrows() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    let w = world.share();
    let r = catch_unwind(AssertUnwindSafe(|| {
        w.query::<&mut Pos>().for_each(|_| panic!("system failed"))
    }));
    assert!(r.is_err());
    assert_eq!(w.query::<&mut Pos>().count(), 1, "the flag was released");
    world.assert_invariants();
}

/// A query whose access check panicked, caught, and run again: it must panic again, not run
/// unchecked (two `&mut` to one value) or, in the shared form, without its borrow flags.
#[test]
fn a_query_whose_check_panicked_checks_again_when_run_again() {
    let mut world = World::new();
    world.spawn((Health(1),));
    let mut twice = world.query::<(&mut Health, &mut Health)>();
    for _ in 0..2 {
        let r = catch_unwind(AssertUnwindSafe(|| twice.for_each(|_| {})));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("Health"), "{msg}");
    }
    assert!(catch_unwind(AssertUnwindSafe(|| twice.iter().count())).is_err());
    drop(twice);

    let w = world.share();
    let mut first = w.query::<&mut Health>();
    assert_eq!(first.iter().count(), 1);
    let mut second = w.query::<&mut Health>();
    for _ in 0..2 {
        let r = catch_unwind(AssertUnwindSafe(|| second.for_each(|_| {})));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("borrowed mutably"), "{msg}");
    }
    drop(first);
    // The first query's flag is gone: the second takes it now, and holds it.
    second.for_each(|h| h.0 += 1);
    assert!(catch_unwind(AssertUnwindSafe(|| w.query::<&Health>().count())).is_err());
    drop(second);
    assert_eq!(w.query::<&Health>().iter().next(), Some(&Health(2)));
    world.assert_invariants();
}

#[test]
#[should_panic(
    expected = "`world::Pos` is already borrowed mutably by another live query (a \
                           query keeps its borrows from its first run until it is dropped); \
                           cannot borrow it shared"
)]
fn a_query_that_ran_keeps_its_borrows_until_dropped_and_the_panic_says_so() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    let w = world.share();
    let mut writer = w.query::<&mut Pos>();
    writer.for_each(|p| p.0 += 1.0);
    let _ = w.query::<&Pos>().count();
}

/// A bundle that holds a type twice is refused when the command is recorded, naming the
/// type, before an entity is reserved: nothing is left for the next flush to make alive.
#[test]
fn commands_refuse_a_repeated_type_when_recording() {
    let mut world = World::new();
    let e = world.spawn(());
    let mut commands = Commands::new();
    for attempt in 0..3 {
        let r = catch_unwind(AssertUnwindSafe(|| match attempt {
            0 => drop(commands.spawn(world.entities(), (Pos(1.0), Health(1), Pos(2.0)))),
            1 => commands.insert(e, (Health(1), Health(2))),
            _ => commands.spawn_unnamed((Vel(1.0), Vel(2.0))),
        }));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("twice"), "{msg}");
    }
    assert!(commands.is_empty());
    world.apply(&mut commands);
    assert_eq!(world.len(), 1, "no entity was reserved");
    world.assert_invariants();
}

/// A shared query that was leaked keeps its borrow flags, but only until the world is
/// shared again: the next `share` starts with every flag free.
#[test]
fn a_leaked_shared_query_does_not_block_the_next_share() {
    let mut world = World::new();
    world.spawn((Health(1),));
    {
        let w = world.share();
        let mut q = w.query::<&mut Health>();
        q.for_each(|h| h.0 += 1);
        std::mem::forget(q);
        // Within that share, the leaked borrow still counts.
        let conflict = catch_unwind(AssertUnwindSafe(|| w.query::<&Health>().count()));
        assert!(conflict.is_err());
    }
    let w = world.share();
    assert_eq!(w.query::<&Health>().iter().map(|h| h.0).sum::<u32>(), 2);
    w.query::<&mut Health>().for_each(|h| h.0 += 1);
    assert_eq!(world.query::<&Health>().iter().next().map(|h| h.0), Some(3));
    world.assert_invariants();
}

/// A bundle that holds a type twice makes `spawn`, `spawn_batch` and `insert` panic before
/// anything changes: no reserved entity is made alive, no type is registered, and an
/// `insert` on an entity that is not alive panics rather than returning its error.
#[test]
fn a_repeated_type_panics_before_anything_changes() {
    let mut world = World::new();
    let dead = world.spawn(());
    world.despawn(dead);
    let reserved = world.reserve_entity();
    for attempt in 0..3 {
        let msg = panic_message(|| match attempt {
            0 => drop(world.spawn((Health(1), Health(2)))),
            1 => drop(world.spawn_batch([(Vel(1.0), Vel(2.0))])),
            _ => drop(world.insert(dead, (Pos(1.0), Pos(2.0)))),
        });
        assert!(msg.contains("twice"), "{msg}");
    }
    assert!(!world.is_alive(reserved), "the reservation was not flushed");
    assert_eq!(
        world.register::<Enemy>().index(),
        0,
        "no type was registered"
    );
    world.flush();
    assert!(world.is_alive(reserved));
    world.assert_invariants();
}

/// A misspelled type (`&Pos` for `Pos`) panics whatever the entity: one that is not alive
/// too, and in a taken bundle also after a type that is not registered.
#[test]
fn a_misspelled_type_panics_for_a_dead_entity_too() {
    let mut world = World::new();
    let e = world.spawn((Pos(1.0),));
    let dead = world.spawn((Pos(2.0),));
    world.despawn(dead);
    /// A lookup of `&Pos` in the world, given the live entity and the dead one. (`Health`
    /// was never stored: the last looks it up first.)
    type Call = fn(&mut World, Entity, Entity);
    let calls: [(&str, Call); 4] = [
        ("remove", |w, _, dead| {
            let _ = w.remove::<&Pos>(dead);
        }),
        ("get_disjoint_mut", |w, _, dead| {
            let _ = w.get_disjoint_mut::<&Pos, 1>([dead]);
        }),
        ("take", |w, _, dead| {
            let _ = w.take::<(&Pos,)>(dead);
        }),
        ("take after an unregistered type", |w, e, _| {
            let _ = w.take::<(Health, &Pos)>(e);
        }),
    ];
    for (name, call) in calls {
        let msg = panic_message(|| call(&mut world, e, dead));
        assert!(msg.contains("`&world::Pos`"), "{name}: {msg}");
    }
    // Spelled right, the same calls give nothing for the dead entity.
    assert_eq!(world.remove::<Pos>(dead), None);
    assert!(world.get_disjoint_mut::<Pos, 1>([dead]).is_none());
    assert_eq!(world.take::<(Pos,)>(dead), None);
    assert_eq!(world.take::<(Health, Pos)>(e), None);
    assert_eq!(world.get::<Pos>(e), Some(&Pos(1.0)));
    world.assert_invariants();
}

#[test]
fn commands_reserve_at_once_and_apply_in_order() {
    let mut world = World::new();
    let a = world.spawn((Health(1),));
    let b = world.spawn((Health(0),));
    let mut commands = Commands::new();
    let w = world.share();
    let mut spawned = Vec::new();
    w.query::<(Entity, &Health)>().for_each(|(e, h)| {
        if h.0 == 0 {
            commands.despawn(e);
            spawned.push(commands.spawn(w.entities(), (Health(10), Enemy)));
        }
    });
    let late = w.entities().reserve();
    commands.insert(late, (Pos(1.0),));
    commands.insert(b, (Pos(2.0),)); // b is despawned first: skipped
    commands.remove::<Health>(a);
    assert_eq!(world.apply(&mut commands), 1);
    assert!(commands.is_empty());
    assert!(!world.is_alive(b));
    assert_eq!(world.get::<Health>(spawned[0]), Some(&Health(10)));
    assert!(world.has::<Enemy>(spawned[0]));
    assert_eq!(world.get::<Pos>(late), Some(&Pos(1.0)));
    assert_eq!(world.get::<Health>(a), None);
    world.assert_invariants();
}

#[test]
fn reservations_from_many_threads_are_distinct() {
    let mut world = World::builder().min_free(0).build();
    let olds: Vec<Entity> = (0..100).map(|_| world.spawn(())).collect();
    for &e in &olds[..50] {
        world.despawn(e);
    }
    let w = world.share();
    let per_thread = if cfg!(miri) { 20 } else { 100 };
    let reserved: Vec<Entity> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    (0..per_thread)
                        .map(|_| w.entities().reserve())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut idx: Vec<u32> = reserved.iter().map(|e| e.index()).collect();
    idx.sort_unstable();
    idx.dedup();
    assert_eq!(
        idx.len(),
        4 * per_thread,
        "every reservation names its own slot"
    );
    world.flush();
    assert!(reserved.iter().all(|&e| world.is_alive(e)));
    assert!(olds[..50].iter().all(|&e| !world.is_alive(e)));
    assert_eq!(world.len(), 50 + 4 * per_thread);
    world.assert_invariants();
}

#[test]
fn every_component_is_dropped_exactly_once() {
    let live = Arc::new(AtomicUsize::new(0));
    {
        let mut world = World::new();
        let es: Vec<Entity> = (0..50)
            .map(|_| world.spawn((Counted::new(&live, false),)))
            .collect();
        assert_eq!(live.load(Ordering::SeqCst), 50);
        world.despawn(es[0]);
        world.remove::<Counted>(es[1]);
        world.insert(es[2], (Counted::new(&live, false),)).unwrap(); // replaces
        assert_eq!(live.load(Ordering::SeqCst), 48);
        let mut c = Commands::new();
        c.spawn(world.entities(), (Counted::new(&live, false),));
        drop(c); // unapplied: the bundle is dropped with it
        assert_eq!(live.load(Ordering::SeqCst), 48);
        world.clear();
        assert_eq!(live.load(Ordering::SeqCst), 0);
        world.spawn((Counted::new(&live, false),));
    }
    assert_eq!(
        live.load(Ordering::SeqCst),
        0,
        "the world's drop drops the rest"
    );
}

#[test]
fn a_panicking_drop_in_despawn_leaves_the_world_valid() {
    let live = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let e = world.spawn((Counted::new(&live, true), Pos(1.0), Health(3)));
    let keep = world.spawn((Pos(2.0),));
    let r = catch_unwind(AssertUnwindSafe(|| world.despawn(e)));
    assert!(r.is_err());
    assert!(!world.is_alive(e));
    assert_eq!(world.get::<Pos>(e), None);
    assert_eq!(world.count::<Health>(), 0, "the other components went too");
    assert_eq!(live.load(Ordering::SeqCst), 0);
    assert_eq!(world.get::<Pos>(keep), Some(&Pos(2.0)));
    world.assert_invariants();
}

#[test]
fn tags_are_bits_and_behave_like_components() {
    let mut world = World::new();
    let e = world.spawn((Enemy, Pos(0.0)));
    assert!(world.has::<Enemy>(e));
    assert_eq!(world.get::<Enemy>(e), Some(&Enemy));
    assert_eq!(world.insert(e, (Enemy,)), Ok(()));
    assert_eq!(world.count::<Enemy>(), 1);
    assert_eq!(world.remove::<Enemy>(e), Some(Enemy));
    assert_eq!(world.remove::<Enemy>(e), None);
    assert_eq!(world.count::<Enemy>(), 0);
    world.insert(e, (Enemy,)).unwrap();
    let mut seen = 0;
    world
        .query::<(&mut Enemy, &Pos)>()
        .for_each(|(_, _)| seen += 1);
    assert_eq!(seen, 1);
    world.assert_invariants();
}

#[test]
fn spawn_batch_writes_new_entities_at_once_and_reused_slots_as_it_is_walked() {
    use std::cell::Cell;
    // New slots, plain storages: the whole batch is written when `spawn_batch` returns.
    let mut world = World::builder().min_free(0).build();
    let taken = Cell::new(0);
    let batch = world.spawn_batch((0..5u32).map(|i| {
        taken.set(taken.get() + 1);
        (Health(i), Pos(i as f32))
    }));
    assert_eq!(taken.get(), 5, "written as one run");
    let es: Vec<Entity> = batch.collect();
    assert_eq!(
        es.iter().map(|e| e.index()).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert!(es.iter().all(|&e| world.is_alive(e) && e.generation() == 1));
    assert_eq!(world.get::<Pos>(es[4]), Some(&Pos(4.0)));
    // Freed slots to reuse: one entity at a time, as the batch is walked.
    world.despawn(es[0]);
    world.despawn(es[1]);
    taken.set(0);
    let mut batch = world.spawn_batch((0..2u32).map(|i| {
        taken.set(taken.get() + 1);
        (Health(i),)
    }));
    assert_eq!(taken.get(), 0, "nothing spawned before the walk");
    let reused = batch.next().unwrap();
    assert_eq!((taken.get(), reused.index()), (1, 0));
    drop(batch);
    assert_eq!(world.len(), 5);
    world.assert_invariants();
}

#[test]
fn spawn_batch_past_the_reserved_room_spawns_every_bundle_whole() {
    // A size hint of 0 (a filter) reserves nothing: the run takes what room the storages
    // have without growing, and the rest are spawned one by one. Every entity gets both
    // components, in order.
    let mut world = World::builder().min_free(0).build();
    let es: Vec<Entity> = world
        .spawn_batch(
            (0..1000u32)
                .filter(|i| i % 3 != 0)
                .map(|i| (Health(i), Pos(i as f32))),
        )
        .collect();
    assert_eq!(es.len(), 666);
    for (k, &e) in es.iter().enumerate() {
        assert_eq!(e.index(), k as u32);
        let i = (k / 2) * 3 + 1 + k % 2;
        assert_eq!(world.get::<Health>(e), Some(&Health(i as u32)));
        assert_eq!(world.get::<Pos>(e), Some(&Pos(i as f32)));
    }
    assert_eq!((world.count::<Health>(), world.count::<Pos>()), (666, 666));
    world.assert_invariants();
}

#[test]
fn spawn_batch_of_empty_bundles_reserves_only_its_entities() {
    // An empty bundle has no storage to bound its run: the entity slots reserved for the
    // size hint do (not the whole id space).
    let mut world = World::new();
    let es: Vec<Entity> = world.spawn_batch((0..3).map(|_| ())).collect();
    assert_eq!(es.len(), 3);
    assert!(es.iter().all(|&e| world.is_alive(e)));
    assert!(world.memory_usage() < 4096, "{}", world.memory_usage());
    // A size hint of 0: the run takes what room there is, the rest come one by one.
    let more: Vec<Entity> = world
        .spawn_batch((0..100).filter(|i| i % 2 == 0).map(|_| ()))
        .collect();
    assert_eq!(more.len(), 50);
    assert_eq!(world.len(), 53);
    assert!(world.memory_usage() < 4096, "{}", world.memory_usage());
    world.assert_invariants();
}

#[test]
fn spawn_batch_spawns_the_rest_when_dropped() {
    let mut world = World::new();
    let mut batch = world.spawn_batch((0..10u32).map(|i| (Health(i),)));
    let first = batch.next().unwrap();
    drop(batch);
    assert_eq!(world.len(), 10);
    assert_eq!(world.get::<Health>(first), Some(&Health(0)));
}

#[test]
#[should_panic(expected = "holds the component type `world::Pos` twice")]
fn a_bundle_with_a_repeated_type_panics_before_changing_anything() {
    let mut world = World::new();
    world.spawn((Pos(0.0), Pos(1.0)));
}

#[test]
fn per_entity_data_lives_and_dies_with_the_entity() {
    let mut world = World::builder().min_free(0).build();
    let e = world.spawn(());
    world.set_data(e, "stats.health", 10.0).unwrap();
    world.set_data(e, "name", "Gorm").unwrap();
    assert_eq!(world.data(e).unwrap().get_str("name"), Some("Gorm"));
    world.despawn(e);
    assert!(world.data(e).is_none());
    let f = world.spawn(());
    assert_eq!(f.index(), e.index());
    assert!(
        world.data(f).is_none(),
        "a new entity in the slot has no data"
    );
    assert!(world.set_data(e, "x", 1.0).is_err());
    world.assert_invariants();
}

#[test]
fn get_or_insert_with_makes_a_value_only_when_there_is_none() {
    let mut world = World::new();
    world.track::<Health>();
    let e = world.spawn((Pos(1.0),));
    let mut made = 0;
    for _ in 0..3 {
        let mut view = world.entity_mut(e).unwrap();
        view.get_or_insert_with(|| {
            made += 1;
            Health(10)
        })
        .0 += 1;
    }
    assert_eq!(made, 1);
    assert_eq!(world.get::<Health>(e), Some(&Health(13)));
    // An existing value is handed out, not replaced.
    let p = world
        .entity_mut(e)
        .unwrap()
        .get_or_insert_with(|| Pos(9.0))
        .0;
    assert_eq!(p, 1.0);
    // Inserted through the insert path: hooks run, tracking sees it added.
    let mut added = QueryState::<Entity, dod_world::Added<Health>>::new();
    let f = world.spawn(());
    world
        .entity_mut(f)
        .unwrap()
        .get_or_insert_with(|| Health(0));
    assert_eq!(added.query(&mut world).iter().collect::<Vec<_>>(), [e, f]);
    // A hook whose commands take the value away: a panic that says so, the world sound.
    world.on_insert::<Vel>(|e, _, commands| commands.remove::<Vel>(e));
    let err = catch_unwind(AssertUnwindSafe(|| {
        world.entity_mut(f).unwrap().get_or_insert_with(|| Vel(1.0));
    }))
    .expect_err("the value is gone");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("took the inserted value away again"), "{msg}");
    assert!(!world.has::<Vel>(f) && world.is_alive(f));
    world.assert_invariants();
}

#[cfg(feature = "rayon")]
#[test]
fn par_for_each_visits_every_match_once() {
    let mut world = World::new();
    world.spawn_batch((0..20_000u32).map(|i| (Health(i), Pos(0.0))));
    world.spawn_batch((0..5_000u32).map(|i| (Health(i),)));
    world
        .query::<(&mut Pos, &Health)>()
        .par_for_each(|(p, h)| p.0 += h.0 as f32);
    let sum: f64 = world.query::<&Pos>().iter().map(|p| f64::from(p.0)).sum();
    assert_eq!(sum, (0..20_000u64).sum::<u64>() as f64);
    let w = world.share();
    rayon::join(
        || w.query::<&mut Pos>().par_for_each(|p| p.0 = 0.0),
        || w.query::<&mut Health>().par_for_each(|h| h.0 = 1),
    );
    assert_eq!(
        world.query::<&Health>().iter().map(|h| h.0).sum::<u32>(),
        25_000
    );
}

/// `n` entities with `Health`, every third with `Pos`, every fifth with the tag `Enemy`, and
/// every seventh despawned (holes in the slots, so that a walk over every entity skips
/// some): the world of the parallel tests, with every entity spawned.
#[cfg(feature = "rayon")]
fn parallel_world(n: u32) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let all: Vec<Entity> = world.spawn_batch((0..n).map(|i| (Health(i),))).collect();
    for (k, &e) in all.iter().enumerate() {
        if k % 3 == 0 {
            world.insert(e, (Pos(k as f32),)).unwrap();
        }
        if k % 5 == 0 {
            world.insert(e, (Enemy,)).unwrap();
        }
    }
    for &e in all.iter().step_by(7) {
        world.despawn(e);
    }
    (world, all)
}

#[cfg(feature = "rayon")]
#[test]
fn par_fold_merges_in_the_order_for_each_visits() {
    let (mut world, all) = parallel_world(30_000);
    let push = |mut v: Vec<Entity>, e: Entity| {
        v.push(e);
        v
    };
    let concat = |mut a: Vec<Entity>, mut b: Vec<Entity>| {
        a.append(&mut b);
        a
    };
    fn sequential<Q: dod_world::QueryData, F: dod_world::QueryFilter>(
        world: &mut World,
    ) -> Vec<Entity> {
        let mut out = Vec::new();
        world
            .query::<(Entity, Q)>()
            .filter::<F>()
            .for_each(|(e, _)| out.push(e));
        out
    }
    // Driven by a sparse set, with a filter that refuses some of its entities.
    let par = world
        .query::<(Entity, &Pos)>()
        .filter::<dod_world::Without<Enemy>>()
        .par_fold(Vec::new, |v, (e, _)| push(v, e), concat);
    let seq = sequential::<&Pos, dod_world::Without<Enemy>>(&mut world);
    assert!(!seq.is_empty());
    assert_eq!(par, seq);
    // Driven by a tag's bits.
    let par = world
        .query::<(Entity, &Enemy)>()
        .par_fold(Vec::new, |v, (e, _)| push(v, e), concat);
    assert_eq!(par, sequential::<&Enemy, ()>(&mut world));
    // Nothing required: every live entity.
    let par = world.query::<Entity>().par_fold(Vec::new, push, concat);
    let seq: Vec<Entity> = world.query::<Entity>().iter().collect();
    assert_eq!(seq.len(), world.len());
    assert_eq!(par, seq);
    // A query with no match gives `identity()`, made once: a storage that exists and is
    // empty, and one that drives many entities of which none passes the filter.
    let e = world.spawn((Vel(1.0),));
    world.despawn(e);
    let made = AtomicUsize::new(0);
    let identity = || {
        made.fetch_add(1, Ordering::Relaxed);
        vec![all[1]]
    };
    let none = world
        .query::<(Entity, &Vel)>()
        .par_fold(identity, |v, (e, _)| push(v, e), concat);
    assert_eq!(none, [all[1]]);
    let none = world
        .query::<(Entity, &Health)>()
        .filter::<dod_world::Without<Health>>()
        .par_fold(identity, |v, (e, _)| push(v, e), concat);
    assert_eq!(none, [all[1]]);
    assert_eq!(made.into_inner(), 2);
}

#[cfg(feature = "rayon")]
#[test]
fn par_iter_hands_out_what_iter_does_each_once() {
    use rayon::prelude::*;
    let (mut world, all) = parallel_world(if cfg!(miri) { 200 } else { 30_000 });
    // The three drivers: a sparse set (with a filter), a tag's bits, every live entity.
    let par: Vec<Entity> = world
        .query::<(Entity, &Pos)>()
        .filter::<dod_world::Without<Enemy>>()
        .par_iter()
        .map(|(e, _)| e)
        .collect();
    let seq: Vec<Entity> = world
        .query::<(Entity, &Pos)>()
        .filter::<dod_world::Without<Enemy>>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert!(!seq.is_empty());
    assert_eq!(par, seq);
    let par: Vec<Entity> = world
        .query::<(Entity, &Enemy)>()
        .par_iter()
        .map(|(e, _)| e)
        .collect();
    let seq: Vec<Entity> = world
        .query::<(Entity, &Enemy)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    assert!(!seq.is_empty());
    assert_eq!(par, seq);
    let par: Vec<Entity> = world.query::<Entity>().par_iter().collect();
    assert_eq!(par.len(), world.len());
    assert_eq!(par, world.query::<Entity>().iter().collect::<Vec<_>>());
    // Items that outlive the walk: the mutable references, collected, then written.
    let mut q = world.query::<(Entity, &mut Health, Option<&Pos>)>();
    let mut items: Vec<(Entity, &mut Health, Option<&Pos>)> = q.par_iter().collect();
    for (_, h, p) in &mut items {
        h.0 = if p.is_some() { 1 } else { 2 };
    }
    drop(q);
    for &e in &all {
        let want = world
            .is_alive(e)
            .then(|| 1 + u32::from(world.get::<Pos>(e).is_none()));
        assert_eq!(world.get::<Health>(e).map(|h| h.0), want);
    }
    // Rayon's adaptors, and a query with no match.
    let count = world
        .query::<&Pos>()
        .par_iter()
        .filter(|p| p.0 > 50.0)
        .count();
    assert_eq!(
        count,
        world.query::<&Pos>().iter().filter(|p| p.0 > 50.0).count()
    );
    let e = world.spawn((Vel(1.0),));
    world.despawn(e);
    assert_eq!(world.query::<&Vel>().par_iter().count(), 0);
    // The shared form, two queries of different components side by side.
    let w = world.share();
    let (a, b) = rayon::join(
        || {
            w.query::<&mut Pos>()
                .par_iter()
                .map(|p| {
                    p.0 = 0.0;
                    1
                })
                .sum::<usize>()
        },
        || w.query::<&Health>().par_iter().count(),
    );
    assert_eq!((a, b), (world.query::<&Pos>().iter().count(), world.len()));
    world.assert_invariants();
}

#[cfg(feature = "rayon")]
#[test]
fn par_iter_marks_what_it_hands_out_mutably() {
    use rayon::prelude::*;
    let mut world = World::new();
    world.track::<Health>();
    let all: Vec<Entity> = world
        .spawn_batch((0..5_000u32).map(|i| (Health(i),)))
        .collect();
    let mut changed = QueryState::<Entity, dod_world::Changed<Health>>::new();
    assert_eq!(changed.query(&mut world).iter().count(), all.len());
    world
        .query::<&mut Health>()
        .par_iter()
        .filter(|h| h.0 % 2 == 0)
        .for_each(|h| h.0 += 1);
    // Every item handed out mutably counts as written, as with `for_each`.
    assert_eq!(changed.query(&mut world).iter().count(), all.len());
    world.query::<&Health>().par_iter().for_each(|_| {});
    assert_eq!(changed.query(&mut world).iter().count(), 0);
}

#[cfg(feature = "rayon")]
#[test]
fn par_fold_records_commands_from_every_thread() {
    let mut world = World::new();
    let all: Vec<Entity> = world
        .spawn_batch((0..20_000u32).map(|i| (Health(i),)))
        .collect();
    let mut commands = world.query::<(Entity, &Health)>().par_fold(
        Commands::new,
        |mut c, (e, h)| {
            if h.0 % 4 == 0 {
                c.despawn(e);
            } else {
                c.insert(e, (Pos(h.0 as f32),));
            }
            c
        },
        |mut a, mut b| {
            a.append(&mut b);
            a
        },
    );
    world.apply(&mut commands);
    assert_eq!(world.len(), 15_000);
    for (i, &e) in all.iter().enumerate() {
        assert_eq!(world.is_alive(e), i % 4 != 0);
        if i % 4 != 0 {
            assert_eq!(world.get::<Pos>(e), Some(&Pos(i as f32)));
        }
    }
    world.assert_invariants();
}

#[cfg(feature = "rayon")]
#[test]
fn par_for_each_init_hands_each_piece_its_own_value() {
    let mut world = World::new();
    world.spawn_batch((0..50_000u32).map(|i| (Health(i), Pos(0.0))));
    let made = AtomicUsize::new(0);
    world.query::<(&Health, &mut Pos)>().par_for_each_init(
        || {
            made.fetch_add(1, Ordering::Relaxed);
            Vec::<u32>::new()
        },
        |seen, (h, p)| {
            // Each value serves one thread at a time, in the driver's order within a piece.
            if let Some(&last) = seen.last() {
                assert!(last < h.0, "a piece's value was shared or out of order");
            }
            seen.push(h.0);
            p.0 = seen.len() as f32;
        },
    );
    let made = made.into_inner();
    assert!((1..50_000).contains(&made), "init ran {made} times");
    // Each value counted the items of its piece: the counts restart once per value used.
    let restarts = world.query::<&Pos>().iter().filter(|p| p.0 == 1.0).count();
    assert!(
        restarts >= 1 && restarts <= made,
        "{restarts} restarts, {made} values"
    );
}

#[cfg(feature = "rayon")]
#[test]
fn a_panicking_par_fold_releases_the_query() {
    let mut world = World::new();
    world.spawn_batch((0..10_000u32).map(|i| (Health(i), Pos(0.0))));
    let shared = world.share();
    let r = catch_unwind(AssertUnwindSafe(|| {
        shared.query::<(&Health, &mut Pos)>().par_fold(
            || 0u32,
            |n, (h, p)| {
                assert!(h.0 != 7_777, "boom");
                p.0 = 1.0;
                n + 1
            },
            |a, b| a + b,
        )
    }));
    assert!(r.is_err());
    // The borrows are gone: the same storages can be borrowed mutably again.
    let n = shared
        .query::<&mut Pos>()
        .par_fold(|| 0usize, |n, _| n + 1, |a, b| a + b);
    assert_eq!(n, 10_000);
    world.assert_invariants();
}

#[cfg(feature = "serde")]
mod saving {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Name(String);
    #[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
    struct Target(Option<Entity>);

    fn saving_world() -> World {
        let mut w = World::builder().min_free(2).build();
        w.register_saved::<Name>("name");
        w.register_saved::<Target>("target");
        w
    }

    /// A new saving world loaded from `world`'s save, its invariants checked.
    fn saved_and_loaded(world: &World) -> World {
        loaded_from(&serde_json::to_string(world).unwrap())
    }

    /// A new saving world loaded from `json`, its invariants checked.
    fn loaded_from(json: &str) -> World {
        let mut loaded = saving_world();
        loaded
            .load(&mut serde_json::Deserializer::from_str(json))
            .unwrap();
        loaded.assert_invariants();
        loaded
    }

    #[test]
    fn a_load_skipping_unknown_keeps_what_this_build_knows() {
        // A newer build's save: a type this build does not know, listed between two it does.
        #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
        struct Shield {
            strength: u32,
            layers: Vec<String>,
        }
        let mut newer = World::builder().min_free(2).build();
        newer.register_saved::<Name>("name");
        newer.register_saved::<Shield>("shield");
        newer.register_saved::<Target>("target");
        let a = newer.spawn((
            Name("a".into()),
            Shield {
                strength: 3,
                layers: vec!["x".into()],
            },
        ));
        let b = newer.spawn((Shield {
            strength: 1,
            layers: vec![],
        },));
        let gone = newer.spawn((Name("gone".into()),));
        newer.despawn(gone);
        let c = newer.spawn((Target(Some(a)),));
        newer.set_data(b, "hp", 5.0).unwrap();
        let save = serde_json::to_string(&newer).unwrap();

        let mut world = saving_world();
        let keep = world.spawn((Name("keep".into()),));
        let err = world
            .load(&mut serde_json::Deserializer::from_str(&save))
            .unwrap_err();
        assert!(
            err.to_string().contains("unknown component `shield`"),
            "{err}"
        );
        assert_eq!(world.get::<Name>(keep), Some(&Name("keep".into())));

        let skipped = world
            .load_skipping_unknown(&mut serde_json::Deserializer::from_str(&save))
            .unwrap();
        assert_eq!(skipped, ["shield"]);
        world.assert_invariants();
        // Everything else as the newer world has it: entities, generations, the free queue,
        // the known components and the data.
        assert_eq!(world.len(), 3);
        assert!(world.is_alive(b) && !world.is_alive(gone) && !world.is_alive(keep));
        assert_eq!(world.get::<Name>(a), Some(&Name("a".into())));
        assert_eq!(world.get::<Target>(c), Some(&Target(Some(a))));
        assert_eq!(world.data(b).unwrap().get_f32("hp"), Some(5.0));
        assert_eq!(world.spawn(()), newer.spawn(()));
        // A save with nothing unknown skips nothing.
        let known = serde_json::to_string(&world).unwrap();
        assert!(saving_world()
            .load_skipping_unknown(&mut serde_json::Deserializer::from_str(&known))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_load_skipping_unknown_still_refuses_what_load_refuses() {
        let mut world = saving_world();
        let keep = world.spawn((Name("keep".into()),));
        let cases = [
            (
                r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[],"components":{"nope":[],"nope":[]},"data":null}"#,
                "`nope` listed twice",
            ),
            (
                r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[],"components":{"nope":[[5,{"a":1}]],"name":[[3,"dead"]]},"data":null}"#,
                "dead entity",
            ),
            (
                r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[],"components":{"nope":[1,2,"#,
                "unknown component `nope` could not be skipped: EOF",
            ),
        ];
        for (save, why) in cases {
            let err = world
                .load_skipping_unknown(&mut serde_json::Deserializer::from_str(save))
                .unwrap_err();
            assert!(err.to_string().contains(why), "{save}: {err}");
            assert_eq!(world.len(), 1);
            assert_eq!(world.get::<Name>(keep), Some(&Name("keep".into())));
        }
        // A format that is not self-describing cannot skip a value of unknown type: an error,
        // not a panic, and the world as it was.
        let mut newer = World::new();
        newer.register_saved::<u64>("big");
        newer.spawn((7u64,));
        let bytes = postcard::to_allocvec(&newer).unwrap();
        assert!(world
            .load_skipping_unknown(&mut postcard::Deserializer::from_bytes(&bytes))
            .is_err());
        assert_eq!(world.get::<Name>(keep), Some(&Name("keep".into())));
        world.assert_invariants();
    }

    #[test]
    fn a_world_given_as_an_array_loads_with_or_without_its_last_fields() {
        let mut world = saving_world();
        let a = world.spawn((Name("a".into()),));
        let keyed: serde_json::Value = serde_json::to_value(&world).unwrap();
        let field = |k: &str| keyed[k].clone();
        let head = ["world_id", "min_free", "slots", "free", "components"].map(field);
        // All seven, then without `data_names`, then without `data` either.
        for n in [7, 6, 5] {
            let mut array: Vec<serde_json::Value> = head.to_vec();
            array.extend(["data", "data_names"].map(field).into_iter().take(n - 5));
            let loaded = loaded_from(&serde_json::Value::Array(array).to_string());
            assert_eq!(loaded.get::<Name>(a), Some(&Name("a".into())), "{n} fields");
        }
        // Fewer than the five required: an error naming the length.
        let mut short = saving_world();
        let r = short.load(&mut serde_json::Deserializer::from_str(
            &serde_json::Value::Array(head[..4].to_vec()).to_string(),
        ));
        assert!(r.unwrap_err().to_string().contains("invalid length 4"));
    }

    #[test]
    fn a_file_that_is_not_a_saved_world_is_refused_naming_the_field() {
        for (json, field) in [
            ("[1, 2, 3]", "`slots`"),
            ("[1, 2, [], 4]", "`free`"),
            (r#"{"world_id": 1, "min_free": 0, "slots": "x"}"#, "`slots`"),
            (r#"{"free": {"a": 1}}"#, "`free`"),
        ] {
            let mut world = saving_world();
            let err = world
                .load(&mut serde_json::Deserializer::from_str(json))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("expected the {field} of a saved world")),
                "{json}: {err}"
            );
            assert_eq!(world.len(), 0, "{json}: the world is unchanged");
        }
    }

    #[test]
    fn a_loaded_world_keeps_entities_generations_and_the_free_queue() {
        let mut world = saving_world();
        let es: Vec<Entity> = (0..10)
            .map(|i| world.spawn((Name(format!("e{i}")),)))
            .collect();
        world.insert(es[1], (Target(Some(es[2])),)).unwrap();
        for &e in &es[5..] {
            world.despawn(e);
        }
        world.set_data(es[0], "hp", 3.0).unwrap();
        world.set_data(es[4], "stats.armor", 2.0).unwrap();
        world.despawn(es[4]); // its data goes, the name of its key stays
        world.insert(es[3], (Pos(1.0),)).unwrap(); // not saved
        let mut loaded = saved_and_loaded(&world);
        assert_eq!(world.data_store().names().len(), 2);
        assert_eq!(loaded.data_store().names(), world.data_store().names());
        let json = loaded
            .data(es[0])
            .unwrap()
            .to_json(loaded.data_store().names());
        assert_eq!(json.unwrap(), r#"{"hp":3.0}"#);
        for &e in &es[..5] {
            assert_eq!(loaded.get::<Name>(e), world.get::<Name>(e));
        }
        for &e in &es[4..] {
            assert!(!loaded.is_alive(e), "stale stays stale");
        }
        assert_eq!(loaded.get::<Target>(es[1]), Some(&Target(Some(es[2]))));
        assert_eq!(loaded.data(es[0]).unwrap().get_f32("hp"), Some(3.0));
        assert_eq!(
            loaded.get::<Pos>(es[3]),
            None,
            "types not saved are not kept"
        );
        // The next spawns are the ones the original would have made.
        for _ in 0..6 {
            assert_eq!(loaded.spawn(()), world.spawn(()));
        }
    }

    /// The `data` bytes of a JSON save.
    fn saved_data(world: &World) -> Vec<u8> {
        let save: serde_json::Value = serde_json::to_value(world).unwrap();
        serde_json::from_value(save["data"].clone()).unwrap()
    }

    #[test]
    fn saves_hold_the_data_not_the_free_space() {
        let mut world = saving_world();
        let es: Vec<Entity> = (0..200).map(|_| world.spawn(())).collect();
        for (i, &e) in es.iter().enumerate() {
            world
                .set_data(e, "name", format!("entity number {i}").as_str())
                .unwrap();
        }
        for &e in &es[1..] {
            world.despawn(e);
        }
        // One entity's small entry is left in a buffer grown for 200.
        let kept = world.data_store().capacity();
        let bytes = saved_data(&world);
        // A header, one slot of 12 bytes, the smallest buffer.
        assert_eq!(bytes.len(), 24 + 12 + 128, "from a buffer of {kept}");
        assert!(kept >= 16 * 128);
        let mut loaded = saved_and_loaded(&world);
        assert_eq!(
            loaded.data(es[0]).unwrap().get_str("name"),
            Some("entity number 0")
        );
        // The loaded world saves the same bytes; its buffer is the size of its data, and
        // grows again as data is set.
        assert_eq!(saved_data(&loaded), bytes);
        assert_eq!(loaded.data_store().capacity(), 128);
        for k in 0..50 {
            let key = format!("key{k}");
            loaded.set_data(es[0], key.as_str(), k as f32).unwrap();
        }
        assert!(loaded.data_store().capacity() > 128);
        assert_eq!(loaded.data(es[0]).unwrap().get_f32("key49"), Some(49.0));
        assert_eq!(
            loaded.data(es[0]).unwrap().get_str("name"),
            Some("entity number 0")
        );
    }

    #[test]
    fn entities_reserved_before_a_save_are_alive_after_the_load() {
        let mut world = saving_world();
        let es: Vec<Entity> = (0..6).map(|_| world.spawn(())).collect();
        for &e in &es[..4] {
            world.despawn(e);
        }
        // Four queued, two kept back by `min_free`: the reservations take two queued slots,
        // then new ones past the end.
        let held: Vec<Entity> = (0..4).map(|_| world.reserve_entity()).collect();
        let mut loaded = saved_and_loaded(&world);
        for &e in &held {
            assert!(loaded.is_alive(e), "a held reservation names its entity");
        }
        world.flush();
        assert_eq!(loaded.len(), world.len());
        for _ in 0..6 {
            let next = loaded.spawn(());
            assert!(!held.contains(&next), "no spawn is handed a reserved index");
            assert_eq!(next, world.spawn(()));
        }
    }

    /// The bytes of a data store holding only the slots of removed entries, at `indices`
    /// (increasing) with `tag` (bit 31 set: vacant), and no buffer.
    fn vacant_data_slots(indices: &[u32], tag: [u8; 4]) -> String {
        let mut bytes = b"DODs".to_vec();
        bytes.extend([2, 0, 1, 0, 5, 0xFF, 0, 0]); // version 2, hash id 1, blocks of 32, no buffer
        bytes.extend((indices.len() as u32).to_le_bytes());
        bytes.extend([0; 8]); // no buffer, no entity
        for i in indices {
            bytes.extend(i.to_le_bytes());
            bytes.extend(tag);
            bytes.extend([0; 4]);
        }
        serde_json::to_string(&bytes).unwrap()
    }

    /// A saving world loaded from a save of world 1 with these entity `slots` (JSON) and `data`
    /// (JSON bytes), and no components.
    fn loaded_with_data(slots: &str, data: &str) -> World {
        loaded_from(&format!(
            r#"{{"world_id":1,"min_free":0,"slots":{slots},"free":[],"components":{{}},"data":{data}}}"#
        ))
    }

    #[test]
    fn removed_data_slots_in_a_save_refuse_no_entity_later() {
        // Slots of removed data carry the tag their key had: here one newer than entity 0's
        // generation (2 against 1), and one of another world. Neither may refuse the data of
        // the entity that lives there, or of the one spawned there next.
        for tag in [[2, 0, 1, 0x80], [1, 0, 2, 0x80]] {
            let data = vacant_data_slots(&[0], tag);
            for slots in ["[65537]", "[]"] {
                let mut world = loaded_with_data(slots, &data);
                let live = world.entities().iter().next();
                let e = live.unwrap_or_else(|| world.spawn(()));
                assert_eq!(e.index(), 0);
                world.set_data(e, "x", 1.0).unwrap();
                assert_eq!(world.data(e).unwrap().get_f32("x"), Some(1.0));
                world.insert_data(e, &dod::DataComponent::new()).unwrap();
                assert_eq!(world.data(e).unwrap().get_f32("x"), None);
            }
        }
    }

    #[test]
    fn data_slots_past_the_saved_entities_are_refused_before_they_cost_memory() {
        // Three entity slots: data slots up to index 2 are the save's own.
        let slots = "[65537,65537,65537]";
        let world = loaded_with_data(slots, &vacant_data_slots(&[1, 2], [1, 0, 1, 0x80]));
        assert_eq!(world.len(), 3);
        assert!(world.data_store().is_empty());
        // Slots of removed entries past every entity, far out a page apart (each would cost
        // the store a page while it loads), or just past the last slot: errors naming them,
        // and the world stays as it was.
        let far: Vec<u32> = (0..64).map(|k| 4_000_000_000 + k * 4096).collect();
        for (slots, indices, count) in [("[]", &far[..], 0), (slots, &[1, 3][..], 3)] {
            let mut world = saving_world();
            let before = serde_json::to_string(&world).unwrap();
            let save = format!(
                r#"{{"world_id":1,"min_free":0,"slots":{slots},"free":[],"components":{{}},"data":{}}}"#,
                vacant_data_slots(indices, [1, 0, 1, 0x80])
            );
            let err = world
                .load(&mut serde_json::Deserializer::from_str(&save))
                .unwrap_err()
                .to_string();
            let past = indices.iter().find(|&&i| i as usize >= count).unwrap();
            assert!(
                err.contains(&format!(
                    "data of entity {past}, past the save's {count} entity slots"
                )),
                "{err}"
            );
            assert_eq!(serde_json::to_string(&world).unwrap(), before);
        }
    }

    #[test]
    fn bad_saves_are_errors_and_leave_the_world_as_it_was() {
        let mut world = saving_world();
        let keep = world.spawn((Name("keep".into()),));
        let cases = [
            (
                r#"{"world_id":1,"min_free":0,"slots":[1],"free":[],"components":{"nope":[]},"data":null}"#,
                "unknown component",
            ),
            (
                r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[],"components":{"name":[[0,"a"],[0,"b"]]},"data":null}"#,
                "twice",
            ),
            (
                r#"{"world_id":1,"min_free":0,"slots":[2147549185],"free":[0],"components":{"name":[[0,"a"]]},"data":null}"#,
                "dead entity",
            ),
            (
                r#"{"world_id":1,"min_free":0,"slots":[2147549185],"free":[],"components":{},"data":null}"#,
                "missing from the free queue",
            ),
            (
                r#"{"world_id":2,"min_free":0,"slots":[65537],"free":[],"components":{},"data":null}"#,
                "another world id",
            ),
            (
                r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[0],"components":{},"data":null}"#,
                "live or retired",
            ),
            (
                r##"{"world_id":1,"min_free":0,"slots":[],"free":[],"components":{},"data":null,"data_names":[["#0000abcd"]]}"##,
                "reserved",
            ),
            // A far index is refused before anything grows to reach it, whatever the order of
            // the fields.
            (
                r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[],"components":{"name":[[4000000000,"far"]]},"data":null}"#,
                "dead entity",
            ),
            (
                r#"{"components":{"name":[[4000000000,"far"]]},"world_id":1,"min_free":0,"slots":[],"free":[],"data":null}"#,
                "dead entity",
            ),
        ];
        for (json, why) in cases {
            let err = world
                .load(&mut serde_json::Deserializer::from_str(json))
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{why}: {err}");
            assert_eq!(world.get::<Name>(keep), Some(&Name("keep".into())));
            world.assert_invariants();
        }
    }
}

/// Run as a child of the test below: prints the id of the process's first world.
const PRINT_FIRST_WORLD_ID: &str = "DOD_WORLD_TEST_PRINT_FIRST_WORLD_ID";

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn the_first_world_of_each_process_takes_its_own_id() {
    if std::env::var_os(PRINT_FIRST_WORLD_ID).is_some() {
        println!("first world id {}", World::new().entities().world_id());
        return;
    }
    let first_id = || -> u16 {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "the_first_world_of_each_process_takes_its_own_id",
                "--nocapture",
            ])
            .env(PRINT_FIRST_WORLD_ID, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().find_map(|l| l.strip_prefix("first world id "));
        line.unwrap_or_else(|| panic!("no id printed: {text}"))
            .trim()
            .parse()
            .unwrap()
    };
    // Were every process to start at the same id, a save of one process's first world would
    // load beside the next process's first world with the same id, and each would accept the
    // other's entities. Drawn per process, three agree about once in 32 767².
    let ids = [first_id(), first_id(), first_id()];
    assert!(ids.iter().all(|&id| (1..=0x7FFF).contains(&id)), "{ids:?}");
    assert!(!(ids[0] == ids[1] && ids[1] == ids[2]), "{ids:?}");
}

/// A batch trusts its iterator's lower size hint, as `Vec::extend` does; `shrink_to_fit`
/// gives back what a hint far above the bundles reserved, and keeps every entity and value.
#[test]
fn shrink_to_fit_returns_what_an_overstated_size_hint_reserved() {
    struct Overstated(u32);
    impl Iterator for Overstated {
        type Item = (Pos, Vel);
        fn next(&mut self) -> Option<(Pos, Vel)> {
            (self.0 < 3).then(|| {
                self.0 += 1;
                (Pos(self.0 as f32), Vel(1.0))
            })
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            (1_000_000, None)
        }
    }
    let mut world = World::new();
    world.track::<Vel>();
    let es: Vec<Entity> = world.spawn_batch(Overstated(0)).collect();
    assert!(world.memory_usage() > 8_000_000, "{}", world.memory_usage());
    world.shrink_to_fit();
    assert!(world.memory_usage() < 64 * 1024, "{}", world.memory_usage());
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<Pos>(e), Some(&Pos(i as f32 + 1.0)));
    }
    assert_eq!(world.query::<(&Pos, &Vel)>().count(), 3);
    world.assert_invariants();
    let e = world.spawn((Pos(9.0),));
    assert_eq!(world.get::<Pos>(e), Some(&Pos(9.0)));
}

#[test]
fn commands_that_spawned_from_one_world_panic_when_applied_to_another() {
    let mut a = World::new();
    let mut b = World::new();
    let mut c = Commands::new();
    let e = c.spawn(a.entities(), (5u32,));
    let r = catch_unwind(AssertUnwindSafe(|| b.apply(&mut c)));
    let msg = *r
        .expect_err("a panic, not a skipped command")
        .downcast::<String>()
        .unwrap();
    assert!(msg.contains("Commands::spawn reserved"), "{msg}");
    assert!(b.is_empty(), "nothing made in the other world");
    b.assert_invariants();
    // The reservation is `a`'s: its next change makes the entity alive, with nothing.
    a.flush();
    assert!(a.is_alive(e) && !a.has::<u32>(e));
    // Inserts and despawns of another world's entities are skipped, as for any gone entity.
    let f = a.spawn((1u8,));
    let mut c = Commands::new();
    c.insert(f, (2u8,));
    c.despawn(f);
    assert_eq!(b.apply(&mut c), 2);
    assert_eq!(a.get::<u8>(f), Some(&1));
}

/// Gives `e` a `[u8; N]` for every listed `N`, then checks each is found as itself (by `get`,
/// `has`, a query and `remove`), and that a second entity has none of them.
macro_rules! many_types {
    ($world:ident, $e:ident, $other:ident; $($n:literal)+) => {
        $( $world.insert($e, ([$n as u8; $n],)).unwrap(); )+
        $(
            assert_eq!($world.get::<[u8; $n]>($e), Some(&[$n as u8; $n]));
            assert!($world.has::<[u8; $n]>($e) && !$world.has::<[u8; $n]>($other));
            assert_eq!($world.query::<&[u8; $n]>().iter().collect::<Vec<_>>(), [&[$n as u8; $n]]);
        )+
        $(
            assert_eq!($world.remove::<[u8; $n]>($e), Some([$n as u8; $n]));
            assert_eq!($world.get::<[u8; $n]>($e), None);
        )+
    };
}

#[test]
fn each_of_many_component_types_is_found_as_itself() {
    // More types than the world's direct table of type ids has slots, so that some share a
    // slot and are found through the map behind it.
    let mut world = World::new();
    let e = world.spawn((Pos(1.0),));
    let other = world.spawn((Pos(2.0),));
    many_types!(world, e, other;
        1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24
        25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48);
    assert_eq!(world.get::<Pos>(e), Some(&Pos(1.0)));
    assert_eq!(world.register::<[u8; 48]>().index(), 48);
}

thread_local! {
    /// The file of the last panic on this thread whose message names a type held twice.
    static TWICE_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Where `f` panicked, if it panicked for a type held twice.
fn twice_panic_file(f: impl FnOnce()) -> Option<String> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.to_string().contains("twice") {
                let file = info.location().map(|l| l.file().to_string());
                TWICE_AT.with(|t| *t.borrow_mut() = file);
            } else {
                previous(info);
            }
        }));
    });
    TWICE_AT.with(|t| t.borrow_mut().take());
    assert!(catch_unwind(AssertUnwindSafe(f)).is_err(), "no panic");
    TWICE_AT.with(|t| t.borrow_mut().take())
}

#[test]
fn a_bundle_holding_a_type_twice_panics_at_the_callers_line() {
    for grouped in [false, true] {
        let mut world = World::new();
        if grouped {
            world.group::<(Pos, Vel)>().unwrap();
        }
        let e = world.spawn(());
        let file = twice_panic_file(|| {
            let _ = world.insert(e, (1u32, 2u32));
        });
        assert!(
            file.as_deref().is_some_and(|f| f.contains("tests")),
            "insert, grouped: {grouped}: {file:?}"
        );
        let file = twice_panic_file(|| {
            world.spawn((1u8, 2u8));
        });
        assert!(
            file.as_deref().is_some_and(|f| f.contains("tests")),
            "spawn, grouped: {grouped}: {file:?}"
        );
    }
}
