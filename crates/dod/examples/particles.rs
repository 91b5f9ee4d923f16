//! Particles: thousands spawned and despawned every frame in a `HandleMap`, updated by walking
//! the dense slice, while another system (say, audio) holds handles to a few of them and finds
//! out, through stale handles, which ones are gone.
//!
//! `cargo run --release --example particles [-- --quick]`

use std::collections::HashSet;
use std::time::{Duration, Instant};

use dod::{Handle, HandleMap};

struct Particle {
    pos: [f32; 2],
    vel: [f32; 2],
    life: f32,
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

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (frames, spawn) = if quick { (60, 500) } else { (600, 2_000) };
    let dt = 1.0 / 60.0;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut particles: HandleMap<Particle> = HandleMap::with_capacity(spawn * 120);
    // The audio system follows one particle in fifty by handle.
    let mut followed: Vec<Handle> = Vec::new();
    let mut despawned: HashSet<Handle> = HashSet::new();
    let (mut found, mut refused) = (0usize, 0usize);
    let mut times = Vec::with_capacity(frames);

    for _ in 0..frames {
        let start = Instant::now();
        for _ in 0..spawn {
            let h = particles.insert(Particle {
                pos: [0.0, 0.0],
                vel: [rng.unit() - 0.5, rng.unit() * 2.0],
                life: 0.5 + rng.unit() * 1.5,
            });
            if rng.next() % 50 == 0 {
                followed.push(h);
            }
        }
        // The particle system walks the dense slice: no handles, no holes.
        for p in particles.values_mut() {
            p.pos[0] += p.vel[0] * dt;
            p.pos[1] += p.vel[1] * dt;
            p.vel[1] -= 9.81 * dt;
            p.life -= dt;
        }
        particles.retain(|h, p| {
            let alive = p.life > 0.0;
            if !alive {
                despawned.insert(h);
            }
            alive
        });
        // The audio system looks up what it follows; stale handles are refused, never wrong.
        followed.retain(|&h| match particles.get(h) {
            Some(p) => {
                assert!(p.life > 0.0, "a live handle resolves to a live particle");
                found += 1;
                true
            }
            None => {
                assert!(
                    despawned.contains(&h),
                    "only despawned particles are refused"
                );
                refused += 1;
                false
            }
        });
        times.push(start.elapsed());
    }

    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{frames} frames, {spawn} particles spawned per frame, {} alive at the end",
        particles.len()
    );
    println!(
        "frame time: median {:.3} ms, worst {:.3} ms",
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
    println!("lookups by handle: {found} found, {refused} stale handles refused");
    assert!(refused > 0 && found > 0);
    assert_eq!(
        particles.len() + despawned.len(),
        frames * spawn,
        "every particle is either alive or was despawned exactly once"
    );
}
