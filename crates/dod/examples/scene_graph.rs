//! A scene graph: nodes with parent handles in a `HandleMap`. The transform pass walks the dense
//! slice once, which is only correct when every parent comes before its children. A budgeted
//! `defragment` each frame moves the nodes towards that order (by depth) without a long pause,
//! and the pass gets faster as the order converges.
//!
//! `cargo run --release --example scene_graph [-- --quick]`

use std::time::Instant;

use dod::{Handle, HandleMap};

#[derive(Clone)]
struct Node {
    parent: Option<Handle>,
    depth: u32,
    local: [f32; 2],
    world: [f32; 2],
    /// A stand-in for the rest of a node (bounds, flags, names): 64 bytes in all.
    _rest: [u64; 5],
}

fn by_depth(a: &Node, b: &Node) -> std::cmp::Ordering {
    a.depth.cmp(&b.depth)
}

/// One pass over the dense slice: each node's world position from its parent's.
fn transform_pass(nodes: &mut HandleMap<Node>) {
    for i in 0..nodes.len() {
        let parent = nodes.values()[i].parent;
        let base = parent.map_or([0.0, 0.0], |p| nodes[p].world);
        let n = &mut nodes.values_mut()[i];
        n.world = [base[0] + n.local[0], base[1] + n.local[1]];
    }
}

/// The reference: world positions by walking up the tree.
fn world_of(nodes: &HandleMap<Node>, mut h: Handle) -> [f32; 2] {
    let mut w = [0.0f32, 0.0];
    let mut chain = Vec::new();
    loop {
        let n = &nodes[h];
        chain.push(n.local);
        match n.parent {
            Some(p) => h = p,
            None => break,
        }
    }
    for l in chain.iter().rev() {
        w = [w[0] + l[0], w[1] + l[1]];
    }
    w
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (count, budget) = if quick {
        (5_000, 250)
    } else {
        (100_000, 2_000)
    };
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };

    let mut nodes: HandleMap<Node> = HandleMap::with_capacity(count);
    let mut handles: Vec<Handle> = Vec::with_capacity(count);
    for i in 0..count {
        // A bushy tree: each node's parent is one of the nodes made before it.
        let parent = (i > 0).then(|| handles[(rand() % i as u64) as usize]);
        let depth = parent.map_or(0, |p| nodes[p].depth + 1);
        let local = [(rand() % 100) as f32, (rand() % 100) as f32];
        handles.push(nodes.insert(Node {
            parent,
            depth,
            local,
            world: [0.0; 2],
            _rest: [0; 5],
        }));
    }
    // Years of edits later: the dense order is scrambled.
    nodes.sort_by_key(|n| (n.local[0] as u32).wrapping_mul(2_654_435_761) ^ n.depth);
    // That sort used another order than the one defragment will keep: say so.
    nodes.mark_fragmented();

    println!("{count} nodes, defragment budget {budget} moves per frame");
    let mut frame = 0;
    loop {
        let moves = nodes.defragment(by_depth, budget);
        // Read before the pass: the pass writes the nodes, after which the map no longer
        // vouches for their order until the next defragment call checks it again.
        let converged = !nodes.is_fragmented();
        let start = Instant::now();
        transform_pass(&mut nodes);
        let pass = start.elapsed();
        if frame % 10 == 0 || converged {
            println!(
                "frame {frame:4}: {moves:5} moves, transform pass {:.3} ms{}",
                pass.as_secs_f64() * 1e3,
                if converged {
                    "  (parents precede children)"
                } else {
                    ""
                }
            );
        }
        frame += 1;
        if converged {
            break;
        }
        assert!(frame <= count, "defragment converges");
    }
    // The claims: every parent precedes its children, and one pass computed every world
    // position correctly.
    for (i, n) in nodes.values().iter().enumerate() {
        if let Some(p) = n.parent {
            assert!(nodes.get_index_of(p).unwrap() < i, "parent after child");
        }
    }
    for &h in handles.iter().step_by(97) {
        assert_eq!(nodes[h].world, world_of(&nodes, h));
    }
    println!("converged after {frame} frames; one pass gives every world position");
}
