//! Bullets and lasers, from the article on alive flags in packed bitfields: game objects live in
//! a `Pool` (they never move, so a slot index names one for as long as it lives), and beside it
//! one `BitSet` per type of object, indexed by slot. Subsets such as "bullets AND lasers" or
//! "enemies NOT tanks" are lazy expressions over those sets and the pool's alive flags, walked
//! word by word without touching the objects that are not in them.
//!
//! Objects spawn and expire every frame; the type masks are kept in step (bits set on spawn,
//! cleared on removal), and every query is checked against a plain filter over the pool's
//! items, each of which records its own types.
//!
//! `cargo run --release --example bullets_and_lasers [-- --quick]`

use std::time::{Duration, Instant};

use dod::{BitSet, Bits, Pool};

const BULLET: u8 = 1;
const LASER: u8 = 2;
const ENEMY: u8 = 4;
const TANK: u8 = 8;

struct Object {
    /// The object's own record of its types, for checking the masks.
    kinds: u8,
    life: f32,
    vel: [f32; 2],
    /// A 4x4 transform as in the article's `Matrix44`; the translation is `[12..14]`.
    transform: [f32; 16],
}

/// One mask per type, indexed by the pool's slot index.
#[derive(Default)]
struct Masks {
    bullets: BitSet,
    lasers: BitSet,
    enemies: BitSet,
    tanks: BitSet,
}

impl Masks {
    fn each(&mut self) -> [(u8, &mut BitSet); 4] {
        [
            (BULLET, &mut self.bullets),
            (LASER, &mut self.lasers),
            (ENEMY, &mut self.enemies),
            (TANK, &mut self.tanks),
        ]
    }

    fn spawned(&mut self, slot: u32, kinds: u8) {
        for (kind, mask) in self.each() {
            // The slot may have held another object: its bits were cleared when it went.
            assert!(!mask.contains(slot), "a reused slot starts with clear bits");
            if kinds & kind != 0 {
                mask.insert(slot);
            }
        }
    }

    fn removed(&mut self, slot: u32) {
        for (_, mask) in self.each() {
            mask.remove(slot);
        }
    }
}

/// A small deterministic generator, so every run does the same work.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn spawn(rng: &mut Rng) -> Object {
    let kinds = match rng.next() % 100 {
        0..35 => BULLET,
        35..50 => BULLET | LASER, // laser bullets
        50..60 => LASER,          // beams
        60..80 => ENEMY,
        80..90 => ENEMY | TANK,
        _ => TANK, // our own tanks
    };
    let mut transform = [0.0; 16];
    for d in [0, 5, 10, 15] {
        transform[d] = 1.0;
    }
    transform[12] = rng.unit() * 100.0;
    transform[13] = rng.unit() * 100.0;
    Object {
        kinds,
        life: 0.1 + rng.unit() * 0.9,
        vel: [rng.unit() - 0.5, rng.unit() - 0.5],
        transform,
    }
}

/// What a system does with each object of a subset: here, note its slot and sum where they are.
#[derive(Default, PartialEq, Debug)]
struct Visit {
    slots: Vec<u32>,
    x_sum: f32,
}

impl Visit {
    fn add(&mut self, slot: u32, o: &Object) {
        self.slots.push(slot);
        self.x_sum += o.transform[12];
    }
}

/// Visits the objects of `subset`, a lazy expression: only their words of flags and the
/// objects themselves are read.
fn visit_mask(pool: &Pool<Object>, subset: impl Bits, out: &mut Visit) {
    out.slots.clear();
    out.x_sum = 0.0;
    // A set alive flag means the slot holds an object.
    subset.for_each(|i| out.add(i, pool.get_at(i).unwrap()));
}

/// The reference: every object, kept if its own record says it has the types `want` and
/// none of `unwanted`.
fn visit_filter(pool: &Pool<Object>, want: u8, unwanted: u8, out: &mut Visit) {
    out.slots.clear();
    out.x_sum = 0.0;
    for (key, o) in pool.iter() {
        if o.kinds & want == want && o.kinds & unwanted == 0 {
            out.add(key.index(), o);
        }
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (frames, per_frame) = if quick { (60, 300) } else { (600, 2_000) };
    let dt = 1.0 / 60.0;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut pool: Pool<Object> = Pool::new();
    let mut masks = Masks::default();
    let mut laser_bullets = Visit::default();
    let mut enemies_not_tanks = Visit::default();
    let mut check = [Visit::default(), Visit::default()];
    let (mut frame_times, mut mask_times, mut filter_times) = (vec![], vec![], vec![]);
    let (mut spawned, mut despawned) = (0usize, 0usize);

    println!(
        "{frames} frames, {per_frame} objects spawned per frame, {} bytes per object",
        std::mem::size_of::<Object>()
    );
    for frame in 1..=frames {
        let start = Instant::now();
        for _ in 0..per_frame {
            let o = spawn(&mut rng);
            let kinds = o.kinds;
            let key = pool.insert(o);
            masks.spawned(key.index(), kinds);
        }
        spawned += per_frame;
        for o in pool.values_mut() {
            o.transform[12] += o.vel[0] * dt;
            o.transform[13] += o.vel[1] * dt;
            o.life -= dt;
        }
        // Tanks are heavy: damp only their velocity, through their mask.
        let mut damped = 0;
        for (_, o) in pool.iter_mut_in(&masks.tanks) {
            assert!(o.kinds & TANK != 0, "the tank mask selects tanks only");
            o.vel = [o.vel[0] * 0.99, o.vel[1] * 0.99];
            damped += 1;
        }
        assert_eq!(damped, masks.tanks.count(), "every live tank damped once");
        pool.retain(|key, o| {
            let keep = o.life > 0.0;
            if !keep {
                masks.removed(key.index());
                despawned += 1;
            }
            keep
        });

        // The queries: lazy expressions over the alive flags and the type masks.
        let queries = Instant::now();
        visit_mask(
            &pool,
            pool.alive().and(&masks.bullets).and(&masks.lasers),
            &mut laser_bullets,
        );
        visit_mask(
            &pool,
            pool.alive().and(&masks.enemies).and_not(&masks.tanks),
            &mut enemies_not_tanks,
        );
        mask_times.push(queries.elapsed());
        frame_times.push(start.elapsed());

        // The check: the same subsets by a plain filter over every item.
        let filter = Instant::now();
        visit_filter(&pool, BULLET | LASER, 0, &mut check[0]);
        visit_filter(&pool, ENEMY, TANK, &mut check[1]);
        filter_times.push(filter.elapsed());
        assert_eq!(laser_bullets, check[0], "frame {frame}: bullets AND lasers");
        assert_eq!(
            enemies_not_tanks, check[1],
            "frame {frame}: enemies NOT tanks"
        );
        assert!(!laser_bullets.slots.is_empty() && !enemies_not_tanks.slots.is_empty());

        // The masks hold live slots only, and every live object is in at least one.
        for mask in [&masks.bullets, &masks.lasers, &masks.enemies, &masks.tanks] {
            assert!(
                mask.and_not(pool.alive()).is_empty(),
                "a mask outlived its object"
            );
        }
        let typed = masks
            .bullets
            .or(&masks.lasers)
            .or(&masks.enemies)
            .or(&masks.tanks);
        assert_eq!(typed.count(), pool.len(), "every object has a type");

        if frame % (frames / 6) == 0 {
            println!(
                "frame {frame:4}: {:6} alive in {:6} slots, {:5} laser bullets, \
                 {:5} enemies that are not tanks",
                pool.len(),
                pool.slot_count(),
                laser_bullets.slots.len(),
                enemies_not_tanks.slots.len()
            );
        }
    }

    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1e6
    };
    println!(
        "{spawned} spawned, {despawned} expired, {} alive at the end",
        pool.len()
    );
    assert_eq!(spawned - despawned, pool.len());
    assert!(
        pool.slot_count() < spawned,
        "expired objects' slots were reused"
    );
    println!(
        "per frame (median): {:.1} us in all, {:.1} us of it for both queries by mask; \
         the same two by a filter over every item: {:.1} us",
        median(&mut frame_times),
        median(&mut mask_times),
        median(&mut filter_times)
    );
}
