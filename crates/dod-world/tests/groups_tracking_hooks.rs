//! Owning groups, change tracking and hooks: the invariants after every change, and the
//! answers of grouped queries, change filters and hooks against what the test itself did.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use dod_world::{Added, Changed, Commands, Entity, GroupError, QueryState, SingleError, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mass(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Frozen;

/// A small fixed generator.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn grouped_world() -> World {
    World::builder()
        .min_free(0)
        .group::<(Pos, Vel)>()
        .group::<(Mass, Frozen)>()
        .build()
}

#[test]
fn a_type_belongs_to_one_group() {
    let mut world = grouped_world();
    let err = world.group::<(Vel, Mass)>().unwrap_err();
    assert!(matches!(err, GroupError::AlreadyGrouped { component } if component.ends_with("Vel")));
    // A type named twice is an error that names it, not a panic caught inside.
    let twice = world.group::<(u8, u8)>().unwrap_err();
    assert!(
        matches!(&twice, GroupError::BadTypes { why } if why.contains("`u8` twice")),
        "{twice}"
    );
    let err = World::builder()
        .group::<(Vel, Vel)>()
        .try_build()
        .unwrap_err();
    assert!(err.to_string().contains("Vel` twice"), "{err}");
    assert!(matches!(
        world.group::<(u16,)>(),
        Err(GroupError::BadTypes { .. })
    ));
}

#[test]
fn group_prefixes_hold_exactly_their_members_through_random_changes() {
    let mut world = grouped_world();
    let mut rng = Rng(3);
    let mut alive: Vec<Entity> = Vec::new();
    let steps = if cfg!(miri) { 150 } else { 4000 };
    for _ in 0..steps {
        match rng.below(8) {
            0 | 1 => {
                let e = match rng.below(4) {
                    0 => world.spawn((Pos(0.0), Vel(1.0))),
                    1 => world.spawn((Pos(0.0),)),
                    2 => world.spawn((Vel(0.0), Mass(1.0), Frozen)),
                    _ => world.spawn((Mass(2.0),)),
                };
                alive.push(e);
            }
            2 if !alive.is_empty() => {
                let e = alive.swap_remove(rng.below(alive.len() as u64) as usize);
                assert!(world.despawn(e));
            }
            3 if !alive.is_empty() => {
                let e = alive[rng.below(alive.len() as u64) as usize];
                match rng.below(4) {
                    0 => world.insert(e, (Vel(2.0),)).unwrap(),
                    1 => world.insert(e, (Pos(3.0),)).unwrap(),
                    2 => world.insert(e, (Frozen,)).unwrap(),
                    _ => world.insert(e, (Mass(1.0), Pos(1.0))).unwrap(),
                }
            }
            4 if !alive.is_empty() => {
                let e = alive[rng.below(alive.len() as u64) as usize];
                match rng.below(3) {
                    0 => drop(world.remove::<Pos>(e)),
                    1 => drop(world.remove::<Vel>(e)),
                    _ => drop(world.remove::<Frozen>(e)),
                }
            }
            6 if !alive.is_empty() => {
                // The same changes through a view of one type.
                let e = alive[rng.below(alive.len() as u64) as usize];
                let mut vel = world.view_mut::<Vel>();
                if rng.below(2) == 0 {
                    vel.insert(e, Vel(4.0)).unwrap();
                } else {
                    vel.remove(e);
                }
            }
            5 => {
                let mut commands = Commands::new();
                let w = world.share();
                w.query::<(Entity, &Pos)>().for_each(|(e, _)| {
                    if e.index() % 5 == 0 {
                        commands.remove::<Pos>(e);
                    }
                });
                world.apply(&mut commands);
            }
            _ => {}
        }
        world.assert_invariants();
        let members: BTreeSet<Entity> = alive
            .iter()
            .copied()
            .filter(|&e| world.has::<Pos>(e) && world.has::<Vel>(e))
            .collect();
        assert_eq!(world.group_len::<Pos>(), Some(members.len()));
        let walked: BTreeSet<Entity> = world
            .query::<(Entity, &Pos, &Vel)>()
            .iter()
            .map(|(e, ..)| e)
            .collect();
        assert_eq!(
            walked, members,
            "a grouped query visits exactly the members"
        );
        let frozen_heavy: BTreeSet<Entity> = alive
            .iter()
            .copied()
            .filter(|&e| world.has::<Mass>(e) && world.has::<Frozen>(e))
            .collect();
        let walked: BTreeSet<Entity> = world
            .query::<(Entity, &mut Mass)>()
            .with::<Frozen>()
            .iter()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(walked, frozen_heavy);
    }
}

#[test]
fn group_slices_are_the_members_position_for_position() {
    let mut world = grouped_world();
    for i in 0..50 {
        let e = world.spawn((Pos(i as f32),));
        if i % 3 != 0 {
            world.insert(e, (Vel(i as f32 * 10.0),)).unwrap();
        }
    }
    let members: Vec<(Entity, f32, f32)> = world
        .query::<(Entity, &Pos, &Vel)>()
        .iter()
        .map(|(e, p, v)| (e, p.0, v.0))
        .collect();
    let mut q = world.query::<(&mut Pos, &Vel)>();
    let (pos, vel) = q.slices().expect("(Pos, Vel) is a group");
    assert_eq!(pos.len(), members.len());
    for ((p, v), m) in pos.iter_mut().zip(vel.iter()).zip(&members) {
        assert_eq!((p.0, v.0), (m.1, m.2), "same order as the grouped query");
        p.0 = -1.0;
    }
    drop(q);
    for (e, ..) in members {
        assert_eq!(world.get::<Pos>(e), Some(&Pos(-1.0)));
    }
    assert!(
        world.query::<&Pos>().slices().is_none(),
        "not a whole group"
    );
    assert!(world.query::<(&Pos, &Mass)>().slices().is_none());
    world.assert_invariants();
}

#[test]
fn sorting_a_group_moves_every_owned_storage_together() {
    let mut world = grouped_world();
    let mut rng = Rng(9);
    let mut want: HashMap<Entity, (f32, f32)> = HashMap::new();
    for _ in 0..200 {
        let p = rng.below(1000) as f32;
        let e = world.spawn((Pos(p), Vel(p * 2.0)));
        want.insert(e, (p, p * 2.0));
    }
    world.spawn((Pos(-5.0),)); // outside the group: stays where it is
    world.sort_group_by::<Pos>(|a, b| a.0.total_cmp(&b.0));
    world.assert_invariants();
    let walked: Vec<(Entity, f32, f32)> = world
        .query::<(Entity, &Pos, &Vel)>()
        .iter()
        .map(|(e, p, v)| (e, p.0, v.0))
        .collect();
    assert!(walked.windows(2).all(|w| w[0].1 <= w[1].1), "sorted by Pos");
    for (e, p, v) in walked {
        assert_eq!(want[&e], (p, v), "each entity kept its own values");
    }
}

#[test]
fn changed_and_added_see_what_happened_since_the_last_run() {
    let mut world = World::new();
    world.track::<Pos>();
    let es: Vec<Entity> = (0..20).map(|i| world.spawn((Pos(i as f32),))).collect();
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    let mut added = QueryState::<Entity, Added<Pos>>::new();
    assert_eq!(changed.query(&mut world).count(), 20);
    assert_eq!(added.query(&mut world).count(), 20);
    assert_eq!(changed.query(&mut world).count(), 0);

    // Writes through get_mut, a mutable query, and a replacing insert.
    world.get_mut::<Pos>(es[1]).unwrap().0 += 1.0;
    world
        .query::<(Entity, &mut Pos)>()
        .for_each(|(e, _)| assert!(e.index() < 20));
    let touched_by_query: BTreeSet<Entity> = es.iter().copied().collect();
    let got: BTreeSet<Entity> = changed.query(&mut world).iter().collect();
    assert_eq!(got, touched_by_query, "a &mut item marks its value");
    world.insert(es[2], (Pos(9.0),)).unwrap();
    let fresh = world.spawn((Pos(0.0),));
    let got: Vec<Entity> = changed.query(&mut world).iter().collect();
    assert_eq!(got.len(), 2);
    assert!(got.contains(&es[2]) && got.contains(&fresh));
    let got: Vec<Entity> = added.query(&mut world).iter().collect();
    assert_eq!(got, [fresh], "a replaced value is changed, not added");

    // A query's own writes are not seen by its next run; another query's are.
    let mut mover = QueryState::<&mut Pos, Changed<Pos>>::new();
    mover.query(&mut world).for_each(|p| p.0 += 1.0);
    assert_eq!(mover.query(&mut world).count(), 0);
    assert_eq!(changed.query(&mut world).count(), 21);
}

#[test]
fn change_detection_survives_the_counter_wrapping() {
    let mut world = World::new();
    world.track::<Pos>();
    let a = world.spawn((Pos(0.0),));
    let b = world.spawn((Pos(0.0),));
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    changed.query(&mut world).count();
    // Jump to just before the wrap: the state is idle for longer than `MAX_AGE`, so its next
    // run sees every value, as a first run does; then old stamps stay old.
    world.set_change_tick(u32::MAX - 3);
    assert_eq!(
        changed.query(&mut world).count(),
        2,
        "an idle state sees all"
    );
    assert_eq!(changed.query(&mut world).count(), 0, "old stamps stay old");
    for round in 0..8u32 {
        let e = if round % 2 == 0 { a } else { b };
        world.get_mut::<Pos>(e).unwrap().0 += 1.0;
        let got: Vec<Entity> = changed.query(&mut world).iter().collect();
        assert_eq!(
            got,
            [e],
            "round {round}, tick {}",
            world.change_tick().get()
        );
        world.maintain();
    }
    assert!(world.change_tick().get() < 100, "the counter wrapped");
}

#[test]
fn a_state_that_has_not_run_for_ages_sees_every_change_once() {
    let mut world = World::new();
    world.track::<Pos>();
    let a = world.spawn((Pos(0.0),));
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    changed.query(&mut world).count();
    world.set_change_tick(3 << 30); // far beyond MAX_AGE since the state last ran
    world.get_mut::<Pos>(a).unwrap().0 = 1.0;
    assert_eq!(changed.query(&mut world).iter().collect::<Vec<_>>(), [a]);
    assert_eq!(changed.query(&mut world).count(), 0);
}

#[test]
fn a_change_made_just_after_a_run_is_seen_however_long_the_state_idles() {
    // Idle for just past `MAX_AGE`, and for just past the whole 32-bit circle (where the
    // counter's low bits say the state ran a few ticks ago), in frames that each clamp.
    let step = dod_world::Tick::MAX_AGE / 4 - 1;
    for frames in [5u32, 17] {
        let mut world = World::new();
        world.track::<Pos>();
        let a = world.spawn((Pos(0.0),));
        let b = world.spawn((Pos(0.0),));
        let mut rare = QueryState::<Entity, Changed<Pos>>::new();
        rare.query(&mut world).count();
        world.get_mut::<Pos>(a).unwrap().0 = 1.0;
        for _ in 0..frames {
            let now = world.change_tick().get();
            world.set_change_tick(now.wrapping_add(step));
            world.maintain();
        }
        let mut got: Vec<Entity> = rare.query(&mut world).iter().collect();
        got.sort();
        // `a` changed; `b` did not, but its stamp can no longer be told from the run's.
        assert_eq!(got, [a, b], "after {frames} frames");
        world.get_mut::<Pos>(b).unwrap().0 = 1.0;
        assert_eq!(rare.query(&mut world).iter().collect::<Vec<_>>(), [b]);
    }
}

#[test]
fn removed_lists_every_loss_until_maintain() {
    let mut world = World::new();
    world.track::<Frozen>();
    let a = world.spawn((Frozen,));
    let b = world.spawn((Frozen,));
    let c = world.spawn((Frozen,));
    world.remove::<Frozen>(a);
    world.despawn(b);
    let mut commands = Commands::new();
    commands.despawn(c);
    world.apply(&mut commands);
    assert_eq!(world.removed::<Frozen>(), [a, b, c]);
    world.maintain();
    assert!(world.removed::<Frozen>().is_empty());
    let d = world.spawn((Frozen,));
    world.clear();
    assert_eq!(world.removed::<Frozen>(), [d]);
    let untracked = quietly(|| world.removed::<Pos>().len());
    let msg = *untracked
        .expect_err("untracked: a panic, not an empty list")
        .downcast::<String>()
        .unwrap();
    assert!(msg.contains("world.track::<"), "{msg}");
}

#[test]
#[should_panic(expected = "Changed<groups_tracking_hooks::Pos> needs the type tracked")]
fn a_change_filter_on_an_untracked_type_panics_naming_it() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    let mut q = QueryState::<Entity, Changed<Pos>>::new();
    q.query(&mut world).count();
}

#[test]
#[should_panic(expected = "Added<groups_tracking_hooks::Mass> needs the type tracked")]
fn a_change_filter_on_a_type_the_world_has_never_seen_panics_naming_it() {
    let mut world = World::new();
    world.spawn((Pos(0.0),));
    let mut q = QueryState::<Entity, Added<Mass>>::new();
    q.query(&mut world).count();
}

#[test]
fn hooks_see_every_arrival_and_departure_and_record_commands() {
    type Log = Arc<Mutex<Vec<(char, Entity, u32)>>>;
    let log: Log = Arc::default();
    let mut world = World::new();
    let (l1, l2) = (log.clone(), log.clone());
    world.on_insert::<u32>(move |e, v, commands| {
        l1.lock().unwrap().push(('+', e, *v));
        if *v == 99 {
            commands.insert(e, (Frozen,));
        }
    });
    world.on_remove::<u32>(move |e, v, _| l2.lock().unwrap().push(('-', e, *v)));
    let a = world.spawn((1u32,));
    world.insert(a, (2u32,)).unwrap(); // replacement: out, then in
    let b = world.spawn((99u32,));
    assert!(
        world.has::<Frozen>(b),
        "a hook's command applied right after"
    );
    world.remove::<u32>(a);
    world.despawn(b);
    let c = world.spawn((5u32,));
    world.clear();
    let batch: Vec<Entity> = world.spawn_batch((10..12u32).map(|v| (v,))).collect();
    assert_eq!(
        *log.lock().unwrap(),
        [
            ('+', a, 1),
            ('-', a, 1),
            ('+', a, 2),
            ('+', b, 99),
            ('-', a, 2),
            ('-', b, 99),
            ('+', c, 5),
            ('-', c, 5),
            ('+', batch[0], 10),
            ('+', batch[1], 11),
        ]
    );
    // A batch applies each entity's hook commands right after it, as a spawn does: a read
    // through `&World` sees them once the batch is collected, before any other change.
    let batch: Vec<Entity> = world.spawn_batch([(99u32,), (7,), (99,)]).collect();
    assert_eq!(
        batch
            .iter()
            .map(|&e| world.has::<Frozen>(e))
            .collect::<Vec<_>>(),
        [true, false, true]
    );
    assert_eq!(world.count::<Frozen>(), 2);
    world.assert_invariants();
}

#[test]
fn per_type_masks_become_tags_kept_by_hooks() {
    // Per-type masks beside the objects: here a hook tags every heavy object, and despawning
    // clears the tag with the entity; no bit is kept by hand.
    let mut world = World::new();
    world.on_insert::<Mass>(|e, m, commands| {
        if m.0 > 10.0 {
            commands.insert(e, (Frozen,));
        }
    });
    let heavy: Vec<Entity> = (0..10)
        .map(|i| world.spawn((Mass(20.0 + i as f32),)))
        .collect();
    let light: Vec<Entity> = (0..10).map(|_| world.spawn((Mass(1.0),))).collect();
    for &e in &heavy[..5] {
        world.despawn(e);
    }
    let frozen: BTreeSet<Entity> = world.query::<Entity>().with::<Frozen>().iter().collect();
    assert_eq!(frozen, heavy[5..].iter().copied().collect());
    assert!(light.iter().all(|&e| !world.has::<Frozen>(e)));
}

/// A saved component type of the load tests.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Copy, PartialEq)]
struct P(f32);
/// The other saved type, owned with `P` by a group.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Copy, PartialEq)]
struct V(f32);

/// A world that owns the group `(P, V)` and saves both types.
#[cfg(feature = "serde")]
fn saving_world() -> World {
    let mut w = World::builder().group::<(P, V)>().build();
    w.register_saved::<P>("p");
    w.register_saved::<V>("v");
    w
}

#[cfg(feature = "serde")]
#[test]
fn a_load_keeps_hooks_tracking_and_groups() {
    let make = || {
        let mut w = saving_world();
        w.track::<P>();
        w
    };
    let mut world = make();
    for i in 0..10 {
        let e = world.spawn((P(i as f32),));
        if i % 2 == 0 {
            world.insert(e, (V(1.0),)).unwrap();
        }
    }
    let json = serde_json::to_string(&world).unwrap();
    let mut loaded = make();
    let inserted = Arc::new(Mutex::new(0));
    let n = inserted.clone();
    loaded.on_insert::<P>(move |_, _, _| *n.lock().unwrap() += 1);
    loaded
        .load(&mut serde_json::Deserializer::from_str(&json))
        .unwrap();
    loaded.assert_invariants();
    assert_eq!(*inserted.lock().unwrap(), 0, "a load runs no hook");
    assert_eq!(loaded.group_len::<P>(), Some(5));
    let mut changed = QueryState::<Entity, Changed<P>>::new();
    assert_eq!(
        changed.query(&mut loaded).count(),
        10,
        "loaded values are new"
    );
    loaded.spawn((P(0.0),));
    assert_eq!(*inserted.lock().unwrap(), 1, "the hook is still there");
    // A state that ran before a load keeps running on the same world after it, and sees
    // every loaded value changed.
    assert_eq!(changed.query(&mut loaded).count(), 1);
    loaded
        .load(&mut serde_json::Deserializer::from_str(&json))
        .unwrap();
    assert_eq!(changed.query(&mut loaded).count(), 10);
}

/// A saved tag.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Copy, PartialEq)]
struct Tag;

/// A tag's values keep their saved order through a load where the world keeps positions for
/// them: in a group the tag leads (whose storage sets the group's order), and tracked
/// outside any group; a tag kept as bits loads as bits. Each round trip saves again the
/// same text and visits the entities in the same order.
#[cfg(feature = "serde")]
#[test]
fn a_load_keeps_the_saved_order_of_a_tag() {
    let grouped = || {
        let mut w = World::builder().group::<(Tag, P)>().build();
        w.register_saved::<Tag>("tag");
        w.register_saved::<P>("p");
        w
    };
    let tracked = || {
        let mut w = World::new();
        w.track::<Tag>();
        w.register_saved::<Tag>("tag");
        w.register_saved::<P>("p");
        w
    };
    let plain = || {
        let mut w = World::new();
        w.register_saved::<Tag>("tag");
        w.register_saved::<P>("p");
        w
    };
    for (name, make) in [
        ("grouped", &grouped as &dyn Fn() -> World),
        ("tracked", &tracked),
        ("plain", &plain),
    ] {
        let mut world = make();
        let es: Vec<Entity> = (0..40).map(|i| world.spawn((P(i as f32),))).collect();
        // The tag given in an order unrelated to the indices.
        for k in 0..es.len() {
            if k % 3 != 1 {
                world.insert(es[(k * 17) % es.len()], (Tag,)).unwrap();
            }
        }
        if name == "grouped" {
            world.sort_group_by::<P>(|a, b| b.0.total_cmp(&a.0));
        }
        let order = |w: &mut World| -> Vec<Entity> {
            w.query::<(Entity, &Tag, &P)>()
                .iter()
                .map(|(e, ..)| e)
                .collect()
        };
        let before = order(&mut world);
        let json = serde_json::to_string(&world).unwrap();
        let mut loaded = make();
        loaded
            .load(&mut serde_json::Deserializer::from_str(&json))
            .unwrap();
        loaded.assert_invariants();
        assert_eq!(order(&mut loaded), before, "{name}");
        assert_eq!(serde_json::to_string(&loaded).unwrap(), json, "{name}");
        if name == "grouped" {
            assert_eq!(loaded.group_len::<Tag>(), Some(before.len()));
        }
        // Loaded into the world it came from, too.
        world
            .load(&mut serde_json::Deserializer::from_str(&json))
            .unwrap();
        world.assert_invariants();
        assert_eq!(order(&mut world), before, "{name}, same world");
    }
}

#[test]
fn a_change_filter_outside_a_query_state_panics_naming_it() {
    let mut world = World::new();
    world.track::<Pos>();
    world.spawn((Pos(0.0),));
    let err = quietly(|| world.query::<Entity>().filter::<Changed<Pos>>().count())
        .expect_err("a change filter needs a QueryState");
    let msg = panic_text(err);
    let pos = std::any::type_name::<Pos>();
    assert!(
        msg.starts_with(&format!("Changed<{pos}> holds a change filter")),
        "{msg}"
    );
    // The world is usable afterwards.
    assert_eq!(world.query::<&Pos>().count(), 1);
}

#[test]
fn a_query_state_run_on_a_second_world_panics() {
    let mut a = World::new();
    let mut b = World::new();
    for w in [&mut a, &mut b] {
        w.track::<Pos>();
        w.spawn((Pos(0.0),));
    }
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    assert_eq!(changed.query(&mut a).count(), 1);
    let err = quietly(|| changed.query(&mut b).count()).expect_err("another world");
    let msg = panic_text(err);
    assert!(msg.contains("ran on another world before"), "{msg}");
    // Named as the user wrote it, without the crate's module paths.
    let pos = std::any::type_name::<Pos>();
    assert!(
        msg.starts_with(&format!("QueryState<Entity, Changed<{pos}>>")),
        "{msg}"
    );
    let err =
        quietly(|| changed.query_shared(b.share()).count()).expect_err("another world, shared");
    assert!(err.downcast_ref::<String>().is_some());
    // The first world is still its own.
    let e = a.query::<Entity>().iter().next().unwrap();
    a.get_mut::<Pos>(e).unwrap().0 = 1.0;
    assert_eq!(changed.query(&mut a).count(), 1);
}

/// A load over a world whose unsaved values include one whose `Drop` panics: the load still
/// completes (every old value gone, groups packed for the loaded entities) before the panic
/// goes on, so no old component shows up under a loaded or a new entity.
#[cfg(feature = "serde")]
#[test]
fn a_load_whose_replaced_value_panics_still_completes() {
    let make = saving_world;
    let mut saved = make();
    saved.spawn((P(1.0), V(1.0)));
    let json = serde_json::to_string(&saved).unwrap();

    let mut world = make();
    // Registered before the other unsaved types, so its column is emptied first; tracked,
    // so its stamps must go with its values.
    world.track::<Armed>();
    world.track::<Mass>();
    world.spawn((Armed(true),));
    for i in 0..5 {
        world.spawn((Mass(i as f32), P(2.0), V(2.0)));
    }
    let r = quietly(|| world.load(&mut serde_json::Deserializer::from_str(&json)));
    assert!(r.is_err(), "the drop's panic goes on");
    world.assert_invariants();
    assert_eq!(world.len(), 1);
    assert_eq!(
        world.count::<Mass>(),
        0,
        "every column after the panicking one is emptied"
    );
    assert_eq!(world.count::<Armed>(), 0);
    assert_eq!(
        world.group_len::<P>(),
        Some(1),
        "the group is packed for the loaded world"
    );
    let mut q = world.query::<(&P, &V)>();
    let (ps, vs) = q.slices().expect("the query is the group's");
    assert_eq!((ps, vs), (&[P(1.0)][..], &[V(1.0)][..]));
    drop(q);
    let e = world.spawn((P(3.0),));
    assert!(!world.has::<Mass>(e), "a new entity inherits nothing");
    world.assert_invariants();
}

/// A saved type whose armed values panic in `Drop`, even while a panic unwinds.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct Fragile(bool);

#[cfg(feature = "serde")]
impl Drop for Fragile {
    fn drop(&mut self) {
        if self.0 {
            panic!("fragile value dropped");
        }
    }
}

/// A load whose replaced values panic twice (an unsaved one, and an old one of a saved type):
/// every old value is dropped inside the load, each panic caught, and the first goes on; none
/// is left to drop while that panic unwinds, which would abort the process.
#[cfg(feature = "serde")]
#[test]
fn a_load_whose_replaced_values_panic_twice_does_not_abort() {
    let make = || {
        let mut w = saving_world();
        w.register_saved::<Fragile>("fragile");
        w
    };
    let mut saved = make();
    saved.spawn((P(1.0), V(1.0)));
    let json = serde_json::to_string(&saved).unwrap();
    let mut world = make();
    world.spawn((Armed(true),));
    world.spawn((P(2.0), Fragile(true)));
    let r = quietly(|| world.load(&mut serde_json::Deserializer::from_str(&json)));
    let msg = *r.unwrap_err().downcast::<&str>().unwrap();
    assert_eq!(msg, "armed value dropped", "the first panic goes on");
    world.assert_invariants();
    assert_eq!(world.len(), 1);
    assert_eq!(world.count::<Fragile>(), 0);
    assert_eq!(world.count::<Armed>(), 0);
}

/// `contains` and `is_empty` answer as `get` and `iter` would, and like `count` hand nothing
/// out: a `&mut` query of a tracked type marks nothing changed through them.
#[test]
fn contains_and_is_empty_answer_like_get_and_mark_nothing() {
    let mut world = World::builder().group::<(Pos, Vel)>().build();
    world.track::<Pos>();
    let both = world.spawn((Pos(1.0), Vel(1.0)));
    let alone = world.spawn((Pos(2.0),));
    let frozen = world.spawn((Pos(3.0), Vel(3.0), Frozen));
    let gone = world.spawn((Pos(4.0), Vel(4.0)));
    world.despawn(gone);
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    assert_eq!(changed.query(&mut world).count(), 3);

    let mut q = world.query::<(&mut Pos, &Vel)>().without::<Frozen>();
    assert!(!q.is_empty());
    let answers: Vec<bool> = [both, alone, frozen, gone].map(|e| q.contains(e)).to_vec();
    drop(q);
    assert_eq!(answers, [true, false, false, false]);
    for e in [both, alone, frozen, gone] {
        let by_get = world
            .query::<(&Pos, &Vel)>()
            .without::<Frozen>()
            .get(e)
            .is_some();
        assert_eq!(
            world
                .query::<(&mut Pos, &Vel)>()
                .without::<Frozen>()
                .contains(e),
            by_get
        );
    }
    assert!(world.query::<&mut Pos>().with::<Mass>().is_empty());
    assert!(!world.query::<&mut Pos>().with::<Frozen>().is_empty());
    assert_eq!(changed.query(&mut world).count(), 0, "nothing was marked");
    // `get` on the same query does mark: the test can tell.
    world.query::<&mut Pos>().get(both);
    assert_eq!(changed.query(&mut world).count(), 1);
}

/// `single` hands out (and so marks) the one match only: with none or several, nothing is
/// marked changed; with one, that one is, in the grouped walk and the sparse one alike.
#[test]
fn single_marks_only_the_one_match_it_hands_out() {
    let mut world = World::builder().group::<(Pos, Vel)>().build();
    world.track::<Pos>();
    let a = world.spawn((Pos(1.0), Vel(1.0)));
    let b = world.spawn((Pos(2.0), Vel(2.0), Frozen));
    let c = world.spawn((Pos(3.0),));
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    assert_eq!(changed.query(&mut world).count(), 3);

    let several = world.query::<(&mut Pos, &Vel)>().single().map(|_| ());
    assert_eq!(several, Err(SingleError::SeveralMatches));
    let none = world
        .query::<&mut Pos>()
        .with::<Mass>()
        .single()
        .map(|_| ());
    assert_eq!(none, Err(SingleError::NoMatch));
    assert_eq!(changed.query(&mut world).count(), 0, "nothing was marked");

    world
        .query::<(&mut Pos, &Vel)>()
        .without::<Frozen>()
        .single()
        .expect("a alone")
        .0
         .0 += 10.0;
    let got: Vec<Entity> = changed.query(&mut world).iter().collect();
    assert_eq!(got, [a]);
    world
        .query::<&mut Pos>()
        .without::<Vel>()
        .single()
        .expect("c alone")
        .0 += 1.0;
    let got: Vec<Entity> = changed.query(&mut world).iter().collect();
    assert_eq!(got, [c]);
    assert_eq!(world.get::<Pos>(a), Some(&Pos(11.0)));
    assert_eq!(world.get::<Pos>(b), Some(&Pos(2.0)));
    world.assert_invariants();
}

/// An entity view whose entity a hook's commands despawn: the view answers as for a stale
/// entity, and an insert through it panics, saying so, instead of dropping the bundle unseen.
#[test]
fn an_entity_view_whose_entity_a_hook_despawns_says_so() {
    let mut world = World::new();
    world.on_remove::<Mass>(|e, _, commands| commands.despawn(e));
    let e = world.spawn((Mass(1.0), Pos(1.0)));
    let mut view = world.entity_mut(e).unwrap();
    assert_eq!(view.remove::<Mass>(), Some(Mass(1.0)));
    assert!(!view.is_alive());
    assert_eq!(view.get::<Pos>(), None);
    let r = quietly(|| {
        view.insert((Vel(2.0),));
    });
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("not alive") && msg.contains("hook"), "{msg}");
    assert!(view.data().is_none());
    let r = quietly(|| {
        view.set_data("hp", 3);
    });
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("set_data") && msg.contains("hook"), "{msg}");
    world.assert_invariants();
    assert_eq!(world.count::<Vel>(), 0);
    assert!(world.data(e).is_none() && world.data_store().is_empty());
    assert!(!world.is_alive(e));
}

/// A hook that panics after another hook recorded commands: the world is valid with those
/// commands waiting, and the next change applies them.
#[test]
fn commands_of_hooks_before_a_panicking_hook_wait_for_the_next_change() {
    let mut world = World::new();
    world.on_insert::<Pos>(|e, _, commands| commands.insert(e, (Mass(1.0),)));
    world.on_insert::<Vel>(|_, _, _| panic!("hook of Vel"));
    let r = quietly(|| world.spawn((Pos(1.0), Vel(1.0))));
    assert!(r.is_err());
    world.assert_invariants();
    let e = world.spawn(());
    assert_eq!(world.count::<Mass>(), 1, "applied by the next change");
    assert!(world.is_alive(e));
    world.assert_invariants();
}

#[test]
fn maintain_clamps_old_stamps_before_the_counter_wraps() {
    let mut world = World::new();
    world.track::<Pos>();
    let a = world.spawn((Pos(0.0),));
    let b = world.spawn((Pos(0.0),));
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    assert_eq!(changed.query(&mut world).count(), 2);
    // Frames far apart, each jump short of a clamp on its own: only `maintain` sees that
    // the counter has gone far enough. Five times around the 32-bit counter.
    let step = dod_world::Tick::MAX_AGE / 4 - 1;
    for round in 0..80u32 {
        let now = world.change_tick().get();
        world.set_change_tick(now.wrapping_add(step));
        world.maintain();
        if round % 7 == 3 {
            world.get_mut::<Pos>(b).unwrap().0 += 1.0;
            let got: Vec<Entity> = changed.query(&mut world).iter().collect();
            assert_eq!(got, [b], "round {round}: only the written value is new");
        } else {
            let seen = changed.query(&mut world).count();
            let tick = world.change_tick().get();
            assert_eq!(
                seen, 0,
                "round {round}: {a:?}'s old stamp looked new at {tick}"
            );
        }
    }
}

// --- found by the world model test ---------------------------------------------------------

/// Panics in `Drop` when armed.
struct Armed(bool);
impl Drop for Armed {
    fn drop(&mut self) {
        if self.0 && !std::thread::panicking() {
            panic!("armed value dropped");
        }
    }
}

fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
}

/// The message of a caught panic: its `String` or `&str` payload, empty for any other.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

/// The entities that have both an `A` and a `B`, as a query finds them.
fn with_both<A: dod_world::Component, B: dod_world::Component>(
    world: &mut World,
) -> BTreeSet<Entity> {
    world
        .query::<(Entity, &A, &B)>()
        .iter()
        .map(|t| t.0)
        .collect()
}

#[test]
fn an_insert_whose_replaced_value_panics_still_packs_the_group() {
    let mut world = World::builder().group::<(Pos, Armed)>().build();
    let e = world.spawn((Armed(true),));
    // `Pos` goes in, then the armed value is replaced and its drop panics: `e` now has both
    // types and must be in the group's prefix.
    assert!(quietly(|| world.insert(e, (Pos(1.0), Armed(false)))).is_err());
    assert!(world.has::<Pos>(e) && world.has::<Armed>(e));
    world.assert_invariants();
    assert_eq!(world.group_len::<Pos>(), Some(1));
    assert_eq!(world.query::<(Entity, &Pos, &Armed)>().iter().count(), 1);
}

#[test]
fn a_view_insert_whose_hook_panics_still_packs_the_group() {
    let mut world = World::builder().group::<(Pos, Vel)>().build();
    world.on_insert::<Vel>(|_, v: &Vel, _| {
        if v.0 == 7.0 {
            panic!("hook");
        }
    });
    let e = world.spawn((Pos(1.0),));
    // `Vel` goes in, then its hook panics: `e` has both types and must be in the group.
    assert!(quietly(|| world.view_mut::<Vel>().insert(e, Vel(7.0))).is_err());
    assert!(world.has::<Vel>(e));
    world.assert_invariants();
    assert_eq!(world.group_len::<Pos>(), Some(1));
    assert_eq!(world.query::<(&Pos, &Vel)>().iter().count(), 1);
}

#[test]
fn a_view_insert_whose_replaced_value_panics_keeps_the_group() {
    let mut world = World::builder().group::<(Pos, Armed)>().build();
    let member = world.spawn((Pos(1.0), Armed(true)));
    let outsider = world.spawn((Armed(true),));
    assert_eq!(world.group_len::<Pos>(), Some(1));
    // A plain storage's replacement: the new value goes in, the old one's drop panics. The
    // member stays in, the outsider stays out.
    for e in [member, outsider] {
        assert!(quietly(|| world.view_mut::<Armed>().insert(e, Armed(false))).is_err());
        assert_eq!(world.get::<Armed>(e).map(|a| a.0), Some(false));
        world.assert_invariants();
        assert_eq!(world.group_len::<Pos>(), Some(1));
    }
    assert_eq!(
        with_both::<Pos, Armed>(&mut world),
        [member].into_iter().collect()
    );
}

/// A view and `World::remove` of a grouped type, deterministic: the leaving entity is the
/// group's last member with nothing after it in the storage that loses the value (no swap
/// there: the swap-and-pop moves the member), a member with non-members after it (a swap
/// first), and a non-member. Every other entity keeps its own values.
#[test]
fn leaving_a_group_keeps_every_other_entity_its_values() {
    for through_view in [false, true] {
        let mut world = grouped_world();
        let es: Vec<Entity> = (0..4)
            .map(|i| world.spawn((Pos(i as f32), Vel(10.0 + i as f32))))
            .collect();
        // Vel alone: outside the group, after the members in Vel's storage.
        let loner = world.spawn((Vel(99.0),));
        let remove = |world: &mut World, e: Entity| -> Option<Vel> {
            if through_view {
                world.view_mut::<Vel>().remove(e)
            } else {
                world.remove::<Vel>(e)
            }
        };
        // The last member while the loner sits after it: a swap in Vel's storage.
        assert_eq!(remove(&mut world, es[3]), Some(Vel(13.0)));
        world.assert_invariants();
        assert_eq!(remove(&mut world, loner), Some(Vel(99.0)));
        world.assert_invariants();
        // Now Vel holds the members alone: the last one leaves with no swap in Vel's storage.
        assert_eq!(remove(&mut world, es[2]), Some(Vel(12.0)));
        world.assert_invariants();
        // The first member: a swap in both storages.
        assert_eq!(remove(&mut world, es[0]), Some(Vel(10.0)));
        world.assert_invariants();
        assert_eq!(remove(&mut world, es[0]), None);
        assert_eq!(world.group_len::<Pos>(), Some(1), "view: {through_view}");
        for (i, &e) in es.iter().enumerate() {
            assert_eq!(world.get::<Pos>(e), Some(&Pos(i as f32)));
            let vel = (i == 1).then_some(Vel(10.0 + i as f32));
            assert_eq!(world.get::<Vel>(e).copied(), vel);
        }
    }
}

#[test]
fn a_grouped_tag_goes_in_and_out_through_a_view() {
    let mut world = grouped_world();
    let es: Vec<Entity> = (0..5).map(|i| world.spawn((Mass(i as f32),))).collect();
    {
        let mut frozen = world.view_mut::<Frozen>();
        for &e in &es {
            assert_eq!(frozen.insert(e, Frozen), Ok(true));
        }
        assert_eq!(frozen.insert(es[0], Frozen), Ok(false));
    }
    world.assert_invariants();
    assert_eq!(world.group_len::<Mass>(), Some(5));
    {
        let mut frozen = world.view_mut::<Frozen>();
        assert_eq!(frozen.remove(es[3]), Some(Frozen));
        assert_eq!(frozen.remove(es[3]), None);
        assert_eq!(frozen.remove(es[0]), Some(Frozen));
    }
    world.assert_invariants();
    assert_eq!(world.group_len::<Mass>(), Some(3));
    assert_eq!(
        with_both::<Mass, Frozen>(&mut world),
        [es[1], es[2], es[4]].into_iter().collect()
    );
}

#[test]
fn a_grouped_type_whose_hooks_are_removed_takes_the_plain_paths() {
    let mut world = grouped_world();
    let calls = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&calls);
    world.on_insert::<Vel>(move |_, _, _| *seen.lock().unwrap() += 1);
    let seen = Arc::clone(&calls);
    world.on_remove::<Vel>(move |_, _, _| *seen.lock().unwrap() += 1);
    let es: Vec<Entity> = (0..4).map(|i| world.spawn((Pos(i as f32),))).collect();
    world.view_mut::<Vel>().insert(es[0], Vel(0.0)).unwrap();
    world.insert(es[1], (Vel(1.0),)).unwrap();
    assert_eq!(*calls.lock().unwrap(), 2);
    world.remove_hooks::<Vel>();
    {
        let mut vel = world.view_mut::<Vel>();
        vel.insert(es[2], Vel(2.0)).unwrap();
        vel.insert(es[3], Vel(3.0)).unwrap();
        assert_eq!(vel.remove(es[0]), Some(Vel(0.0)));
    }
    world.assert_invariants();
    assert_eq!(world.remove::<Vel>(es[3]), Some(Vel(3.0)));
    world.assert_invariants();
    assert_eq!(
        *calls.lock().unwrap(),
        2,
        "no hook runs once they are removed"
    );
    assert_eq!(world.group_len::<Pos>(), Some(2));
    assert_eq!(
        with_both::<Pos, Vel>(&mut world),
        [es[1], es[2]].into_iter().collect()
    );
}

/// Hooks that panic on some values, run through every path that runs hooks (spawn, batch
/// spawn, insert, a view's insert and remove, remove, despawn, commands): after each step,
/// caught panic or not, every invariant of the world holds, the group prefixes above all.
#[test]
fn panicking_hooks_keep_every_invariant_on_every_path() {
    let (seeds, steps): (u64, usize) = if cfg!(miri) { (2, 60) } else { (16, 300) };
    for seed in 1..=seeds {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut world = grouped_world();
        world.on_insert::<Vel>(|_, v: &Vel, _| {
            if v.0 as u32 % 5 == 0 {
                panic!("insert hook of Vel");
            }
        });
        world.on_insert::<Pos>(|_, p: &Pos, _| {
            if p.0 as u32 % 11 == 0 {
                panic!("insert hook of Pos");
            }
        });
        world.on_remove::<Pos>(|_, p: &Pos, _| {
            if p.0 as u32 % 7 == 0 {
                panic!("remove hook of Pos");
            }
        });
        world.on_remove::<Frozen>(|_, _, _| {});
        let mut es: Vec<Entity> = Vec::new();
        let (mut caught, mut calls) = (0, 0);
        for _ in 0..steps {
            let v = rng.below(60) as f32;
            let pick = (!es.is_empty()).then(|| es[rng.below(es.len() as u64) as usize]);
            let op = rng.below(10);
            let outcome = quietly(|| match (op, pick) {
                (0, _) => es.push(world.spawn((Pos(v),))),
                (1, _) => es.push(world.spawn((Pos(v), Vel(v), Mass(v)))),
                (2, _) => es.extend(world.spawn_batch((0..3).map(|k| (Vel(v + k as f32), Frozen)))),
                (3, Some(e)) => drop(world.insert(e, (Vel(v), Pos(v)))),
                (4, Some(e)) => drop(world.view_mut::<Vel>().insert(e, Vel(v))),
                (5, Some(e)) => drop(world.view_mut::<Pos>().insert(e, Pos(v))),
                (6, Some(e)) => drop(world.view_mut::<Pos>().remove(e)),
                (7, Some(e)) => drop(world.remove::<Pos>(e)),
                (8, Some(e)) => drop(world.despawn(e)),
                (9, Some(e)) => {
                    let mut commands = Commands::new();
                    commands.insert(e, (Pos(v), Vel(v)));
                    commands.remove::<Pos>(e);
                    es.push(commands.spawn(world.entities(), (Pos(v), Vel(v))));
                    world.apply(&mut commands);
                }
                _ => {}
            });
            calls += 1;
            caught += usize::from(outcome.is_err());
            world.assert_invariants();
            // Counted entity by entity, not by a query over the group's types: such a query
            // walks the group's prefix, so it would count whatever the group holds.
            let live: Vec<Entity> = world.entities().iter().collect();
            let both = |has: &dyn Fn(Entity) -> bool| live.iter().filter(|&&e| has(e)).count();
            for (g, group, all) in [
                (
                    "Pos, Vel",
                    world.group_len::<Pos>(),
                    both(&|e| world.has::<Pos>(e) && world.has::<Vel>(e)),
                ),
                (
                    "Mass, Frozen",
                    world.group_len::<Mass>(),
                    both(&|e| world.has::<Mass>(e) && world.has::<Frozen>(e)),
                ),
            ] {
                assert_eq!(group, Some(all), "group ({g}) holds every entity with both");
            }
        }
        assert!(
            caught > 0 && caught < calls,
            "seed {seed}: some steps panic, not all"
        );
    }
}

#[test]
fn clear_drops_every_tracked_value_when_one_drop_panics() {
    let mut world = World::new();
    world.track::<Armed>();
    let es: Vec<Entity> = (0..5).map(|i| world.spawn((Armed(i == 1),))).collect();
    assert!(quietly(|| world.clear()).is_err());
    world.assert_invariants();
    assert_eq!(
        world.count::<Armed>(),
        0,
        "no value of a dead entity is left"
    );
    assert_eq!(world.removed::<Armed>().len(), es.len());
}

#[test]
fn maintain_moves_the_counter_across_the_wrap() {
    let mut world = World::new();
    world.set_change_tick(u32::MAX);
    world.maintain();
    assert_eq!(world.change_tick().get(), 0);
}

#[test]
fn a_state_that_never_ran_sees_every_value_after_a_long_jump_or_the_wrap() {
    for jump_to in [3u32 << 30, u32::MAX - 2] {
        let mut world = World::new();
        world.track::<Pos>();
        let a = world.spawn((Pos(0.0),));
        world.set_change_tick(jump_to); // old stamps are clamped
        let mut fresh = QueryState::<Entity, (Added<Pos>, Changed<Pos>)>::new();
        if jump_to > u32::MAX - 8 {
            // Past the wrap: the counter is small again, the stamps are not.
            for _ in 0..8 {
                world.maintain();
            }
            assert!(world.change_tick().get() < 8);
        }
        let got: Vec<Entity> = fresh.query(&mut world).iter().collect();
        assert_eq!(got, [a], "first run after tick {jump_to}");
        assert_eq!(fresh.query(&mut world).count(), 0);
    }
}

#[test]
fn a_query_marks_only_the_entities_it_visits() {
    let mut world = World::new();
    world.track::<Pos>();
    let a = world.spawn((Pos(0.0), Vel(1.0)));
    let b = world.spawn((Pos(0.0),)); // no `Vel`: not visited by `(&mut Pos, &Vel)`
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    changed.query(&mut world).count();
    // Counting hands nothing out, so it marks nothing, in either form or through an iterator.
    assert_eq!(world.query::<(&mut Pos, &Vel)>().count(), 1);
    assert_eq!(world.share().query::<(&mut Pos, &Vel)>().count(), 1);
    assert_eq!(world.query::<&mut Pos>().iter().count(), 2);
    assert_eq!(world.query::<&mut Pos>().into_iter().count(), 2);
    assert_eq!(changed.query(&mut world).count(), 0);
    // Exclusive and shared forms, both drivers: `Pos` is fetched before `Vel` is found
    // missing.
    world.query::<(&mut Pos, &Vel)>().for_each(|_| {});
    world.share().query::<(&mut Pos, &Vel)>().for_each(|_| {});
    assert!(world.query::<(&mut Pos, &Vel)>().get(b).is_none());
    let got: Vec<Entity> = changed.query(&mut world).iter().collect();
    assert_eq!(got, [a]);
}

#[test]
fn a_query_closure_that_panics_part_way_marks_exactly_what_it_was_handed() {
    // Alone (walked by position), beside a second storage that holds the same entities in
    // the same order (aligned chunks), and in a group; with no filter (the stamps are written
    // after the walk) and with a filter (written per item).
    for layout in 0..3 {
        let mut world = if layout == 2 {
            World::builder().group::<(Pos, Vel)>().build()
        } else {
            World::new()
        };
        world.track::<Pos>();
        let es: Vec<Entity> = (0..200)
            .map(|i| {
                if layout == 0 {
                    world.spawn((Pos(i as f32),))
                } else {
                    world.spawn((Pos(i as f32), Vel(1.0)))
                }
            })
            .collect();
        let mut changed = QueryState::<Entity, Changed<Pos>>::new();
        changed.query(&mut world).count();
        for stop in [0usize, 1, 63, 64, 65, 150] {
            for filtered in [false, true] {
                let mut handed = Vec::new();
                let run = quietly(|| {
                    // Every entity whose item the closure got, the one it panics on too.
                    let mut visit = |e: Entity| {
                        handed.push(e);
                        if handed.len() > stop {
                            panic!("stop");
                        }
                    };
                    match (layout, filtered) {
                        (0, false) => world
                            .query::<(Entity, &mut Pos)>()
                            .for_each(|(e, _)| visit(e)),
                        (0, true) => world
                            .query::<(Entity, &mut Pos)>()
                            .without::<Frozen>()
                            .for_each(|(e, _)| visit(e)),
                        (_, false) => world
                            .query::<(Entity, &mut Pos, &Vel)>()
                            .for_each(|(e, _, _)| visit(e)),
                        (_, true) => world
                            .query::<(Entity, &mut Pos, &Vel)>()
                            .without::<Frozen>()
                            .for_each(|(e, _, _)| visit(e)),
                    }
                });
                assert!(run.is_err());
                world.assert_invariants();
                let got: BTreeSet<Entity> = changed.query(&mut world).iter().collect();
                let want: BTreeSet<Entity> = handed.iter().copied().collect();
                assert_eq!(
                    got, want,
                    "layout {layout}, stop {stop}, filtered {filtered}: the marked values"
                );
            }
        }
        assert_eq!(es.len(), 200);
    }
}

#[test]
fn a_change_filter_finds_writes_at_every_position_of_its_runs() {
    // The filter rules runs of positions out whole when none of them changed; a write at the
    // first, last or any position of a run, or past the last full run, is still found.
    let mut world = World::new();
    world.track::<Pos>();
    let es: Vec<Entity> = (0..100).map(|i| world.spawn((Pos(i as f32),))).collect();
    let mut changed = QueryState::<(Entity, &Pos), Changed<Pos>>::new();
    assert_eq!(changed.query(&mut world).count(), 100);
    let mut rng = Rng(7);
    for round in 0..200 {
        let writes: BTreeSet<usize> = if round < 100 {
            BTreeSet::from([round])
        } else {
            (0..rng.below(6)).map(|_| rng.below(100) as usize).collect()
        };
        for &i in &writes {
            world.get_mut::<Pos>(es[i]).unwrap().0 += 1.0;
        }
        let got: BTreeSet<Entity> = changed.query(&mut world).iter().map(|(e, _)| e).collect();
        let want: BTreeSet<Entity> = writes.iter().map(|&i| es[i]).collect();
        assert_eq!(got, want, "round {round}");
        let mut seen = 0;
        changed.query(&mut world).for_each(|_| seen += 1);
        assert_eq!(seen, 0, "round {round}: nothing new since");
    }
}

struct Spawned;
struct Fuse(u32);
struct Alert;

#[test]
fn hooks_work_again_after_a_hook_command_panics() {
    let mut world = World::new();
    world.on_insert::<Spawned>(|e, _, commands| commands.insert(e, (Fuse(e.index()),)));
    // The insert of `Fuse` runs this hook; on the second entity it panics.
    world.on_insert::<Fuse>(|e, fuse, commands| {
        assert_ne!(fuse.0, 1, "bad configuration");
        commands.insert(e, (Alert,));
    });
    let a = world.spawn((Spawned,));
    assert!(world.has::<Fuse>(a) && world.has::<Alert>(a));
    let panicked = quietly(|| {
        world.spawn((Spawned,));
    });
    assert!(panicked.is_err(), "the hook's panic goes on");
    world.assert_invariants();
    // The entity whose hook panicked has `Spawned` and `Fuse` (the panic came after the
    // insert), but the `Alert` its hook never recorded is missing; nothing is left pending.
    let c = world.spawn((Spawned,));
    world.assert_invariants();
    assert!(
        world.has::<Fuse>(c) && world.has::<Alert>(c),
        "hooks that recorded commands are applied again after the panic"
    );
}

#[test]
fn pushed_commands_run_in_order_with_the_others() {
    let mut world = World::new();
    let a = world.spawn((Pos(1.0),));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut commands = Commands::new();
    commands.insert(a, (Vel(2.0),));
    let log = seen.clone();
    commands.push(move |world| {
        // The insert before it is made; the despawn after it is not yet.
        log.lock()
            .unwrap()
            .push((world.has::<Vel>(a), world.is_alive(a)));
        world.insert(a, (Mass(3.0),)).unwrap();
    });
    commands.despawn(a);
    let log = seen.clone();
    commands.push(move |world| log.lock().unwrap().push((false, world.is_alive(a))));
    assert_eq!(commands.len(), 4);
    assert_eq!(
        world.apply(&mut commands),
        0,
        "a pushed command is never skipped"
    );
    assert_eq!(*seen.lock().unwrap(), [(true, true), (false, false)]);
    assert!(commands.is_empty());
    world.assert_invariants();
}

#[test]
fn a_panicking_pushed_command_drops_the_rest_and_leaves_the_world_valid() {
    let mut world = grouped_world();
    let a = world.spawn((Pos(1.0), Vel(1.0)));
    let mut commands = Commands::new();
    commands.push(move |world| {
        world.insert(a, (Mass(1.0),)).unwrap();
        panic!("a command of the caller's own");
    });
    commands.insert(a, (Frozen,));
    assert!(quietly(|| world.apply(&mut commands)).is_err());
    world.assert_invariants();
    assert!(
        commands.is_empty(),
        "the commands after the panic are dropped"
    );
    assert!(world.has::<Mass>(a) && !world.has::<Frozen>(a));
    assert_eq!(world.count::<Pos>(), 1);
}

#[test]
fn a_pushed_command_that_panics_in_a_hook_round_drops_the_round() {
    // The hook of `Fuse` pushes a command that panics on the second fuse; the insert of
    // `Alert` the same hook recorded after it is dropped with the round, and the hooks
    // work again after.
    let mut world = grouped_world();
    world.on_insert::<Fuse>(|e, fuse, commands| {
        let n = fuse.0;
        commands.push(move |world| {
            world.insert(e, (Pos(n as f32),)).unwrap();
            assert_ne!(n, 1, "bad fuse");
        });
        commands.insert(e, (Alert,));
    });
    let a = world.spawn((Fuse(0),));
    assert!(world.has::<Pos>(a) && world.has::<Alert>(a));
    let panicked = quietly(|| world.spawn((Fuse(1),)));
    assert!(panicked.is_err(), "the command's panic goes on");
    world.assert_invariants();
    let b = world.entities().iter().find(|&e| e != a).unwrap();
    assert!(
        world.has::<Pos>(b),
        "the command made its change before it panicked"
    );
    assert!(!world.has::<Alert>(b), "the rest of the round is dropped");
    let c = world.spawn((Fuse(2),));
    assert!(world.has::<Pos>(c) && world.has::<Alert>(c));
    world.assert_invariants();
}

#[cfg(feature = "serde")]
#[test]
fn a_pushed_command_of_a_hook_may_not_load() {
    let mut world = World::new();
    let save = serde_json::to_string(&world).unwrap();
    world.on_insert::<Fuse>(move |_, _, commands| {
        let save = save.clone();
        commands.push(move |world| {
            let _ = world.load(&mut serde_json::Deserializer::from_str(&save));
        });
    });
    let message = panic_text(
        quietly(|| world.spawn((Fuse(0),))).expect_err("a load from a hook round panics"),
    );
    assert!(
        message.contains("World::load called by a command a hook"),
        "{message}"
    );
    world.assert_invariants();
    assert_eq!(world.len(), 1, "the spawn stands, nothing was loaded");
    // Outside a hook round, a pushed command may load.
    world.remove_hooks::<Fuse>();
    let mut commands = Commands::new();
    let save = serde_json::to_string(&World::new()).unwrap();
    commands.push(move |world| {
        world
            .load(&mut serde_json::Deserializer::from_str(&save))
            .unwrap()
    });
    world.apply(&mut commands);
    assert!(world.is_empty());
}

#[test]
fn hooks_link_and_unlink_entities_through_pushed_commands() {
    // Each enemy gets a health bar that names it, and names its bar; despawning the enemy
    // despawns its bar. Neither can be done with the named commands alone: a hook has no
    // `Entities` to name a spawn with.
    struct Enemy;
    struct Bar(Entity);
    struct BarOf(Entity);
    let mut world = grouped_world();
    world.on_insert::<Enemy>(|enemy, _, commands| {
        commands.push(move |world| {
            let bar = world.spawn((BarOf(enemy),));
            world.insert(enemy, (Bar(bar),)).unwrap();
        })
    });
    world.on_remove::<Bar>(|_, bar, commands| commands.despawn(bar.0));
    let enemies: Vec<Entity> = (0..10)
        .map(|i| world.spawn((Enemy, Pos(i as f32))))
        .collect();
    world.assert_invariants();
    assert_eq!(world.len(), 20);
    for &e in &enemies {
        let bar = world.get::<Bar>(e).unwrap().0;
        assert_eq!(world.get::<BarOf>(bar).unwrap().0, e);
    }
    let bars: Vec<Entity> = enemies[..5]
        .iter()
        .map(|&e| world.get::<Bar>(e).unwrap().0)
        .collect();
    for &e in &enemies[..5] {
        world.despawn(e);
    }
    assert_eq!(world.len(), 10);
    assert!(bars.iter().all(|&b| !world.is_alive(b)));
    world.assert_invariants();
}

#[test]
fn hooks_that_feed_each_other_panic_once_and_leave_the_world_usable() {
    let mut world = World::new();
    world.on_insert::<Fuse>(|e, fuse, commands| commands.insert(e, (Fuse(fuse.0 + 1),)));
    let panicked = quietly(|| {
        world.spawn((Fuse(0),));
    });
    assert!(panicked.is_err(), "hooks that never stop recording panic");
    world.assert_invariants();
    // The loop's commands were dropped: the next change does not go round again.
    world.on_insert::<Fuse>(|e, _, commands| commands.insert(e, (Alert,)));
    let e = world.spawn((Fuse(0),));
    world.assert_invariants();
    assert!(world.has::<Alert>(e));
}

#[test]
fn a_chain_of_hook_made_entities_longer_than_the_limit_panics_naming_the_cascade() {
    // Each round spawns the next entity, which the limit (set by the entities alive when the
    // cascade started) does not count: 1 500 rounds against a limit of 1 000 + 4.
    let mut world = World::new();
    world.on_insert::<Fuse>(|_, fuse, commands| {
        if fuse.0 > 0 {
            commands.spawn_unnamed((Fuse(fuse.0 - 1),));
        }
    });
    let panicked = quietly(|| {
        world.spawn((Fuse(1_500),));
    });
    let message = match panicked {
        Ok(()) => panic!("a chain longer than the round limit panics"),
        Err(p) => panic_text(p),
    };
    assert!(message.contains("1004 rounds"), "{message}");
    assert!(message.contains("spawned by the hook"), "{message}");
    world.assert_invariants();
    // Below the limit the chain completes.
    let before = world.len();
    world.spawn((Fuse(900),));
    assert_eq!(world.len(), before + 901);
}

#[test]
fn a_despawn_hook_walks_a_hierarchy_of_any_depth() {
    // A chain of bones 5 000 deep: a round of hook commands per level.
    struct Kids(Vec<Entity>);
    let mut world = World::new();
    world.on_remove::<Kids>(|_, kids, commands| {
        for &e in &kids.0 {
            commands.despawn(e);
        }
    });
    let root = world.spawn(());
    let mut parent = root;
    for _ in 0..5_000 {
        let e = world.spawn(());
        world.insert(parent, (Kids(vec![e]),)).unwrap();
        parent = e;
    }
    let bystander = world.spawn((Pos(1.0),));
    assert!(world.despawn(root));
    assert_eq!(world.len(), 1, "the whole chain is gone");
    assert!(world.is_alive(bystander));
    world.assert_invariants();
}

#[test]
fn a_despawn_hook_that_despawns_a_later_entity_of_a_batch_leaves_it_to_the_hook() {
    // Each parent's hook despawns its kids; the batch names parents and kids alike, so a
    // kid is gone by its turn and is not counted again, as in a loop of `despawn`.
    struct Kids(Vec<Entity>);
    let build = || {
        let mut world = World::new();
        world.on_remove::<Kids>(|_, kids, commands| {
            for &e in &kids.0 {
                commands.despawn(e);
            }
        });
        let mut batch = Vec::new();
        for _ in 0..6 {
            let kids: Vec<Entity> = (0..3).map(|_| world.spawn((Pos(0.0),))).collect();
            let parent = world.spawn((Kids(kids.clone()),));
            batch.push(parent);
            batch.extend(kids);
        }
        let bystander = world.spawn((Pos(1.0),));
        (world, batch, bystander)
    };
    let (mut world, batch, bystander) = build();
    assert_eq!(world.despawn_batch(batch.iter().copied()), 6, "the parents");
    assert_eq!(world.len(), 1);
    assert!(world.is_alive(bystander));
    world.assert_invariants();
    let (mut looped, batch, _) = build();
    let despawned = batch.iter().filter(|&&e| looped.despawn(e)).count();
    assert_eq!(despawned, 6, "a loop of despawn counts the same");
    assert_eq!(looped.len(), 1);
}

#[test]
fn a_hook_that_panics_during_a_spawn_leaves_the_world_valid() {
    let mut world = World::new();
    world.on_insert::<Spawned>(|e, _, commands| commands.insert(e, (Alert,)));
    world.on_insert::<Fuse>(|_, fuse, _| assert_ne!(fuse.0, 1, "bad configuration"));
    let panicked = quietly(|| world.spawn((Spawned, Fuse(1))));
    assert!(panicked.is_err());
    // The entity was spawned before its hook panicked, and the command the other hook
    // recorded waits for the next change or flush.
    assert_eq!(world.len(), 1);
    world.flush();
    world.assert_invariants();
    assert_eq!(world.query::<&Alert>().iter().count(), 1);
}

#[test]
fn get_disjoint_mut_marks_exactly_the_values_it_hands_out() {
    let mut world = World::new();
    world.track::<Pos>();
    let es: Vec<Entity> = (0..4)
        .map(|i| world.spawn((Pos(i as f32), Frozen)))
        .collect();
    let mut changed = QueryState::<Entity, Changed<Pos>>::new();
    assert_eq!(changed.query(&mut world).count(), 4, "first run: all new");
    // Refused (a repeated entity, a stale one): nothing is marked.
    assert!(world.get_disjoint_mut::<Pos, 2>([es[0], es[0]]).is_none());
    world.despawn(es[3]);
    assert!(world.get_disjoint_mut::<Pos, 2>([es[0], es[3]]).is_none());
    assert_eq!(changed.query(&mut world).count(), 0);
    let [a, b] = world.get_disjoint_mut::<Pos, 2>([es[2], es[0]]).unwrap();
    core::mem::swap(a, b);
    let mut seen: Vec<Entity> = changed.query(&mut world).iter().collect();
    seen.sort();
    assert_eq!(seen, [es[0], es[2]]);
    assert_eq!(world.get::<Pos>(es[0]), Some(&Pos(2.0)));
    // A tag: present and distinct, or nothing.
    assert!(world
        .get_disjoint_mut::<Frozen, 2>([es[0], es[1]])
        .is_some());
    assert!(world
        .get_disjoint_mut::<Frozen, 2>([es[1], es[1]])
        .is_none());
    assert!(world.get_disjoint_mut::<Frozen, 1>([es[3]]).is_none());
    world.assert_invariants();
}

#[test]
fn a_refiltered_query_is_a_new_run_and_sees_what_was_written_in_between() {
    let mut world = World::new();
    world.track::<Pos>();
    for i in 0..3 {
        world.spawn((Pos(i as f32), Vel(1.0)));
    }
    let mut state = QueryState::<Entity, Changed<Pos>>::new();
    assert_eq!(state.query(&mut world).count(), 3, "first run: all new");
    let w = world.share();
    let mut q = state.query_shared(w);
    assert_eq!(q.count(), 0);
    assert_eq!(q.count(), 0, "a second run of the query sees the same");
    // Refiltering gives the borrows up, so a writer may run before the next run.
    let mut q = q.with::<Vel>();
    w.query::<&mut Pos>().for_each(|p| p.0 += 1.0);
    assert_eq!(q.count(), 3);
}

#[test]
fn take_is_all_or_nothing_through_groups_tags_and_tracking() {
    let mut world = World::builder().group::<(Pos, Vel)>().build();
    world.track::<Pos>();
    let a = world.spawn((Pos(1.0), Vel(2.0), Frozen, Mass(3.0)));
    let b = world.spawn((Pos(4.0), Vel(5.0)));
    // A type no entity ever had, and one `a` lacks: nothing is taken.
    struct Never;
    assert!(world.take::<(Pos, Never)>(a).is_none());
    assert!(world.take::<(Pos, Vel, Mass)>(b).is_none());
    assert_eq!(world.get::<Pos>(b), Some(&Pos(4.0)));
    // Out of the group, a tag in bits and a tracked type at once.
    world.maintain();
    assert_eq!(
        world.take::<(Frozen, Pos, Vel)>(a),
        Some((Frozen, Pos(1.0), Vel(2.0)))
    );
    assert!(!world.has::<Frozen>(a) && !world.has::<Pos>(a) && !world.has::<Vel>(a));
    assert_eq!(world.get::<Mass>(a), Some(&Mass(3.0)));
    assert_eq!(world.group_len::<Pos>(), Some(1));
    assert_eq!(world.removed::<Pos>(), [a]);
    assert_eq!(world.query::<(&Pos, &Vel)>().count(), 1);
    world.assert_invariants();
    // A dead entity takes nothing; a bundle that names a type twice panics all the same.
    world.despawn(b);
    assert!(world.take::<(Pos,)>(b).is_none());
    let twice = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.take::<(Pos, Pos)>(b);
    }));
    assert!(twice.is_err());
    world.assert_invariants();
}

#[test]
fn a_take_whose_remove_hook_panics_keeps_the_later_components() {
    let mut world = World::new();
    world.on_remove::<Vel>(|_, _, _| panic!("no"));
    let e = world.spawn((Pos(1.0), Vel(2.0), Mass(3.0)));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.take::<(Pos, Vel, Mass)>(e);
    }));
    assert!(r.is_err());
    // Before the hook's type and its own: gone; after it: kept. The world is valid.
    assert_eq!(
        (
            world.has::<Pos>(e),
            world.has::<Vel>(e),
            world.get::<Mass>(e)
        ),
        (false, false, Some(&Mass(3.0)))
    );
    world.assert_invariants();
}

#[test]
fn a_change_filter_needs_a_query_state() {
    let mut world = World::new();
    world.track::<Pos>();
    world.track::<Vel>();
    let a = world.spawn((Pos(0.0), Vel(0.0)));
    let b = world.spawn((Pos(0.0), Vel(0.0)));
    // A plain query has no last run to answer relative to.
    let r = quietly(|| world.query::<Entity>().filter::<Changed<Pos>>().count());
    let msg = *r.expect_err("a panic").downcast::<String>().unwrap();
    assert!(msg.contains("QueryState"), "{msg}");
    // A state's query takes one, inside an `Or` too.
    let mut state = QueryState::<Entity>::new();
    assert_eq!(
        state
            .query(&mut world)
            .filter::<dod_world::Or<(Changed<Pos>, Added<Vel>)>>()
            .count(),
        2
    );
    world.get_mut::<Pos>(b).unwrap().0 = 1.0;
    let got: Vec<Entity> = state
        .query(&mut world)
        .filter::<dod_world::Or<(Changed<Pos>, Added<Vel>)>>()
        .iter()
        .collect();
    assert_eq!(got, [b]);
    let _ = a;
}
