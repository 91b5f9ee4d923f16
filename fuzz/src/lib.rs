//! The operations every fuzz target draws from. One enum serves all containers: each target
//! reads the variants that mean something for its container and skips the rest, and checks the
//! container against a std model after every step.

use arbitrary::Arbitrary;

/// One step of a random program run against a container and its model.
///
/// `pick` fields choose among every key the program has seen so far (live or stale), so stale
/// keys are exercised as often as live ones; `bits` fields forge raw keys.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// Insert a value.
    Insert(u16),
    /// Insert several values at once.
    InsertMany(Vec<u16>),
    /// Remove the item of a seen key.
    Remove(u16),
    /// Remove the items of several seen keys at once (repeats and stale keys allowed).
    RemoveMany(Vec<u16>),
    /// Look up a seen key.
    Get(u16),
    /// Look up a forged key.
    GetForged(u64),
    /// Overwrite the value of a seen key.
    Set(u16, u16),
    /// Keep the items whose value is not divisible by the modulus.
    Retain(u8),
    /// Remove everything; every key goes stale.
    Clear,
    /// Remove everything the fast way; every key still goes stale.
    Reset,
    /// Sort the items by value.
    Sort,
    /// Sort by value incrementally, with this many moves at most.
    Defragment(u8),
    /// Reserve room.
    Reserve(u8),
    /// Release unused room.
    ShrinkToFit,
    /// Serialise and deserialise the whole container.
    RoundTrip,
}
