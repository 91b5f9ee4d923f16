//! Saving and loading with `serde` (feature `serde`).
//!
//! A set is a sequence of `[entity, tag, value]` triples in dense order (tag 0: inserted by a
//! plain index; otherwise the key's `generation | type_id << 16`); tombstones are not written.
//! Loading rebuilds the same order and the same tags, so every key that was valid before is
//! valid after and every stale one is still stale. Untrusted input is checked and never makes
//! the loader panic or abort: an index above the set's
//! [`max_index`](SparseSet::max_index) (always `u32::MAX`), a repeated index, a tag that no key
//! has, and a failed allocation are errors. To bound the memory untrusted indices can make it
//! allocate, load into a set with a lower `max_index` through [`DeserializeSeed`].

use super::{is_malformed, SparseSet};
use core::fmt;
use core::marker::PhantomData;
use serde::de::{Deserialize, DeserializeSeed, Deserializer, Error, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

impl<T: Serialize, const PAGE: usize> Serialize for SparseSet<T, PAGE> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for (e, v) in self.iter() {
            seq.serialize_element(&(e, super::slot_tag(self.slot(e)), v))?;
        }
        seq.end()
    }
}

impl<'de, T: Deserialize<'de>, const PAGE: usize> Deserialize<'de> for SparseSet<T, PAGE> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DeserializeSeed::deserialize(Self::new_paged(), d)
    }
}

/// Loads entries into this set: with its [`max_index`](SparseSet::max_index) (an index above
/// it is an error, before anything is allocated for it), after the entries it holds (an index
/// it holds already is an error).
///
/// ```
/// use serde::de::DeserializeSeed;
/// use dod::SparseSet;
///
/// let bounded = SparseSet::<u8>::new().with_max_index(1_000);
/// let mut json = serde_json::Deserializer::from_str("[[4000000000, 0, 1]]");
/// assert!(bounded.deserialize(&mut json).is_err());
///
/// let bounded = SparseSet::<u8>::new().with_max_index(1_000);
/// let mut json = serde_json::Deserializer::from_str("[[40, 0, 1]]");
/// let s = bounded.deserialize(&mut json).unwrap();
/// assert_eq!((s[40u32], s.max_index()), (1, 1_000));
/// ```
impl<'de, T: Deserialize<'de>, const PAGE: usize> DeserializeSeed<'de> for SparseSet<T, PAGE> {
    type Value = SparseSet<T, PAGE>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(SetVisitor(self, PhantomData))
    }
}

struct SetVisitor<'de, T, const PAGE: usize>(SparseSet<T, PAGE>, PhantomData<&'de ()>);

impl<'de, T: Deserialize<'de>, const PAGE: usize> Visitor<'de> for SetVisitor<'de, T, PAGE> {
    type Value = SparseSet<T, PAGE>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of [entity, tag, value]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut set = self.0;
        // Trust the length hint only so far: it comes from the input.
        set.try_reserve(seq.size_hint().unwrap_or(0).min(4096))
            .map_err(|_| A::Error::custom("out of memory"))?;
        while let Some((e, tag, v)) = seq.next_element::<(u32, u32, T)>()? {
            if is_malformed(tag) || (tag != 0 && tag as u16 == 0) {
                return Err(A::Error::custom(format_args!(
                    "entity {e}: tag {tag:#x} is no key's (bit 31 set, or generation 0)"
                )));
            }
            if set.contains(e) {
                return Err(A::Error::custom(format_args!("entity {e} appears twice")));
            }
            let tag = (tag != 0).then_some(tag);
            if let Err(err) = set.try_insert_tagged(e, tag, v) {
                return Err(A::Error::custom(format_args!("entity {e}: {err}")));
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Handle, SparseSet};

    #[test]
    fn round_trip_keeps_order_and_tags() {
        let mut s: SparseSet<i32> = SparseSet::new();
        let h = Handle::new(40, 3, 0).unwrap();
        let f = Handle::new(41, 2, 5).unwrap();
        s.insert(9u32, 1);
        s.insert(h, 2);
        s.insert(2u32, 3);
        s.insert(f, 4);
        s.defer_remove(9u32);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "[[40,3,2],[2,0,3],[41,327682,4]]");
        let back: SparseSet<i32> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.indices(), &[40, 2, 41]);
        assert_eq!(back.get(h), Some(&2));
        assert_eq!(back.get(f), Some(&4));
        assert!(!back.contains(Handle::new(40, 2, 0).unwrap()));
        assert!(!back.contains(Handle::new(41, 2, 0).unwrap()));
        assert_eq!(back, s);
        back.assert_invariants();
    }

    #[test]
    fn bad_input_is_an_error() {
        for bad in [
            "[[1,0,1],[1,0,2]]",
            "[[4294967295,0,1]]",
            "[[1,2147483649,1]]",
            "[[1,65536,1]]",
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
