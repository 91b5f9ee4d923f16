//! Bones to nodes, from the comments under Bitsquid's ID lookup table: the animation system and
//! the scene graph each own their list of transforms, each in the order that suits it, and a
//! higher-level system copies every bone's transform to its node once per frame. Walking the
//! bones and looking up each node jumps all over the node array; after `nodes.sort_as(&bones)`
//! the nodes that have a bone come first, in the bones' order, and the copy walks both dense
//! slices in lockstep.
//!
//! `cargo run --release --example bones_to_nodes [-- --quick]`

use std::time::{Duration, Instant};

use dod::SparseSet;

/// A 3x4 transform: rotation rows and a translation column.
type Transform = [f32; 12];

/// A small deterministic generator, so every run does the same work.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// The pose the animation system gives bone `e` at `frame`.
fn bone_pose(e: u32, frame: u32) -> Transform {
    let a = frame as f32 * 0.05 + e as f32 * 0.001;
    let (s, c) = a.sin_cos();
    [
        c,
        -s,
        0.0,
        e as f32, //
        s,
        c,
        0.0,
        frame as f32, //
        0.0,
        0.0,
        1.0,
        0.5,
    ]
}

/// Where the scene graph puts node `e` when nothing animates it.
fn rest_pose(e: u32) -> Transform {
    let mut t = [0.0; 12];
    t[0] = 1.0;
    t[5] = 1.0;
    t[10] = 1.0;
    t[3] = -(e as f32);
    t
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Every node holds its bone's pose at `frame` if it has a bone, its rest pose otherwise:
/// checked entity by entity against `is_bone`, which the sets never saw.
fn check_nodes(nodes: &SparseSet<Transform>, is_bone: &[bool], frame: u32) {
    assert_eq!(nodes.len(), is_bone.len());
    for (e, &bone) in is_bone.iter().enumerate() {
        let e = e as u32;
        let want = if bone {
            bone_pose(e, frame)
        } else {
            rest_pose(e)
        };
        assert_eq!(nodes[e], want, "node {e} after the copy of frame {frame}");
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (node_count, bone_count, reps) = if quick {
        (20_000u32, 2_500usize, 15)
    } else {
        (400_000u32, 50_000usize, 31)
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let us = |d: Duration| d.as_secs_f64() * 1e6;

    // The scene graph holds every entity, in its own order (say, the order nodes were loaded).
    let mut node_order: Vec<u32> = (0..node_count).collect();
    rng.shuffle(&mut node_order);
    let mut nodes: SparseSet<Transform> = SparseSet::with_capacity(node_count as usize);
    for &e in &node_order {
        nodes.insert(e, rest_pose(e));
    }
    // The animation system holds the skinned entities only, in yet another order.
    let mut bone_order = node_order.clone();
    rng.shuffle(&mut bone_order);
    bone_order.truncate(bone_count);
    let mut is_bone = vec![false; node_count as usize];
    let mut bones: SparseSet<Transform> = SparseSet::with_capacity(bone_count);
    for &e in &bone_order {
        is_bone[e as usize] = true;
        bones.insert(e, bone_pose(e, 0));
    }
    println!(
        "{node_count} nodes, {bone_count} of them animated by bones; {} bytes per transform",
        std::mem::size_of::<Transform>()
    );

    // The two orders disagree, so walking the slices side by side would pair the wrong ones.
    assert_ne!(&nodes.indices()[..bone_count], bones.indices());

    let mut frame = 0;
    let mut animate = |bones: &mut SparseSet<Transform>| {
        frame += 1;
        for (e, tm) in bones.iter_mut() {
            *tm = bone_pose(e, frame);
        }
        frame
    };

    // Before: walk the bones, look up each one's node.
    let mut times = Vec::with_capacity(reps);
    let mut last = 0;
    for _ in 0..reps {
        last = animate(&mut bones);
        let start = Instant::now();
        for (_, node, bone) in nodes.join_mut(&bones) {
            *node = *bone;
        }
        times.push(start.elapsed());
    }
    check_nodes(&nodes, &is_bone, last);
    let lookup = median(times);
    println!(
        "copy with a lookup per bone:     median {:9.1} us of {reps}",
        us(lookup)
    );

    // Sort the nodes against the bones: shared entities first, in the bones' order.
    let start = Instant::now();
    nodes.sort_as(&bones);
    let sort = start.elapsed();
    assert_eq!(
        &nodes.indices()[..bone_count],
        bones.indices(),
        "after sort_as the nodes start with the bones, in the bones' order"
    );
    // Sorting moved whole entries: every node still holds its own transform.
    check_nodes(&nodes, &is_bone, last);
    println!(
        "nodes.sort_as(&bones):                  {:9.1} us, once",
        us(sort)
    );

    // After: both dense slices in lockstep, no lookup at all.
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        last = animate(&mut bones);
        let start = Instant::now();
        for (node, bone) in nodes.values_mut()[..bone_count]
            .iter_mut()
            .zip(bones.values())
        {
            *node = *bone;
        }
        times.push(start.elapsed());
    }
    check_nodes(&nodes, &is_bone, last);
    let lockstep = median(times);
    println!(
        "copy in lockstep after sort_as:  median {:9.1} us of {reps}",
        us(lockstep)
    );
    println!(
        "lockstep is {:.1}x the speed of the lookups; every node checked after both",
        lookup.as_secs_f64() / lockstep.as_secs_f64().max(1e-9)
    );
}
