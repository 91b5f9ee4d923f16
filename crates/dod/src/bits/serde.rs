//! `serde` for [`BitSet`]: `{ "universe": u64, "words": [u64] }`, the same on every platform
//! (bit `j` of word `w` is index `64 * w + j`). Reading checks that the words cover the
//! universe exactly and that no bit past it is set, so untrusted input gives an error, never a
//! broken set; what it allocates is bounded by the input (the words read, and 1/32 of them for
//! the summaries). The bound ([`BitSet::max_index`]) is not part of the format: a set read
//! back has none until [`set_max_index`](BitSet::set_max_index) gives it one.

use alloc::vec::Vec;
use serde::de::{Deserialize, Deserializer, Error};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{words_for, BitSet};

impl Serialize for BitSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("BitSet", 2)?;
        st.serialize_field("universe", &(self.universe as u64))?;
        st.serialize_field("words", self.as_words())?;
        st.end()
    }
}

#[derive(serde::Deserialize)]
#[serde(rename = "BitSet", deny_unknown_fields)]
struct Raw {
    universe: u64,
    words: Vec<u64>,
}

impl<'de> Deserialize<'de> for BitSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Raw::deserialize(d)?;
        let universe = usize::try_from(raw.universe)
            .map_err(|_| D::Error::custom("BitSet universe does not fit this platform"))?;
        let expected = words_for(universe);
        if raw.words.len() != expected {
            return Err(D::Error::custom(format_args!(
                "BitSet of universe {universe} needs {expected} words, found {}",
                raw.words.len()
            )));
        }
        BitSet::from_words(raw.words, universe)
            .ok_or_else(|| D::Error::custom("BitSet has a bit set past its universe"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s: BitSet = [0, 5, 64, 1000].into_iter().collect();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(
            json,
            r#"{"universe":1001,"words":[33,1,0,0,0,0,0,0,0,0,0,0,0,0,0,1099511627776]}"#
        );
        let back: BitSet = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.universe(), 1001);
        back.assert_invariants();
    }

    #[test]
    fn bad_input_is_an_error() {
        for bad in [
            r#"{"universe":3,"words":[8]}"#,
            r#"{"universe":3,"words":[]}"#,
            r#"{"universe":18446744073709551615,"words":[]}"#,
            r#"{"universe":0,"words":[0]}"#,
            r#"{"universe":1}"#,
        ] {
            assert!(serde_json::from_str::<BitSet>(bad).is_err(), "{bad}");
        }
    }
}
