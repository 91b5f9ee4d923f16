//! The world ids a process hands out. A test binary of its own, with one test: the ids come
//! from one counter per process, so no other test may make worlds while it runs.
#![cfg(feature = "serde")]

use dod_world::World;

/// The id the world made right after one with id `id` takes: 1 ..= 32 767, in turn.
fn next_id(id: u16) -> u16 {
    if id == 0x7FFF {
        1
    } else {
        id + 1
    }
}

#[test]
fn loads_use_up_no_world_id_and_a_later_world_refuses_every_live_worlds_entities() {
    let a = World::new();
    let mut b = World::new();
    assert_eq!(b.entities().world_id(), next_id(a.entities().world_id()));
    b.spawn((1u32,));
    let save = serde_json::to_string(&b).unwrap();
    for _ in 0..3 {
        b.load(&mut serde_json::Deserializer::from_str(&save))
            .unwrap();
    }
    // A load that fails (an unknown component name) takes no id either.
    let bad =
        r#"{"world_id":1,"min_free":0,"slots":[],"free":[],"components":{"nope":[]},"data":null}"#;
    assert!(b
        .load(&mut serde_json::Deserializer::from_str(bad))
        .is_err());
    let c = World::new();
    assert_eq!(c.entities().world_id(), next_id(b.entities().world_id()));

    // Had each load drawn an id, `c` would be the 32 767th world made after `a`, and take
    // its id: then `a`'s entities would resolve in `c`.
    let mut a = World::new();
    let hero = a.spawn((7u32,));
    let mut b = World::new();
    let save = serde_json::to_string(&b).unwrap();
    for _ in 0..0x7FFF - 2 {
        b.load(&mut serde_json::Deserializer::from_str(&save))
            .unwrap();
    }
    let mut c = World::new();
    let villain = c.spawn((9u32,));
    assert_ne!(c.entities().world_id(), a.entities().world_id());
    assert_ne!(c.entities().world_id(), b.entities().world_id());
    assert_ne!(hero, villain);
    assert_eq!(c.get::<u32>(hero), None);
    assert_eq!(a.get::<u32>(villain), None);
}
