//! Untrusted JSON: `DataComponent::from_json` either refuses the text and registers no name,
//! or gives a valid, packed component whose `to_json` reads back as the same component, with
//! names whose memory follows the text's size (a path shares its parents' segments).
#![no_main]

use dod::data::{DataComponent, JsonError, KeyNames, MAX_PATH_DEPTH};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    // A name registered before, which the text may collide with or reach.
    let mut names = KeyNames::new();
    names.register("kept.name").unwrap();
    let before = names.clone();
    let c = match DataComponent::from_json(text, &mut names) {
        Ok(c) => c,
        Err(_) => {
            assert_eq!(names, before, "a refused text registers nothing");
            return;
        }
    };
    assert!(DataComponent::from_bytes(c.as_bytes()).is_ok());
    assert_eq!(c.hole_bytes(), 0);
    // Per member of the text (at least 4 bytes: `"":1`) at most a map entry and one node of
    // a path (under 80 bytes together) and a copy of its name.
    let per_byte = 80 / 4 + 1;
    assert!(
        names.memory_usage() <= before.memory_usage() + per_byte * text.len(),
        "{} bytes of names for {} bytes of JSON",
        names.memory_usage(),
        text.len()
    );
    match c.to_json(&names) {
        Ok(json) => {
            let mut again = names.clone();
            let back = DataComponent::from_json(&json, &mut again).expect("written JSON reads");
            assert_eq!(back, c);
            assert_eq!(again, names, "the names read back were all registered");
        }
        // A value and an unnamed key under it (`{"kept": 1, "#…": 2}` where the hash is
        // `kept.name`'s) cannot be written as one object.
        Err(JsonError::PathConflict { .. }) => {}
        Err(e) => panic!("a component read from JSON could not be written: {e}"),
    }
});
