//! Saving and loading with `serde` (feature `serde`).
//!
//! A set is a sequence of `[entity, generation, value]` triples in dense order (generation 0:
//! inserted by a plain index); tombstones are not written. Loading rebuilds the same order and
//! the same generations, so every key that was valid before is valid after and every stale one
//! is still stale. Untrusted input is checked: index `u32::MAX` and repeated indices are errors,
//! never panics. A valid but huge index still costs its page table (see the module's memory
//! notes), so bound the indices of untrusted input before loading it.

use super::{SparseSet, TOMBSTONE};
use core::fmt;
use core::marker::PhantomData;
use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

impl<T: Serialize, const PAGE: usize> Serialize for SparseSet<T, PAGE> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for (e, v) in self.iter() {
            let generation = self.generation_of(e).flatten().map_or(0, |g| g.get());
            seq.serialize_element(&(e, generation, v))?;
        }
        seq.end()
    }
}

impl<'de, T: Deserialize<'de>, const PAGE: usize> Deserialize<'de> for SparseSet<T, PAGE> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SetVisitor<T, const PAGE: usize>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>, const PAGE: usize> Visitor<'de> for SetVisitor<T, PAGE> {
            type Value = SparseSet<T, PAGE>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence of [entity, generation, value]")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut set = SparseSet::new_paged();
                // Trust the length hint only so far: it comes from the input.
                set.reserve(seq.size_hint().unwrap_or(0).min(4096));
                while let Some((e, generation, v)) = seq.next_element::<(u32, u16, T)>()? {
                    if e == TOMBSTONE {
                        return Err(A::Error::custom("entity index u32::MAX is reserved"));
                    }
                    if set.contains(e) {
                        return Err(A::Error::custom(format_args!("entity {e} appears twice")));
                    }
                    set.insert_raw(e, generation, v);
                }
                Ok(set)
            }
        }

        d.deserialize_seq(SetVisitor::<T, PAGE>(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Handle, SparseSet};

    #[test]
    fn round_trip_keeps_order_and_generations() {
        let mut s: SparseSet<i32> = SparseSet::new();
        let h = Handle::new(40, 3, 0).unwrap();
        s.insert(9u32, 1);
        s.insert(h, 2);
        s.insert(2u32, 3);
        s.defer_remove(9u32);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "[[40,3,2],[2,0,3]]");
        let back: SparseSet<i32> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.indices(), &[40, 2]);
        assert_eq!(back.get(h), Some(&2));
        assert!(!back.contains(Handle::new(40, 2, 0).unwrap()));
        back.assert_invariants();
    }

    #[test]
    fn bad_input_is_an_error() {
        for bad in [
            "[[1,0,1],[1,0,2]]",
            "[[4294967295,0,1]]",
            "[[1,0]]",
            "{}",
            "[[-1,0,1]]",
        ] {
            assert!(
                serde_json::from_str::<SparseSet<i32>>(bad).is_err(),
                "{bad}"
            );
        }
    }
}
