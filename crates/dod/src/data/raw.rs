//! The component format: one byte buffer, header growing up from the start, value records
//! growing down from the end, sharing the free space between them. Offsets, never pointers.
//!
//! ```text
//! offset        size  field
//! 0             4     magic "DODc"
//! 4             2     format version (1), little-endian like every field
//! 6             2     key hash id (1: the FNV-1a path hash of `DataKey`)
//! 8             4     n: number of entries
//! 12            4     values_start: lowest byte of the value area (== buffer length if empty)
//! 16            4n    keys, strictly increasing
//! 16 + 4n       4n    32-bit values: bool (0 or 1), f32 bits, or the offset of a record
//! 16 + 8n       n     type tags (ValueType: 0 bool, 1 f32, 2 string, 3 float array,
//!                     4 integer)
//! 16 + 9n       ..    free space
//! values_start  ..    records: u32 count, then count UTF-8 bytes (string) or count
//!                     little-endian f32 (float array); or 8 bytes, a little-endian i64
//!                     (integer); holes between them
//! ```
//!
//! Invariants (checked by [`validate`], kept by every writer): the buffer is at most
//! `u32::MAX` bytes; `16 + 9n <= values_start <= len`; keys strictly increasing; tags valid;
//! booleans 0 or 1; every record lies inside `values_start..len`, holds valid UTF-8 if it is a
//! string, and no two records overlap.
//!
//! Readers use checked slicing and answer `None` on anything inconsistent, so even a buffer
//! that broke the invariants could not make them panic. Writers run only on buffers that keep
//! the invariants (built here or validated).
//!
//! `decode` and, on x86-64, the `sse2` module opt in to `unsafe`. `decode` skips re-checking
//! UTF-8 when a string is read: every buffer a reader sees was validated or written from a
//! `&str` here, and is borrowed immutably while it is read. It made string gets measurably
//! faster in the `data` report. `sse2` compares a lookup's key with sixteen keys in four SSE2
//! compares (intrinsics, callable only from `unsafe`): in the `data` report a random get
//! measured 0.83–0.88x an `FxHashMap`'s with it, 1.04–1.09x with the ordered search it
//! replaced.

use super::value::{Floats, Value, ValueType};
use super::{DataKey, DecodeError};

pub(crate) const MAGIC: [u8; 4] = *b"DODc";
pub(crate) const VERSION: u16 = 1;
pub(crate) const HASH_ID: u16 = 1;
pub(crate) const HEADER: usize = 16;
/// Header bytes per entry: key, value, tag.
pub(crate) const ENTRY: usize = 9;

/// The bytes of an empty component with no free space.
pub(crate) const EMPTY: [u8; HEADER] =
    [b'D', b'O', b'D', b'c', 1, 0, 1, 0, 0, 0, 0, 0, 16, 0, 0, 0];

#[inline]
pub(crate) fn rd32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

#[inline]
fn wr32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Entry count (0 if the header cannot be read).
#[inline]
pub(crate) fn count(b: &[u8]) -> usize {
    rd32(b, 8).map_or(0, |n| n as usize)
}

#[inline]
fn values_start(b: &[u8]) -> usize {
    rd32(b, 12).map_or(b.len(), |v| v as usize)
}

/// Writes an empty header into `b` (`b.len() >= HEADER`): every byte past it is free.
pub(crate) fn init(b: &mut [u8]) {
    b[..HEADER].copy_from_slice(&EMPTY);
    let len = b.len() as u32;
    wr32(b, 12, len);
}

/// The index of `key`, or where it would be inserted.
#[inline]
pub(crate) fn find(b: &[u8], key: DataKey) -> Result<usize, usize> {
    let n = count(b);
    if table(b, n, 4).is_none() {
        return Err(0);
    }
    position(b, n, key.to_raw())
}

/// The first `n` entries' bytes from the header's end, `width` bytes each: the keys (4) or
/// the whole entry table ([`ENTRY`]), if `b` holds them. The bounds are checked, so a count
/// read from corrupted bytes gives `None`, never an overflow.
#[inline]
fn table(b: &[u8], n: usize, width: usize) -> Option<&[u8]> {
    b.get(HEADER..HEADER.checked_add(n.checked_mul(width)?)?)
}

/// Bit `j` set iff `test` holds for little-endian word `j` of `wide`: one pass with no branch
/// and no loop to leave, which the compiler unrolls into a few vector instructions. Over
/// `chunks_exact`, not `words`: through that adapter the compiler leaves the loop scalar, and
/// a get measured 1.4x its time.
#[inline(always)]
fn word_mask(wide: &[u8], test: impl Fn(u32) -> bool) -> u32 {
    let mut mask = 0u32;
    for (j, c) in wide.chunks_exact(4).enumerate() {
        mask |= u32::from(test(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))) << j;
    }
    mask
}

/// Most entries [`position`] counts the smaller keys of in one fixed pass.
const WIDE: usize = 16;

/// The index of key `k` among the `n` keys of `b` (`HEADER + 4n <= b.len()`), or where it
/// would be inserted.
#[inline(always)]
fn position(b: &[u8], n: usize, k: u32) -> Result<usize, usize> {
    let below = match b.get(HEADER..HEADER + 4 * WIDE) {
        // A component of at most WIDE entries in a buffer that holds WIDE keys' worth of
        // bytes, the common case: a bit for each of WIDE words that is below `k`. The keys
        // are sorted, so the first clear bit is the first key not below `k`; the words past
        // the n keys are other bytes of the buffer, and bit n is set so that none of them
        // counts.
        Some(wide) if n <= WIDE => {
            let below = word_mask(wide, |x| x < k);
            (!below | 1 << n).trailing_zeros() as usize
        }
        _ => return search(&b[HEADER..HEADER + 4 * n], n, k),
    };
    if below < n && rd32(b, HEADER + 4 * below) == Some(k) {
        Ok(below)
    } else {
        Err(below)
    }
}

/// Branch-free binary search over `n` little-endian keys (`keys.len() == 4 * n`).
///
/// Every `u32` is a possible key, `u32::MAX` included: `at` reads only positions below `n`,
/// and its `u32::MAX` for a position past the end is never compared with `k`.
#[inline]
fn search(keys: &[u8], n: usize, k: u32) -> Result<usize, usize> {
    let at = |i: usize| -> u32 {
        keys.get(4 * i..4 * i + 4)
            .map_or(u32::MAX, |c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    };
    if n == 0 {
        return Err(0);
    }
    if n <= 32 {
        // Small components, the common case: count the smaller keys in one pass the compiler
        // vectorises, with no branch on the data.
        let below = keys
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .fold(0usize, |acc, x| acc + usize::from(x < k));
        return if below < n && at(below) == k {
            Ok(below)
        } else {
            Err(below)
        };
    }
    let (mut base, mut size) = (0usize, n);
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        // Compiles to a conditional move: no branch to mispredict.
        base = if at(mid) <= k { mid } else { base };
        size -= half;
    }
    // `base < n`: it starts at 0 and only ever takes a `mid < n`.
    let found = at(base);
    if found == k {
        Ok(base)
    } else {
        Err(base + usize::from(found < k))
    }
}

/// The index of key `k` among the `n` keys of `b` (`HEADER + 4n <= b.len()`), if it is there.
///
/// Its common case reads WIDE words at once, as [`position`]'s does; a lookup needs no
/// insertion point, so it compares them for equality: a bit for each word equal to `k`,
/// masked to the `n` keys (the other words are other bytes of the buffer), whose lowest set
/// bit is the index (keys are distinct).
///
/// Any `n` and `b` give an answer, never a panic: the keys are sliced with checked bounds.
#[inline(always)]
fn index_of(b: &[u8], n: usize, k: u32) -> Option<usize> {
    match b.get(HEADER..HEADER + 4 * WIDE) {
        Some(wide) if n <= WIDE => {
            let wide: &[u8; 4 * WIDE] = wide.try_into().ok()?;
            let equal = equal_mask(wide, k) & ((1u32 << n) - 1);
            (equal != 0).then(|| equal.trailing_zeros() as usize)
        }
        _ => search(table(b, n, 4)?, n, k).ok(),
    }
}

/// Bit `j` set iff little-endian word `j` of `wide` is `k`.
#[inline(always)]
fn equal_mask(wide: &[u8; 4 * WIDE], k: u32) -> u32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        sse2::equal_mask(wide, k)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        equal_mask_portable(wide, k)
    }
}

/// [`equal_mask`] on any processor.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline(always)]
fn equal_mask_portable(wide: &[u8; 4 * WIDE], k: u32) -> u32 {
    word_mask(wide, |x| x == k)
}

/// [`equal_mask`] in four compares of four words and four mask extractions. The compiler
/// turns the portable loop into three vector compares, four scalar ones and a scalar
/// reduction of the vector bits.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use super::WIDE;
    use core::arch::x86_64::{
        __m128i, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps,
        _mm_set1_epi32,
    };

    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn equal_mask(wide: &[u8; 4 * WIDE], k: u32) -> u32 {
        // SAFETY: the crate is compiled with SSE2 enabled (the `cfg` above), so the processor
        // that runs it has SSE2; the callee reads only its arguments.
        unsafe { with_sse2(wide, k) }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    #[allow(unsafe_code)]
    fn with_sse2(wide: &[u8; 4 * WIDE], k: u32) -> u32 {
        // SAFETY: the function enables SSE2, which every intrinsic here needs (before Rust
        // 1.87 the value-only ones are `unsafe` to call even so); the load reads `four`, 16
        // readable bytes, and an unaligned load needs no alignment.
        unsafe {
            let k = _mm_set1_epi32(k as i32);
            let mut equal = 0u32;
            for (q, four) in wide.chunks_exact(16).enumerate() {
                let words = _mm_loadu_si128(four.as_ptr().cast::<__m128i>());
                let hits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(words, k)));
                equal |= (hits as u32) << (4 * q);
            }
            equal
        }
    }
}

/// Whether `key` has an entry: the search of [`lookup`], without reading the value.
#[inline]
pub(crate) fn contains(b: &[u8], key: DataKey) -> bool {
    index_of(b, count(b), key.to_raw()).is_some()
}

/// The value of `key`: one read of the header, the search, one read of the value.
#[inline(always)]
pub(crate) fn lookup(b: &[u8], key: DataKey) -> Option<Value<'_>> {
    let n = count(b);
    let header = table(b, n, ENTRY)?;
    let i = index_of(b, n, key.to_raw())?;
    decode(b, header, n, i)
}

#[inline]
#[allow(unsafe_code)]
fn decode<'a>(b: &'a [u8], header: &[u8], n: usize, i: usize) -> Option<Value<'a>> {
    let raw = rd32(header, 4 * n + 4 * i)?;
    match ValueType::from_tag(*header.get(8 * n + i)?)? {
        ValueType::Bool => Some(Value::Bool(raw != 0)),
        ValueType::F32 => Some(Value::F32(f32::from_bits(raw))),
        ValueType::Str => {
            let bytes = record(b, raw as usize, 1)?;
            debug_assert!(core::str::from_utf8(bytes).is_ok());
            // SAFETY: the buffer keeps the format's invariants (module docs): it passed
            // `validate`, which checks that every string record is UTF-8, or it was written
            // by `set`/`repack` from `&str`s and validated records, and it is borrowed
            // immutably for as long as the `&str` lives.
            Some(Value::Str(unsafe { core::str::from_utf8_unchecked(bytes) }))
        }
        ValueType::F32s => {
            record(b, raw as usize, 4).map(|s| Value::F32s(Floats::from_le_bytes(s)))
        }
        ValueType::I64 => rd64(b, raw as usize).map(Value::I64),
    }
}

/// The little-endian `i64` at `at`.
#[inline]
fn rd64(b: &[u8], at: usize) -> Option<i64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut le = [0; 8];
    le.copy_from_slice(s);
    Some(i64::from_le_bytes(le))
}

/// The key of entry `i`.
#[inline]
pub(crate) fn key_at(b: &[u8], i: usize) -> Option<DataKey> {
    rd32(b, HEADER + 4 * i).map(DataKey::from_raw)
}

/// The value of entry `i`.
#[inline]
pub(crate) fn value_at(b: &[u8], i: usize) -> Option<Value<'_>> {
    let n = count(b);
    if i >= n {
        return None;
    }
    let header = table(b, n, ENTRY)?;
    decode(b, header, n, i)
}

/// The payload of the record at `off` whose elements are `unit` bytes.
#[inline]
fn record(b: &[u8], off: usize, unit: usize) -> Option<&[u8]> {
    let count = rd32(b, off)? as usize;
    let start = off + 4;
    b.get(start..start.checked_add(count.checked_mul(unit)?)?)
}

/// Size of the record of entry `i` (0 for inline values).
fn record_size_at(b: &[u8], n: usize, i: usize) -> usize {
    let tag = b[HEADER + 8 * n + i];
    let off = rd32(b, HEADER + 4 * n + 4 * i).unwrap_or(0) as usize;
    match ValueType::from_tag(tag) {
        Some(ValueType::Str) => 4 + rd32(b, off).unwrap_or(0) as usize,
        Some(ValueType::F32s) => 4 + 4 * rd32(b, off).unwrap_or(0) as usize,
        Some(ValueType::I64) => 8,
        _ => 0,
    }
}

/// Bytes the component needs with every hole squeezed out.
pub(crate) fn packed_size(b: &[u8]) -> usize {
    let n = count(b);
    HEADER + ENTRY * n + (0..n).map(|i| record_size_at(b, n, i)).sum::<usize>()
}

/// Free bytes between the header and the value area.
pub(crate) fn free_bytes(b: &[u8]) -> usize {
    values_start(b) - (HEADER + ENTRY * count(b))
}

/// Bytes lost to holes in the value area.
pub(crate) fn hole_bytes(b: &[u8]) -> usize {
    b.len() - free_bytes(b) - packed_size(b)
}

fn write_record(b: &mut [u8], off: usize, v: &Value<'_>) {
    match v {
        Value::Str(s) => {
            wr32(b, off, s.len() as u32);
            b[off + 4..off + 4 + s.len()].copy_from_slice(s.as_bytes());
        }
        Value::F32s(a) => {
            wr32(b, off, a.len() as u32);
            a.write_le(&mut b[off + 4..off + 4 + 4 * a.len()]);
        }
        Value::I64(i) => b[off..off + 8].copy_from_slice(&i.to_le_bytes()),
        Value::Bool(_) | Value::F32(_) => {}
    }
}

fn inline_bits(v: &Value<'_>) -> u32 {
    match *v {
        Value::Bool(x) => u32::from(x),
        Value::F32(f) => f.to_bits(),
        _ => 0,
    }
}

/// Sets `key` to `v` in place. `Err(need)` when it does not fit: `need` is a buffer size with
/// which the set succeeds after a [`repack`].
pub(crate) fn set(b: &mut [u8], key: DataKey, v: &Value<'_>) -> Result<(), usize> {
    let n = count(b);
    let vs = values_start(b);
    let rec = v.record_size();
    let tag = v.value_type().tag();
    match find(b, key) {
        Ok(i) => {
            let old = record_size_at(b, n, i);
            let vslot = HEADER + 4 * n + 4 * i;
            let old_off = if old > 0 {
                rd32(b, vslot).unwrap_or(0) as usize
            } else {
                0
            };
            // The new record is written over the old one: the only case in which the old
            // record is not left a hole. (An inline value's bits say nothing about it: they
            // may equal the old record's offset.)
            let over_old = rec > 0 && rec <= old;
            let bits = if rec == 0 {
                inline_bits(v)
            } else if over_old {
                // Fits where the old record was: write over it, zero the tail.
                write_record(b, old_off, v);
                b[old_off + rec..old_off + old].fill(0);
                old_off as u32
            } else {
                let header_end = HEADER + ENTRY * n;
                if vs < header_end + rec {
                    return Err(packed_size(b) + rec);
                }
                let off = vs - rec;
                write_record(b, off, v);
                wr32(b, 12, off as u32);
                off as u32
            };
            if old > 0 && !over_old {
                // The old record is now a hole.
                b[old_off..old_off + old].fill(0);
                if rec == 0 && old_off == vs {
                    wr32(b, 12, (old_off + old) as u32);
                }
            }
            wr32(b, vslot, bits);
            b[HEADER + 8 * n + i] = tag;
            Ok(())
        }
        Err(i) => {
            let header_end = HEADER + ENTRY * (n + 1);
            if vs < header_end + rec {
                return Err(packed_size(b) + ENTRY + rec);
            }
            let bits = if rec == 0 {
                inline_bits(v)
            } else {
                let off = vs - rec;
                write_record(b, off, v);
                wr32(b, 12, off as u32);
                off as u32
            };
            open_entry(b, n, i);
            wr32(b, HEADER + 4 * i, key.to_raw());
            wr32(b, HEADER + 4 * (n + 1) + 4 * i, bits);
            b[HEADER + 8 * (n + 1) + i] = tag;
            wr32(b, 8, (n + 1) as u32);
            Ok(())
        }
    }
}

/// Makes room for a new entry at index `i` of `n`: the three arrays move apart.
fn open_entry(b: &mut [u8], n: usize, i: usize) {
    let (k, v, t) = (HEADER, HEADER + 4 * n, HEADER + 8 * n);
    let (v2, t2) = (v + 4, t + 8);
    // Back to front, so nothing is overwritten before it has moved.
    b.copy_within(t + i..t + n, t2 + i + 1);
    b.copy_within(t..t + i, t2);
    b.copy_within(v + 4 * i..v + 4 * n, v2 + 4 * (i + 1));
    b.copy_within(v..v + 4 * i, v2);
    b.copy_within(k + 4 * i..k + 4 * n, k + 4 * (i + 1));
}

/// Removes entry `i` of `n`: the arrays close up and the freed header bytes are zeroed.
fn close_entry(b: &mut [u8], n: usize, i: usize) {
    let (k, v, t) = (HEADER, HEADER + 4 * n, HEADER + 8 * n);
    let (v2, t2) = (v - 4, t - 8);
    // Front to back.
    b.copy_within(k + 4 * (i + 1)..k + 4 * n, k + 4 * i);
    b.copy_within(v..v + 4 * i, v2);
    b.copy_within(v + 4 * (i + 1)..v + 4 * n, v2 + 4 * i);
    b.copy_within(t..t + i, t2);
    b.copy_within(t + i + 1..t + n, t2 + i);
    b[t2 + n - 1..t + n].fill(0);
}

/// Removes `key`; whether it was there.
pub(crate) fn remove(b: &mut [u8], key: DataKey) -> bool {
    let Ok(i) = find(b, key) else {
        return false;
    };
    let n = count(b);
    let rec = record_size_at(b, n, i);
    if rec > 0 {
        let off = rd32(b, HEADER + 4 * n + 4 * i).unwrap_or(0) as usize;
        b[off..off + rec].fill(0);
        if off == values_start(b) {
            // The lowest record: the value area shrinks instead of keeping a hole.
            wr32(b, 12, (off + rec) as u32);
        }
    }
    close_entry(b, n, i);
    wr32(b, 8, (n - 1) as u32);
    true
}

/// A buffer holding `entries`, whose keys must be strictly increasing, with no holes and
/// no free space: one pass, O(size), where setting them one by one moves the header arrays
/// for each. `Err(size)`, the bytes it would need (saturating), if that is more than
/// `u32::MAX`.
#[cfg(feature = "json")]
pub(crate) fn build(entries: &[(DataKey, Value<'_>)]) -> Result<alloc::vec::Vec<u8>, usize> {
    let n = entries.len();
    let size = entries.iter().fold(
        HEADER.saturating_add(ENTRY.saturating_mul(n)),
        |size, (_, v)| size.saturating_add(v.record_size()),
    );
    if size > u32::MAX as usize {
        return Err(size);
    }
    let mut b = alloc::vec![0u8; size];
    b[..HEADER].copy_from_slice(&EMPTY);
    let mut top = size;
    for (i, (key, v)) in entries.iter().enumerate() {
        debug_assert!(i == 0 || entries[i - 1].0.to_raw() < key.to_raw());
        wr32(&mut b, HEADER + 4 * i, key.to_raw());
        let rec = v.record_size();
        let bits = if rec == 0 {
            inline_bits(v)
        } else {
            top -= rec;
            write_record(&mut b, top, v);
            top as u32
        };
        wr32(&mut b, HEADER + 4 * n + 4 * i, bits);
        b[HEADER + 8 * n + i] = v.value_type().tag();
    }
    wr32(&mut b, 8, n as u32);
    wr32(&mut b, 12, top as u32);
    Ok(b)
}

/// Copies the entries of `src` into `dst` with no holes (`dst.len() >= packed_size(src)`).
pub(crate) fn repack(src: &[u8], dst: &mut [u8]) {
    init(dst);
    let n = count(src);
    let mut top = dst.len();
    dst[HEADER..HEADER + 4 * n].copy_from_slice(&src[HEADER..HEADER + 4 * n]);
    dst[HEADER + 8 * n..HEADER + 9 * n].copy_from_slice(&src[HEADER + 8 * n..HEADER + 9 * n]);
    for i in 0..n {
        let slot = HEADER + 4 * n + 4 * i;
        let mut bits = rd32(src, slot).unwrap_or(0);
        let rec = record_size_at(src, n, i);
        if rec > 0 {
            let off = bits as usize;
            top -= rec;
            dst[top..top + rec].copy_from_slice(&src[off..off + rec]);
            bits = top as u32;
        }
        wr32(dst, slot, bits);
    }
    wr32(dst, 8, n as u32);
    wr32(dst, 12, top as u32);
}

/// The little-endian `u32`s of `c`, read as whole 4-byte chunks: one load each, with no
/// per-byte bounds check.
fn words(c: &[u8]) -> impl Iterator<Item = u32> + '_ {
    c.chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// Whether `s` is UTF-8: ASCII first (the common case, checked a word at a time), then the
/// full check for the rest.
#[inline(always)]
fn is_utf8(s: &[u8]) -> bool {
    all_ascii(s) || core::str::from_utf8(s).is_ok()
}

/// Whether every byte of `s` is ASCII. From 32 bytes on it ORs whole words 32 bytes at a time
/// with no early exit, which the compiler turns into vector instructions: for ASCII strings of
/// 100 bytes and more, about twice as fast as `<[u8]>::is_ascii` and faster than
/// `core::str::from_utf8`, which a string that is not ASCII goes on to. Fewer than 32 bytes
/// (a short string, or the rest of a long one) go to [`short_ascii`].
fn all_ascii(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(32);
    let mut high = 0u64;
    for chunk in &mut chunks {
        for w in chunk.chunks_exact(8) {
            high |= u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        }
    }
    high & HIGH_BITS == 0 && short_ascii(chunks.remainder())
}

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// [`all_ascii`] for fewer than 32 bytes (longer slices go to [`all_ascii`]), with no loop
/// from 4 bytes on: two or four words that overlap where they must, so that together they
/// cover every byte (two 4-byte words from 4 bytes, two 8-byte words from 8, four from 16).
/// A probe loading 1 000 entities whose strings are 9, 20 and about 56 bytes ran 37
/// instructions per entity fewer than with `is_ascii`, which walks the bytes that do not
/// fill a word one at a time.
#[inline(always)]
fn short_ascii(s: &[u8]) -> bool {
    let n = s.len();
    if n >= 32 {
        return all_ascii(s);
    }
    // Each range read below is 8 (or 4) bytes inside `s`, so the conversions cannot fail.
    let w64 = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
    let w32 = |i: usize| u64::from(u32::from_le_bytes(s[i..i + 4].try_into().unwrap_or([0; 4])));
    let high = if n >= 16 {
        w64(0) | w64(8) | w64(n - 16) | w64(n - 8)
    } else if n >= 8 {
        w64(0) | w64(n - 8)
    } else if n >= 4 {
        w32(0) | w32(n - 4)
    } else {
        s.iter().fold(0u64, |a, &c| a | u64::from(c))
    };
    high & HIGH_BITS == 0
}

/// Checks every invariant of the format in O(len): what makes bytes from disk safe to read.
///
/// Bytes that pass [`quick_check`] are valid; the others, valid or not, go through
/// [`validate_exact`], which names the first rule they break.
#[inline(never)]
pub(crate) fn validate(b: &[u8]) -> Result<(), DecodeError> {
    if quick_check(b) {
        // With debug assertions (the tests; fuzz runs built with `cargo fuzz run -a`), every
        // input loaded checks that the quick check accepts nothing the exact one refuses.
        debug_assert_eq!(
            validate_exact(b),
            Ok(()),
            "the quick check accepted bad bytes"
        );
        Ok(())
    } else {
        validate_exact(b)
    }
}

/// Most record extents a check keeps on the stack and sorts by insertion ([`disjoint`]): a
/// component with more goes from [`quick_check`] to [`validate_exact`], which keeps them on
/// the heap.
const QUICK_RECORDS: usize = 16;

/// Whether `b` keeps every invariant of the format, for a component of at most
/// [`QUICK_RECORDS`] records: `true` only if [`validate_exact`] accepts `b` (a `false` says
/// nothing; the exact check decides, and names the rule broken).
///
/// The rules of [`validate_exact`], in one pass over the entries instead of three: the key
/// order, the tag and the boolean of an entry are checked with no branch, and only a record
/// (a string, float array or integer) is looked at further.
#[inline(always)]
fn quick_check(b: &[u8]) -> bool {
    let len = b.len();
    let Some(head) = b.get(..HEADER) else {
        return false;
    };
    debug_assert_eq!((VERSION, HASH_ID), (1, 1));
    if head[..8] != [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], 1, 0, 1, 0] || len > u32::MAX as usize
    {
        return false;
    }
    let n = count(b) as u64;
    let vs = values_start(b);
    // In u64: on a 32-bit target `9n` could wrap.
    if HEADER as u64 + ENTRY as u64 * n > vs as u64 || vs > len {
        return false;
    }
    let n = n as usize;
    let header = &b[HEADER..HEADER + ENTRY * n];
    let (keys, rest) = header.split_at(4 * n);
    let (values, tags) = rest.split_at(4 * n);
    let mut extents = [(0u32, 0u32); QUICK_RECORDS];
    let mut records = 0usize;
    let mut bad = false;
    // One above the key before (0 before the first): each key must reach it.
    let mut floor = 0u64;
    for ((key, raw), &tag) in words(keys).zip(words(values)).zip(tags) {
        bad |= u64::from(key) < floor;
        floor = u64::from(key) + 1;
        // Tags: 0 bool, 1 f32, 2 string, 3 float array, 4 integer (ValueType::tag).
        bad |= (tag > 4) | ((tag == 0) & (raw > 1));
        if tag < 2 {
            continue;
        }
        let off = raw as usize;
        // `len >= HEADER`, so `len - 4` cannot wrap; the count is inside `b`.
        if off < vs || off > len - 4 || records == QUICK_RECORDS {
            return false;
        }
        let count = rd32(b, off).unwrap_or(0) as u64;
        let end = off as u64
            + match tag {
                2 => 4 + count,
                3 => 4 + 4 * count,
                _ => 8,
            };
        if end > len as u64 {
            return false;
        }
        if tag == 2 {
            let payload = &b[off + 4..end as usize];
            if !is_utf8(payload) {
                return false;
            }
        }
        extents[records] = (raw, end as u32);
        records += 1;
    }
    if bad {
        return false;
    }
    disjoint(&mut extents[..records])
}

/// Whether no two of the record `extents` (start, end) share a byte: in order of offset,
/// each ends before the next starts. Sorts them.
#[inline(always)]
fn disjoint(extents: &mut [(u32, u32)]) -> bool {
    if extents.len() <= QUICK_RECORDS {
        // A component holds a few records: an insertion sort, inline, beats the call.
        for i in 1..extents.len() {
            let mut j = i;
            while j > 0 && extents[j - 1] > extents[j] {
                extents.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        extents.sort_unstable();
    }
    extents.windows(2).all(|w| w[0].1 <= w[1].0)
}

/// Checks every invariant of the format in O(len), naming the first rule the bytes break.
#[cold]
fn validate_exact(b: &[u8]) -> Result<(), DecodeError> {
    if b.len() < HEADER {
        return Err(DecodeError::TooShort);
    }
    if b[..4] != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = u16::from_le_bytes([b[4], b[5]]);
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let hash = u16::from_le_bytes([b[6], b[7]]);
    if hash != HASH_ID {
        return Err(DecodeError::UnknownKeyHash(hash));
    }
    if b.len() > u32::MAX as usize {
        return Err(DecodeError::TooLarge);
    }
    let n = count(b);
    let vs = values_start(b);
    let header_end = (n as u64) * ENTRY as u64 + HEADER as u64;
    if header_end > vs as u64 || vs > b.len() {
        return Err(DecodeError::BadCounts);
    }
    let header = &b[HEADER..HEADER + ENTRY * n];
    let (keys, rest) = header.split_at(4 * n);
    let (values, tags) = rest.split_at(4 * n);
    let mut previous = None;
    for (i, key) in words(keys).enumerate() {
        if previous.is_some_and(|p| p >= key) {
            return Err(DecodeError::KeysNotSorted { entry: i as u32 });
        }
        previous = Some(key);
    }
    // Tags and booleans first, with no branch per entry (the tags of a component follow no
    // pattern a branch predictor could learn); the first bad entry is looked for only when
    // there is one.
    let mut bad = false;
    for (raw, &tag) in words(values).zip(tags) {
        bad |= (tag > 4) | ((tag == 0) & (raw > 1));
    }
    if bad {
        return Err(first_bad_tag(values, tags));
    }
    // Record extents, to find overlaps; on the stack for the common small component.
    let mut small = [(0u32, 0u32); QUICK_RECORDS];
    let mut big = alloc::vec::Vec::new();
    let mut records = 0usize;
    for (i, (raw, &tag)) in words(values).zip(tags).enumerate() {
        // Tags: 0 bool, 1 f32, 2 string, 3 float array, 4 integer (ValueType::tag); the first
        // two are inline.
        if tag < 2 {
            continue;
        }
        let unit = match tag {
            2 => 1,
            3 => 4,
            _ => 0,
        };
        let off = raw as usize;
        let out_of_range = || DecodeError::ValueOutOfRange { entry: i as u32 };
        if off < vs {
            return Err(out_of_range());
        }
        let end = if unit == 0 {
            // An integer: 8 bytes, no count.
            rd64(b, off).ok_or_else(out_of_range)?;
            off + 8
        } else {
            let payload = record(b, off, unit).ok_or_else(out_of_range)?;
            if unit == 1 && !is_utf8(payload) {
                return Err(DecodeError::InvalidUtf8 { entry: i as u32 });
            }
            off + 4 + payload.len()
        };
        let extent = (raw, end as u32);
        if records < small.len() {
            small[records] = extent;
        } else {
            if records == small.len() {
                big.extend_from_slice(&small);
            }
            big.push(extent);
        }
        records += 1;
    }
    let extents: &mut [(u32, u32)] = if records <= small.len() {
        &mut small[..records]
    } else {
        &mut big
    };
    if !disjoint(extents) {
        return Err(DecodeError::Overlap);
    }
    Ok(())
}

/// The error of the first entry whose tag is unknown or whose boolean is neither 0 nor 1.
#[cold]
fn first_bad_tag(values: &[u8], tags: &[u8]) -> DecodeError {
    for (i, (raw, &tag)) in words(values).zip(tags).enumerate() {
        let entry = i as u32;
        if tag > 4 {
            return DecodeError::BadTypeTag { entry, tag };
        }
        if tag == 0 && raw > 1 {
            return DecodeError::BadBool { entry };
        }
    }
    unreachable!("validate found a bad tag or boolean")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataComponent;
    use alloc::string::String;
    use alloc::vec::Vec;

    #[test]
    fn all_ascii_agrees_with_is_ascii_at_every_length_and_position() {
        // Past two chunks and a remainder of every length.
        for len in 0..if cfg!(miri) { 72 } else { 100 } {
            let mut s: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(all_ascii(&s), "len {len}");
            for at in 0..len {
                for high in [0x80, 0xC3, 0xFF] {
                    s[at] = high;
                    assert_eq!(all_ascii(&s), s.is_ascii(), "len {len}, at {at}");
                    assert!(!all_ascii(&s));
                    s[at] = b'z';
                }
            }
        }
    }

    /// A record replaced by an inline value becomes a hole, zeroed, whatever the inline
    /// value's bits: an `f32` whose bits equal the record's offset too.
    #[test]
    fn a_record_replaced_by_an_inline_value_is_zeroed_whatever_its_bits() {
        let secret = "hunter2-secret-password";
        let mut base = DataComponent::new();
        base.set("pw", secret);
        let len = base.as_bytes().len() as u32;
        for bits in 0..len {
            let mut c = base.clone();
            c.set("pw", f32::from_bits(bits));
            assert_eq!(c.hole_bytes(), 0, "bits {bits}");
            assert!(
                !c.as_bytes()
                    .windows(secret.len())
                    .any(|w| w == secret.as_bytes()),
                "bits {bits}: the old string is still in the bytes"
            );
            assert_eq!(c.get_f32("pw").map(f32::to_bits), Some(bits));
        }
    }

    /// A small xorshift generator for the tests below.
    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A component of random entries of every type, with holes left by replaced values.
    fn random_component(seed: &mut u64) -> DataComponent {
        let mut c = DataComponent::new();
        let entries = xorshift(seed) % 20;
        for _ in 0..entries {
            let key = DataKey::from_raw((xorshift(seed) % 24) as u32);
            let r = xorshift(seed);
            let len = (r >> 8) as usize % 70;
            match r % 6 {
                0 => c.set(key, r & 256 != 0),
                1 => c.set(key, f32::from_bits((r >> 16) as u32)),
                2 => c.set(key, "abcdefghij".repeat(7).get(..len).unwrap_or("")),
                3 => c.set(
                    key,
                    "é€"
                        .repeat(12)
                        .chars()
                        .take(len % 20)
                        .collect::<String>()
                        .as_str(),
                ),
                4 => c.set(key, &[1.5f32, -2.0, 0.25][..len % 4]),
                _ => c.set(key, (r >> 3) as i64),
            }
        }
        c
    }

    /// The quick check accepts only what the exact one accepts, and it accepts the valid
    /// components it is meant for (so that they do not all take the exact path).
    #[test]
    fn quick_check_accepts_only_what_the_exact_check_accepts() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let rounds = if cfg!(miri) { 40 } else { 3_000 };
        let mut quick = 0;
        for round in 0..rounds {
            let c = random_component(&mut seed);
            let good = c.as_bytes().to_vec();
            assert!(validate_exact(&good).is_ok());
            if quick_check(&good) {
                quick += 1;
            }
            // Some bytes changed, in the header and anywhere: whatever the quick check
            // accepts, the exact one accepts.
            for _ in 0..if cfg!(miri) { 4 } else { 24 } {
                let mut bad = good.clone();
                let changes = 1 + xorshift(&mut seed) % 3;
                for _ in 0..changes {
                    let r = xorshift(&mut seed);
                    let at = if r & 1 == 0 {
                        (r >> 8) as usize % (HEADER + ENTRY * count(&good)).min(bad.len())
                    } else {
                        (r >> 8) as usize % bad.len()
                    };
                    bad[at] = match (r >> 4) % 4 {
                        0 => bad[at] ^ (1 << ((r >> 40) % 8)),
                        1 => 0,
                        2 => 0xFF,
                        _ => (r >> 48) as u8,
                    };
                }
                if quick_check(&bad) {
                    assert_eq!(validate_exact(&bad), Ok(()), "round {round}: {bad:?}");
                }
                assert_eq!(validate(&bad), validate_exact(&bad));
            }
            // Cut short anywhere.
            let cut = xorshift(&mut seed) as usize % good.len();
            assert!(!quick_check(&good[..cut]) || validate_exact(&good[..cut]).is_ok());
        }
        assert!(quick > rounds / 2, "{quick} of {rounds}");
    }

    /// Inputs at the edges of the rules, each refused by the exact check: the quick check
    /// refuses them too (an accepted one would pass unchecked in a release build).
    #[test]
    fn quick_check_refuses_what_breaks_a_rule_at_its_edge() {
        let mut c = DataComponent::new();
        c.set(DataKey::from_raw(1), "abc");
        c.set(DataKey::from_raw(2), "defg");
        c.set(DataKey::from_raw(3), 7i64);
        let good = c.as_bytes().to_vec();
        assert!(quick_check(&good), "the valid component");
        let n = count(&good);
        let value_at = |i: usize| HEADER + 4 * n + 4 * i;
        let len = good.len() as u32;
        let with = |at: usize, v: u32| {
            let mut b = good.clone();
            wr32(&mut b, at, v);
            b
        };
        let first = rd32(&good, value_at(0)).unwrap();
        let second = rd32(&good, value_at(1)).unwrap() as usize;
        let cases = [
            ("two records at one offset", with(value_at(1), first)),
            ("a record's count past the end", with(value_at(0), len - 3)),
            (
                "an integer 4 bytes from the end",
                with(value_at(2), len - 4),
            ),
            (
                "an integer 7 bytes from the end",
                with(value_at(2), len - 7),
            ),
            ("a count near u32::MAX", with(second, u32::MAX - 2)),
            (
                "values starting inside the header",
                with(12, (HEADER + 1) as u32),
            ),
            ("values starting past the end", with(12, len + 1)),
            ("two equal keys", with(HEADER + 4, 1)),
            ("a count of entries past the end", with(8, u32::MAX)),
        ];
        for (what, b) in cases {
            assert!(
                validate_exact(&b).is_err(),
                "{what}: the exact check accepts it"
            );
            assert!(!quick_check(&b), "{what}: the quick check accepts it");
        }
    }

    /// The fixed-width search agrees with the binary search for every count of keys, with
    /// any bytes after the keys, for keys at both ends of the range and between; and so does
    /// the equality search of lookups, [`index_of`].
    #[test]
    fn position_agrees_with_the_binary_search() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..if cfg!(miri) { 60 } else { 4_000 } {
            let n = (xorshift(&mut seed) % 21) as usize;
            let mut keys: Vec<u32> = (0..n)
                .map(|_| match xorshift(&mut seed) % 4 {
                    0 => 0,
                    1 => u32::MAX,
                    _ => (xorshift(&mut seed) % 64) as u32 * 0x0400_0000,
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let n = keys.len();
            // The header, the keys, then bytes of any kind: short of WIDE keys or past them.
            let len = HEADER + 4 * n + (xorshift(&mut seed) % 80) as usize;
            let mut b: Vec<u8> = (0..len).map(|_| xorshift(&mut seed) as u8).collect();
            for (i, k) in keys.iter().enumerate() {
                b[HEADER + 4 * i..HEADER + 4 * i + 4].copy_from_slice(&k.to_le_bytes());
            }
            let probes = [0, 1, u32::MAX, u32::MAX - 1, xorshift(&mut seed) as u32];
            for k in probes.into_iter().chain(keys.iter().copied()) {
                let binary = search(&b[HEADER..HEADER + 4 * n], n, k);
                assert_eq!(position(&b, n, k), binary, "round {round}, key {k}");
                assert_eq!(index_of(&b, n, k), binary.ok(), "round {round}, key {k}");
                // The words past the keys hold `k` itself: still not one of the keys.
                let mut echo = b.clone();
                for at in (HEADER + 4 * n..len.saturating_sub(3)).step_by(4) {
                    echo[at..at + 4].copy_from_slice(&k.to_le_bytes());
                }
                assert_eq!(
                    position(&echo, n, k),
                    binary,
                    "round {round}, echoed key {k}"
                );
                assert_eq!(
                    index_of(&echo, n, k),
                    binary.ok(),
                    "round {round}, echoed key {k}"
                );
            }
        }
    }

    /// The vector equality mask is the portable one: every word equal, none, some, and words
    /// that differ from `k` in one bit only.
    #[test]
    fn equal_mask_agrees_with_the_portable_loop() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..if cfg!(miri) { 50 } else { 5_000 } {
            let k = match round % 3 {
                0 => xorshift(&mut seed) as u32,
                1 => u32::MAX,
                _ => 0x8000_0000,
            };
            let mut wide = [0u8; 4 * WIDE];
            for word in wide.chunks_exact_mut(4) {
                let x = match xorshift(&mut seed) % 4 {
                    0 => k,
                    1 => k ^ 1 << (xorshift(&mut seed) % 32),
                    _ => xorshift(&mut seed) as u32,
                };
                word.copy_from_slice(&x.to_le_bytes());
            }
            assert_eq!(
                equal_mask(&wide, k),
                equal_mask_portable(&wide, k),
                "round {round}"
            );
        }
        let all = [0xABu8; 4 * WIDE];
        assert_eq!(equal_mask(&all, 0xABAB_ABAB), 0xFFFF);
        assert_eq!(equal_mask(&all, 0xABAB_ABAA), 0);
    }

    /// Where `needle` starts in `b`.
    fn find(b: &[u8], needle: &[u8]) -> usize {
        b.windows(needle.len())
            .position(|w| w == needle)
            .expect("the bytes hold the string")
    }

    #[test]
    fn long_strings_are_checked_for_utf8_in_every_chunk() {
        // Valid UTF-8 that is not ASCII loads.
        let mut c = DataComponent::new();
        c.set(
            "s",
            "héllo, wörld: a string of more than two 32-byte chunks, ending in ü",
        );
        assert!(validate(c.as_bytes()).is_ok());
        // An ASCII string of two whole chunks and a remainder: one bad byte anywhere is found.
        let text = "an ASCII string of more than two 32-byte chunks, with a remainder";
        assert!(text.len() > 64 && text.len() % 32 != 0);
        c.set("s", text);
        let good = c.as_bytes().to_vec();
        assert!(validate(&good).is_ok());
        let start = find(&good, text.as_bytes());
        for at in [0, 1, 31, 32, 40, 63, 64, text.len() - 1] {
            let mut bad = good.clone();
            bad[start + at] = 0xFF;
            assert_eq!(
                validate(&bad),
                Err(DecodeError::InvalidUtf8 { entry: 0 }),
                "byte {at}"
            );
        }
    }

    #[test]
    fn errors_are_reported_in_the_order_of_the_rules() {
        let mut c = DataComponent::new();
        c.set("a", true);
        c.set("s", "text");
        c.set("z", 1.0);
        let good = c.as_bytes().to_vec();
        let n = count(&good);
        let tag_at = |i: usize| HEADER + 8 * n + i;
        let value_at = |i: usize| HEADER + 4 * n + 4 * i;
        let key_at = |i: usize| HEADER + 4 * i;
        let of = |t: u8| (0..n).find(|&i| good[tag_at(i)] == t).unwrap();
        let (string, float) = (of(2), of(1));
        // The string's entry comes first, so its record error would be met before the bad tag
        // if the tags were checked entry by entry with the records.
        assert!(string < float);
        // A record out of range...
        let mut bad = good.clone();
        bad[value_at(string)..value_at(string) + 4].copy_from_slice(&0u32.to_le_bytes());
        let out = DecodeError::ValueOutOfRange {
            entry: string as u32,
        };
        assert_eq!(validate(&bad), Err(out));
        // ...comes after an unknown tag, even one in a later entry...
        bad[tag_at(float)] = 7;
        let tag = DecodeError::BadTypeTag {
            entry: float as u32,
            tag: 7,
        };
        assert_eq!(validate(&bad), Err(tag));
        // ...which comes after keys out of order.
        let (k0, k1) = (key_at(0), key_at(1));
        let first: [u8; 4] = bad[k0..k0 + 4].try_into().unwrap();
        bad.copy_within(k1..k1 + 4, k0);
        bad[k1..k1 + 4].copy_from_slice(&first);
        assert_eq!(validate(&bad), Err(DecodeError::KeysNotSorted { entry: 1 }));
    }

    #[test]
    fn a_bad_tag_or_boolean_names_its_entry() {
        let mut c = DataComponent::new();
        for (k, v) in [("a", true), ("b", false), ("c", true)] {
            c.set(k, v);
        }
        c.set("d", 1.5);
        let good = c.as_bytes().to_vec();
        let n = count(&good);
        assert_eq!(n, 4);
        let tag_at = |i: usize| HEADER + 8 * n + i;
        let value_at = |i: usize| HEADER + 4 * n + 4 * i;
        let bools: Vec<usize> = (0..n).filter(|&i| good[tag_at(i)] == 0).collect();
        let float = (0..n).find(|&i| good[tag_at(i)] == 1).unwrap();
        assert_eq!(bools.len(), 3);
        // A boolean of 2, on the last boolean entry and on every one after the first.
        for &i in &bools[1..] {
            let mut bad = good.clone();
            bad[value_at(i)] = 2;
            assert_eq!(
                validate(&bad),
                Err(DecodeError::BadBool { entry: i as u32 })
            );
        }
        // A float's bits may be anything; an unknown tag is refused and named.
        let mut bad = good.clone();
        bad[value_at(float)..value_at(float) + 4].copy_from_slice(&[0xFF; 4]);
        assert!(validate(&bad).is_ok());
        bad[tag_at(float)] = 9;
        assert_eq!(
            validate(&bad),
            Err(DecodeError::BadTypeTag {
                entry: float as u32,
                tag: 9
            })
        );
        // Two bad entries: the first is named.
        bad[value_at(bools[0])] = 7;
        let first = bools[0].min(float) as u32;
        let err = validate(&bad).unwrap_err();
        assert!(
            matches!(err, DecodeError::BadBool { entry } | DecodeError::BadTypeTag { entry, .. } if entry == first),
            "{err:?}"
        );
    }
}
