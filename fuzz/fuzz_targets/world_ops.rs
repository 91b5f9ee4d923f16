//! Random programs against a `World` and the naive model of the world's model test
//! (`crates/dod-world/tests/world_model.rs`, included below): the same operations and the same
//! checks after every step, read from fuzz bytes instead of proptest, on a world set up with
//! owning groups, tracked types and hooks as a byte of the input says (`world_model::Setup`);
//! and arbitrary bytes loaded as a saved world (an error, or a valid world that works).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../crates/dod-world/tests/world_model.rs"]
mod world_model;

use world_model::{Bun, Cmd, Kind, Op, Setup, Target, KINDS};

/// The most steps a program runs, so that every input stays quick.
const MAX_OPS: usize = 160;

/// An entity choice: see `world_model::Target`.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct FTarget(u8, u16);

/// A bundle: a set of component types (a bit each) and a seed for the values.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct FBun(u8, u32);

#[derive(Arbitrary, Debug)]
enum FCmd {
    Spawn(FBun),
    SpawnUnnamed(FBun),
    Insert(FTarget, FBun),
    Remove(FTarget, u8),
    Despawn(FTarget),
    Push(FTarget, FBun),
}

/// One step; each maps onto `world_model::Op`.
#[derive(Arbitrary, Debug)]
enum FOp {
    Spawn(FBun),
    SpawnBatch(u8, Vec<u32>, Option<u8>),
    Despawn(FTarget),
    DespawnBatch(Vec<FTarget>),
    Insert(FTarget, FBun),
    Remove(FTarget, u8),
    Take(FTarget, u8, u8),
    ViaEntity(FTarget, u8, u32),
    MutQuery(u8, u8, FTarget),
    Commands(Vec<FCmd>),
    Reserve(u8, u8, FBun),
    Clear,
    SetData(FTarget, u8, u32),
    InsertData(FTarget, Vec<(u8, u32)>),
    RemoveData(FTarget),
    RemoveDataKey(FTarget, u8),
    SaveLoad(u8, FBun),
    LoadMutated(Vec<(u16, u8)>),
    LoadBytes(Vec<u8>),
    PanicDrop(FTarget, u8, FBun),
    PanicQuery(u8, u8),
    PanicBatch(u8, Vec<u32>, u8, bool),
    Group(u8),
    Track(u8),
    RunState(u8, u8, FTarget),
    ResetState(u8),
    Maintain,
    SetTick(u32),
    SortGroup(u8, bool),
    SliceWrite(u8),
    ShrinkToFit,
}

fn target(t: FTarget) -> Target {
    Target { which: t.0, n: t.1 }
}

fn bun(b: FBun) -> Bun {
    Bun::new(b.0, b.1)
}

fn kind(k: u8) -> Kind {
    KINDS[usize::from(k) % KINDS.len()]
}

fn cmd(c: FCmd) -> Cmd {
    match c {
        FCmd::Spawn(b) => Cmd::Spawn(bun(b)),
        FCmd::SpawnUnnamed(b) => Cmd::SpawnUnnamed(bun(b)),
        FCmd::Insert(t, b) => Cmd::Insert(target(t), bun(b)),
        FCmd::Remove(t, k) => Cmd::Remove(target(t), kind(k)),
        FCmd::Despawn(t) => Cmd::Despawn(target(t)),
        FCmd::Push(t, b) => Cmd::Push(target(t), bun(b)),
    }
}

fn op(o: FOp) -> Op {
    match o {
        FOp::Spawn(b) => Op::Spawn(bun(b)),
        FOp::SpawnBatch(mask, mut seeds, take) => {
            seeds.truncate(16);
            Op::SpawnBatch { mask, seeds, take }
        }
        FOp::Despawn(t) => Op::Despawn(target(t)),
        FOp::DespawnBatch(ts) => Op::DespawnBatch(ts.into_iter().take(24).map(target).collect()),
        FOp::Insert(t, b) => Op::Insert(target(t), bun(b)),
        FOp::Remove(t, k) => Op::Remove(target(t), kind(k)),
        FOp::Take(t, a, b) => Op::Take(target(t), kind(a), kind(b)),
        FOp::ViaEntity(t, how, v) => Op::ViaEntity(target(t), how, v),
        FOp::MutQuery(shape, form, t) => Op::MutQuery {
            shape,
            form,
            target: target(t),
        },
        FOp::Commands(cs) => Op::Commands(cs.into_iter().take(16).map(cmd).collect()),
        FOp::Reserve(n, how, b) => Op::Reserve {
            n,
            how,
            bun: bun(b),
        },
        FOp::Clear => Op::Clear,
        FOp::SetData(t, k, seed) => Op::SetData(target(t), k, seed),
        FOp::InsertData(t, es) => Op::InsertData(target(t), es),
        FOp::RemoveData(t) => Op::RemoveData(target(t)),
        FOp::RemoveDataKey(t, k) => Op::RemoveDataKey(target(t), k),
        FOp::SaveLoad(how, b) => Op::SaveLoad(how, bun(b)),
        FOp::LoadMutated(changes) => Op::LoadMutated(changes),
        FOp::LoadBytes(bytes) => Op::LoadBytes(bytes),
        FOp::PanicDrop(t, how, b) => Op::PanicDrop(target(t), how, bun(b)),
        FOp::PanicQuery(form, after) => Op::PanicQuery { form, after },
        FOp::PanicBatch(mask, mut seeds, at, walk) => {
            seeds.truncate(16);
            Op::PanicBatch {
                mask,
                seeds,
                at,
                walk,
            }
        }
        FOp::Group(n) => Op::Group(n),
        FOp::Track(k) => Op::Track(kind(k)),
        FOp::RunState(which, form, t) => Op::RunState {
            which,
            form,
            target: target(t),
        },
        FOp::ResetState(n) => Op::ResetState(n),
        FOp::Maintain => Op::Maintain,
        FOp::SetTick(v) => Op::SetTick(v),
        FOp::SortGroup(n, up) => Op::SortGroup(n, up),
        FOp::SliceWrite(n) => Op::SliceWrite(n),
        FOp::ShrinkToFit => Op::ShrinkToFit,
    }
}

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        // The rest of the input is a saved world, as text.
        Some((0, bytes)) => world_model::run(0, Setup(0), &[Op::LoadBytes(bytes.to_vec())]),
        Some((&min_free, rest)) => {
            // The next byte sets the world up: groups, tracked types, hooks, the counter.
            let (setup, rest) = rest.split_first().map_or((0, rest), |(&s, r)| (s, r));
            let mut u = Unstructured::new(rest);
            let mut ops = Vec::new();
            while ops.len() < MAX_OPS {
                match FOp::arbitrary(&mut u) {
                    Ok(o) => ops.push(op(o)),
                    Err(_) => break,
                }
                if u.is_empty() {
                    break;
                }
            }
            world_model::run(u32::from(min_free % 3), Setup(setup), &ops);
        }
        None => {}
    }
});
