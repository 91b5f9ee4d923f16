//! Cache hints for code that knows its next random accesses ahead.
//!
//! The containers' own hints ([`SparseSet::prefetch`](crate::SparseSet::prefetch)) are built
//! on [`prefetch`]; it is public for the structures a program keeps beside them (an entity
//! allocator's slots, say).

/// Asks the CPU to start loading the cache line that holds `value`, so that a read or write
/// of it a little later does not wait for memory. A hint: it changes nothing the program can
/// observe. It is a `prefetcht0` on x86_64 and does nothing on other targets (and under Miri).
///
/// Worth it only where the next target is known well before it is used and is likely not
/// in the cache: a loop over a free list, a batch of entities about to be looked up.
///
/// ```
/// let slots = vec![0u32; 1 << 20];
/// dod::hint::prefetch(&slots[123_456]);
/// assert_eq!(slots[123_456], 0);
/// ```
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` reads nothing the program sees and never faults (here the address
    // is even that of a live value); `sse`, which provides it, is part of the x86_64
    // baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = value;
}

/// `b`, with the hint that it is rarely true: the code it guards is laid out off the path
/// taken when it is false. (It stands in for `core::hint::cold_path`, which is newer than the
/// crate's minimum Rust version.)
#[inline(always)]
pub(crate) fn unlikely(b: bool) -> bool {
    if b {
        cold();
    }
    b
}

/// Marks the path that calls it as rarely taken (for [`unlikely`]).
#[cold]
#[inline(always)]
fn cold() {}
