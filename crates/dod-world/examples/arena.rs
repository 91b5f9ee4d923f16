//! An arena: a frame loop over a `World` of bullets, lasers, enemies and tanks.
//!
//! Each frame, objects move (one query), age, and expire; systems record despawns and new
//! spawns in `Commands` while the world is shared, and the world applies them after. The
//! subsets "bullets AND lasers" and "enemies AND NOT tanks" are
//! queries over tag components (`Bullet`, `Laser`, ...), stored as bits beside each other, so
//! no mask is kept in step by hand: despawning an entity clears its tags. Every frame checks
//! both subsets against each object's own record of its kinds.
//!
//! `Pos` and `Vel` form an owning group, so the movement system walks two packed slices in
//! lockstep. `Pos` is change-tracked: a render-sync system uploads only the positions that
//! changed since it last ran (and deletes the ones removed), and each frame checks that count
//! against what the frame really moved and spawned. Some objects have no velocity: they are
//! never uploaded again after their first frame.
//!
//! Enemies carry a character sheet read from restricted JSON into the world's per-entity data;
//! hits lower their health there. At the end the world is saved and loaded, and the loaded
//! copy is checked against the original, down to the next entity it spawns.
//!
//! `cargo run --release -p dod-world --example arena [-- --quick]`

use std::time::{Duration, Instant};

use dod::data::{DataComponent, KeyNames};
use dod_world::{Changed, Commands, Entity, QueryState, World};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Pos([f32; 2]);
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Vel([f32; 2]);
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Life(f32);
/// The object's own record of its kinds, to check the tag queries against.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Kinds(u8);

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Bullet;
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Laser;
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Enemy;
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Tank;

const BULLET: u8 = 1;
const LASER: u8 = 2;
const ENEMY: u8 = 4;
const TANK: u8 = 8;

const SHEET: &str = r#"{"name": "grunt", "stats": {"health": 5.0, "armor": 1.0}}"#;

/// A small fixed generator, so every run is the same.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 10_000) as f32 / 10_000.0
    }
}

fn register(world: &mut World) {
    world.register_saved::<Pos>("pos");
    world.register_saved::<Vel>("vel");
    world.register_saved::<Life>("life");
    world.register_saved::<Kinds>("kinds");
    world.register_saved::<Bullet>("bullet");
    world.register_saved::<Laser>("laser");
    world.register_saved::<Enemy>("enemy");
    world.register_saved::<Tank>("tank");
}

/// A world with the arena's settings: the saved types, the `(Pos, Vel)` group, `Pos`
/// tracked.
fn new_world() -> World {
    let mut world = World::builder().group::<(Pos, Vel)>().build();
    register(&mut world);
    world.track::<Pos>();
    world
}

/// Records the spawn of one object of random kinds in `commands`; one in four is static (no
/// velocity).
fn spawn_one(world: &World, commands: &mut Commands, rng: &mut Rng) -> (Entity, u8) {
    let kinds = (rng.next() % 16) as u8;
    let e = commands.spawn(
        world.entities(),
        (
            Pos([rng.unit() * 100.0, rng.unit() * 100.0]),
            Life(1.0 + rng.unit() * 4.0),
            Kinds(kinds),
        ),
    );
    if rng.next() % 4 != 0 {
        commands.insert(e, (Vel([rng.unit() - 0.5, rng.unit() - 0.5]),));
    }
    if kinds & BULLET != 0 {
        commands.insert(e, (Bullet,));
    }
    if kinds & LASER != 0 {
        commands.insert(e, (Laser,));
    }
    if kinds & ENEMY != 0 {
        commands.insert(e, (Enemy,));
    }
    if kinds & TANK != 0 {
        commands.insert(e, (Tank,));
    }
    (e, kinds)
}

/// The two subsets, from the tag queries, checked against each object's own record.
fn check_subsets(world: &mut World) -> (usize, usize) {
    let mut hot: Vec<Entity> = world
        .query::<Entity>()
        .with::<Bullet>()
        .with::<Laser>()
        .iter()
        .collect();
    let mut grunts: Vec<Entity> = world
        .query::<Entity>()
        .with::<Enemy>()
        .without::<Tank>()
        .iter()
        .collect();
    let mut want_hot = Vec::new();
    let mut want_grunts = Vec::new();
    world.query::<(Entity, &Kinds)>().for_each(|(e, k)| {
        if k.0 & (BULLET | LASER) == BULLET | LASER {
            want_hot.push(e);
        }
        if k.0 & ENEMY != 0 && k.0 & TANK == 0 {
            want_grunts.push(e);
        }
    });
    for v in [&mut hot, &mut grunts, &mut want_hot, &mut want_grunts] {
        v.sort();
    }
    assert_eq!(hot, want_hot, "bullets AND lasers");
    assert_eq!(grunts, want_grunts, "enemies AND NOT tanks");
    (hot.len(), grunts.len())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (frames, per_frame) = if quick { (60, 50) } else { (600, 400) };
    let mut world = new_world();
    let mut render_sync = QueryState::<(Entity, &Pos), Changed<Pos>>::new();
    let mut uploads = 0usize;
    let mut deletes = 0usize;
    let mut names = KeyNames::new();
    let sheet = DataComponent::from_json(SHEET, &mut names).expect("the sheet is valid JSON");
    // The sheet's key names, so that the world writes its sheets as they were read.
    world.data_names_mut().extend_from(&names);
    let mut rng = Rng(7);
    let mut commands = Commands::new();
    let mut spawned = 0usize;
    let mut expired = 0usize;
    let mut frame_times = Vec::with_capacity(frames);

    for frame in 0..frames {
        let start = Instant::now();
        // Systems run on the shared form and record structural changes.
        let mut new_enemies = Vec::new();
        let mut dying = Vec::new();
        {
            let w = world.share();
            w.query::<(Entity, &mut Life)>().for_each(|(e, life)| {
                life.0 -= 0.05;
                if life.0 <= 0.0 {
                    commands.despawn(e);
                    dying.push(e);
                }
            });
        }
        // Movement: the (Pos, Vel) group, two packed slices in lockstep.
        let moved = {
            let mut movement = world.query::<(&mut Pos, &Vel)>();
            let (pos, vel) = movement.slices().expect("(Pos, Vel) is a group");
            for (p, v) in pos.iter_mut().zip(vel) {
                p.0[0] += v.0[0];
                p.0[1] += v.0[1];
            }
            pos.len()
        };
        for _ in 0..per_frame / 10 {
            let (e, kinds) = spawn_one(&world, &mut commands, &mut rng);
            spawned += 1;
            if kinds & ENEMY != 0 {
                new_enemies.push(e);
            }
        }
        expired += dying.len();
        let dying_moved = dying.iter().filter(|&&e| world.has::<Vel>(e)).count();
        let skipped = world.apply(&mut commands);
        assert_eq!(skipped, 0, "every command found its entity");
        // Render sync: upload what changed since the last sync, delete what went.
        let mut uploaded = 0;
        render_sync.query(&mut world).for_each(|(_, p)| {
            std::hint::black_box(p);
            uploaded += 1;
        });
        let gone = world.removed::<Pos>().len();
        assert_eq!(gone, dying.len(), "every despawn is a delete");
        let spawned_now = per_frame / 10;
        assert_eq!(
            uploaded,
            moved - dying_moved + spawned_now,
            "frame {frame}: uploads are the moved survivors plus the new"
        );
        uploads += uploaded;
        deletes += gone;
        world.maintain();
        for e in new_enemies {
            world.insert_data(e, &sheet).expect("spawned this frame");
        }
        // Hits: every fifth enemy loses health, kept in its sheet.
        let hit: Vec<Entity> = world
            .query::<Entity>()
            .with::<Enemy>()
            .iter()
            .step_by(5)
            .collect();
        for e in hit {
            let health = world.data(e).and_then(|d| d.get_f32("stats.health"));
            if let Some(h) = health {
                world.set_data(e, "stats.health", h - 1.0).unwrap();
            }
        }
        let (hot, grunts) = check_subsets(&mut world);
        frame_times.push(start.elapsed());
        if frame % (frames / 6).max(1) == 0 {
            println!(
                "frame {frame:4}: {:6} alive, {:5} bullets AND lasers, {:5} enemies AND NOT tanks",
                world.len(),
                hot,
                grunts
            );
        }
    }
    world.assert_invariants();
    assert_eq!(world.len(), spawned - expired, "spawned minus expired");
    let data_keys: Vec<Entity> = world.data_store().keys().collect();
    assert!(
        data_keys.iter().all(|&e| world.has::<Enemy>(e)),
        "only live enemies have sheets"
    );

    frame_times.sort();
    let median = frame_times[frame_times.len() / 2];
    let worst = *frame_times.last().unwrap_or(&Duration::ZERO);
    println!(
        "{frames} frames: median {:.1} µs, worst {:.1} µs per frame; {} spawned, {} expired, {} with sheets",
        median.as_secs_f64() * 1e6,
        worst.as_secs_f64() * 1e6,
        spawned,
        expired,
        data_keys.len()
    );
    println!(
        "render sync: {uploads} uploads and {deletes} deletes in all, {:.1} uploads a frame for {} objects",
        uploads as f64 / frames as f64,
        world.len()
    );

    // Save and load: the copy holds the same entities, components and sheets, and spawns next
    // what the original would.
    let json = serde_json::to_string(&world).expect("the world saves");
    let mut loaded = new_world();
    loaded
        .load(&mut serde_json::Deserializer::from_str(&json))
        .expect("the saved world loads");
    loaded.assert_invariants();
    let mut a: Vec<(Entity, Pos, Kinds)> = world
        .query::<(Entity, &Pos, &Kinds)>()
        .iter()
        .map(|(e, p, k)| (e, *p, *k))
        .collect();
    let mut b: Vec<(Entity, Pos, Kinds)> = loaded
        .query::<(Entity, &Pos, &Kinds)>()
        .iter()
        .map(|(e, p, k)| (e, *p, *k))
        .collect();
    a.sort_by_key(|x| x.0);
    b.sort_by_key(|x| x.0);
    assert_eq!(a, b, "the loaded world holds the same objects");
    assert_eq!(check_subsets(&mut loaded), check_subsets(&mut world));
    for &e in &data_keys {
        assert_eq!(
            loaded.data(e).and_then(|d| d.get_f32("stats.health")),
            world.data(e).and_then(|d| d.get_f32("stats.health"))
        );
        // The key names came through the save: a sheet is written back with them.
        let as_json = |w: &World| w.data(e).map(|d| d.to_json(w.data_names()).unwrap());
        assert_eq!(as_json(&loaded), as_json(&world));
        if let Some(text) = as_json(&loaded) {
            assert!(text.contains("\"health\""), "named keys: {text}");
        }
    }
    assert_eq!(
        loaded.spawn(()),
        world.spawn(()),
        "the next spawn is the same"
    );
    println!(
        "saved {} bytes of JSON; the loaded world matches, next spawn included",
        json.len()
    );
}
