//! A character sheet in a `DataComponent`, as in Bitsquid's DataComponent article: read from the
//! restricted JSON with the key names kept in a `KeyNames` registry, edited twice from the same
//! base (a potion, a curse), each edit turned into a `diff` patch and both applied to the base.
//! Health and mana are integers, and so are the gold count (past 2^24, where an `f32` stops
//! being exact) and a quest giver's `Handle`; values set by a path string keep their name, so
//! the sheet writes its JSON without a registry. Input outside the restricted JSON is refused
//! with the path that broke the rule. Then the sheets of many entities share one `DataStore`,
//! which refuses stale keys and indices above its bound, is saved to bytes, loaded back with
//! every offset checked, compared value by value, and refused when the bytes are damaged.
//!
//! Needs the `json` feature:
//!
//! `cargo run --release --features json --example character_sheet [-- --quick]`

use std::time::{Duration, Instant};

use dod::data::{DataComponent, DataKey, DataStore, DecodeError, JsonError, KeyNames, Patch};
use dod::{data_key, Handle, InsertErrorKind};

const NAME: DataKey = data_key!("name");
const HEALTH: DataKey = data_key!("stats.health");
const MANA: DataKey = data_key!("stats.mana");
const DRUNK: DataKey = data_key!("status_effects.drunk");
const DELIRIOUS: DataKey = data_key!("status_effects.delirious");
const CURSED: DataKey = data_key!("status_effects.cursed");
const COLOR: DataKey = data_key!("color");
const BIOGRAPHY: DataKey = data_key!("biography");

const BASE: &str = r#"{
    "name": "The One",
    "stats": {"health": 100, "mana": 200},
    "status_effects": {"drunk": false, "delirious": true},
    "color": [0, 0.5, 0.5, 0.7]
}"#;

/// One line per change of a patch, with the key's name.
fn show_patch(patch: &Patch, names: &KeyNames) -> String {
    patch
        .iter()
        .map(|(k, v)| {
            let name = names.name(k).unwrap_or_else(|| k.to_string());
            match v {
                Some(v) => format!("{name} = {v:?}"),
                None => format!("{name} removed"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sheet of entity `i` of the crowd, as its JSON.
fn crowd_json(i: usize) -> String {
    let cursed = if i % 5 == 0 {
        r#", "cursed": "frailty""#
    } else {
        ""
    };
    format!(
        r#"{{"name": "Adventurer {i}",
            "stats": {{"health": {}, "mana": {}}},
            "status_effects": {{"drunk": {}, "delirious": {}{cursed}}},
            "color": [{}, 0.25, 0.5, 1]}}"#,
        50 + i % 100,
        10 * (i % 20),
        i % 3 == 0,
        i % 7 == 0,
        (i % 10) as f32 / 10.0,
    )
}

fn rd(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

/// Where the slot of the entity at `index` is in bytes from `DataStore::to_bytes`, read from
/// the layout that method documents: a 24-byte header with the slot count at offset 12, then
/// 12 bytes per slot in use (index, key tag, block offset | order) in order of index, then the
/// buffer.
fn slot_offset(bytes: &[u8], index: u32) -> usize {
    (0..rd(bytes, 12))
        .map(|n| 24 + 12 * n)
        .find(|&at| rd(bytes, at) == index as usize)
        .expect("the entity has a slot")
}

/// Where the component of the entity at `index` starts in bytes from `DataStore::to_bytes`.
fn component_offset(bytes: &[u8], index: u32) -> usize {
    let loc = rd(bytes, slot_offset(bytes, index) + 8);
    24 + 12 * rd(bytes, 12) + (loc & !31)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let crowd = if quick { 100 } else { 1_000 };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;

    // --- One sheet, two edits of the same base, merged. ---
    let mut names = KeyNames::new();
    let base = DataComponent::from_json(BASE, &mut names).expect("the base sheet is valid");
    assert_eq!(names.len(), 6);
    assert_eq!(base.get_str(NAME), Some("The One"));
    // Numbers without a fraction are integers; arrays hold floats.
    assert_eq!(base.get_i64(HEALTH), Some(100));
    assert_eq!(base.get_f32(HEALTH), None);
    assert_eq!(base.get_f32s(COLOR).unwrap().to_vec(), [0.0, 0.5, 0.5, 0.7]);
    println!("base:   {}", base.to_json(&names).unwrap());

    // One player drinks a potion.
    let mut potion = base.clone();
    potion.set(HEALTH, base.get_i64(HEALTH).unwrap() + 25);
    potion.set(DRUNK, true);
    let potion_patch = potion.diff(&base);
    // Another is cursed: a new key, less mana, and the curse replaces the delirium.
    assert_eq!(names.register("status_effects.cursed"), Ok(CURSED));
    let mut curse = base.clone();
    curse.set(MANA, base.get_i64(MANA).unwrap() - 50);
    curse.set(CURSED, "frailty");
    curse.remove(DELIRIOUS);
    let curse_patch = curse.diff(&base);
    println!("potion: {}", show_patch(&potion_patch, &names));
    println!("curse:  {}", show_patch(&curse_patch, &names));
    assert_eq!(potion_patch.len(), 2);
    assert_eq!(curse_patch.len(), 3, "two values and one tombstone");
    assert_eq!(curse_patch.get(DELIRIOUS), Some(None));

    // The edits touch different keys, so both patches apply, in either order.
    assert!(potion_patch
        .iter()
        .all(|(k, _)| curse_patch.get(k).is_none()));
    let mut merged = base.clone();
    merged.apply(&potion_patch);
    merged.apply(&curse_patch);
    let mut other_order = base.clone();
    other_order.apply(&curse_patch);
    other_order.apply(&potion_patch);
    assert_eq!(merged, other_order);
    // Every change of both edits is in, every key neither touched is as in the base.
    for patch in [&potion_patch, &curse_patch] {
        for (k, v) in patch.iter() {
            assert_eq!(merged.get(k), v);
        }
    }
    for (k, v) in base.iter() {
        if potion_patch.get(k).is_none() && curse_patch.get(k).is_none() {
            assert_eq!(merged.get(k), Some(v));
        }
    }
    assert_eq!(merged.get_i64(HEALTH), Some(125));
    assert_eq!(merged.get_i64(MANA), Some(150));
    assert_eq!(merged.get_bool(DRUNK), Some(true));
    assert_eq!(merged.get_str(CURSED), Some("frailty"));
    assert!(!merged.contains(DELIRIOUS));
    let merged_json = merged.to_json(&names).unwrap();
    println!("merged: {merged_json}");
    assert_eq!(
        DataComponent::from_json(&merged_json, &mut names).unwrap(),
        merged,
        "the JSON reads back as the same sheet"
    );

    // --- Integers past 2^24 and handles, and names kept from path strings. ---
    let quest_giver = Handle::new(3_000_000_000, 4, 1).unwrap();
    let mut loot = merged.clone();
    loot.set("inventory.gold", 16_777_217i64); // an f32 would round it to 16 777 216
    loot.set("quest.giver", quest_giver.to_bits() as i64);
    loot.set(data_key!("quest.step"), 2); // by key: no name kept
    assert_eq!(loot.get_i64("inventory.gold"), Some(16_777_217));
    let giver = loot
        .get_i64("quest.giver")
        .map(|b| Handle::from_bits(b as u64));
    assert_eq!(giver, Some(Some(quest_giver)));
    // The loot's own names cover the paths it was given as strings; `names` covers the rest,
    // and a key neither names ("quest.step") is written by its hash and still reads back.
    let own_names_only = loot.to_json(&KeyNames::new()).unwrap();
    println!("loot, own names only: {own_names_only}");
    assert!(own_names_only.contains(r#""inventory":{"gold":16777217}"#));
    assert!(own_names_only.contains(&format!("\"{}\":2", data_key!("quest.step"))));
    let loot_json = loot.to_json(&names).unwrap();
    println!("loot:   {loot_json}");
    let mut loot_names = KeyNames::new();
    assert_eq!(
        DataComponent::from_json(&loot_json, &mut loot_names).unwrap(),
        loot,
        "integers and unnamed keys read back exactly"
    );

    // --- Input outside the restricted JSON is refused, naming the path. ---
    let bad = [
        (
            r#"{"stats": {"health": null}}"#,
            JsonError::Null {
                path: "stats.health".into(),
            },
        ),
        (
            r#"{"inventory": {"bag": [["sword", "shield"]]}}"#,
            JsonError::NotNumbers {
                path: "inventory.bag".into(),
            },
        ),
    ];
    for (json, want) in bad {
        let before = names.len();
        let err = DataComponent::from_json(json, &mut names).unwrap_err();
        println!("refused {json}: {err}");
        assert_eq!(err, want);
        assert_eq!(names.len(), before, "a refused input registers no name");
    }

    // --- Many sheets in one store, saved and loaded. ---
    let start = Instant::now();
    // No entity index past a million: a corrupt or hostile index is refused, not allocated for.
    let mut store: DataStore = DataStore::new().with_max_index(1_000_000);
    let mut sheets: Vec<(Handle, DataComponent)> = Vec::with_capacity(crowd);
    for i in 0..crowd {
        // Entities as an allocator would hand them out: gaps, and generations past the first.
        let e = Handle::new(2 * i as u32, 1 + (i % 7) as u16, 0).unwrap();
        let mut sheet = DataComponent::from_json(&crowd_json(i), &mut names).unwrap();
        assert!(store.insert_data(e, &sheet), "a new entity");
        // Some grow after the fact and move to larger blocks of the store's buffer.
        if i % 10 == 0 {
            let bio = format!(
                "Adventurer {i} has seen {} dungeons and remembers none.",
                3 + i % 17
            );
            assert!(store.set(e, BIOGRAPHY, bio.as_str()));
            sheet.set(BIOGRAPHY, bio.as_str());
        }
        sheets.push((e, sheet));
    }
    names.register("biography").unwrap();
    let build = start.elapsed();
    assert_eq!(store.len(), crowd);

    // The store follows the entity allocator's generations: a stale handle cannot overwrite a
    // live entity's sheet, and an index past the bound is refused before any allocation.
    let (live, _) = sheets[1];
    let stale = Handle::new(live.index(), live.generation() - 1, 0).unwrap();
    let err = store.try_insert(stale).unwrap_err();
    println!("refused, a stale handle: {err}");
    assert_eq!(err.kind(), InsertErrorKind::StaleKey);
    let far = Handle::new(4_000_000_000, 1, 0).unwrap();
    let memory = store.memory_usage();
    let err = store.try_insert(far).unwrap_err();
    println!("refused, an index past the bound: {err}");
    assert_eq!(
        err.kind(),
        InsertErrorKind::IndexAboveMax {
            index: 4_000_000_000,
            max: 1_000_000
        }
    );
    assert_eq!(store.memory_usage(), memory);
    // Set by path string: the store keeps the name, and writes the sheet by it.
    assert!(store.set(live, "status_effects.poisoned", 3));
    let json = store.to_json(live, &names).unwrap().unwrap();
    assert!(json.contains(r#""poisoned":3"#), "{json}");
    sheets[1].1.set("status_effects.poisoned", 3);

    let start = Instant::now();
    let bytes = store.to_bytes();
    let save = start.elapsed();
    let start = Instant::now();
    let loaded: DataStore = DataStore::from_bytes(&bytes).expect("saved bytes load back");
    let load = start.elapsed();
    println!(
        "{crowd} sheets in one store: built in {:.3} ms, {} bytes saved in {:.3} ms, \
         checked and loaded in {:.3} ms",
        ms(build),
        bytes.len(),
        ms(save),
        ms(load)
    );

    // Value by value against the sheets kept on the side.
    assert_eq!(loaded.len(), sheets.len());
    let mut values = 0;
    for (e, sheet) in &sheets {
        let view = loaded.get(*e).expect("every entity is back");
        assert_eq!(view.len(), sheet.len());
        for (k, v) in sheet.iter() {
            assert_eq!(view.get(k), Some(v), "entity {e:?}, key {k}");
            values += 1;
        }
        let stale = Handle::new(e.index(), e.generation() + 1, 0).unwrap();
        assert!(
            loaded.get(stale).is_none(),
            "another generation reads nothing"
        );
    }
    assert!(loaded == store);
    let (e, _) = sheets[sheets.len() - 1];
    println!(
        "{values} values equal after loading; entity {}: {}",
        e.index(),
        loaded.get(e).unwrap().to_json(&names).unwrap()
    );

    // Damaged bytes are refused before anything reads them.
    let truncated = &bytes[..bytes.len() - 1];
    let err = DataStore::<Handle>::from_bytes(truncated).unwrap_err();
    println!("refused, one byte short: {err}");
    assert_eq!(err, DecodeError::BadCounts);

    let victim = sheets[crowd / 2].0.index();
    let mut bad_tag = bytes.clone();
    let comp = component_offset(&bad_tag, victim);
    let entries = u32::from_le_bytes(bad_tag[comp + 8..comp + 12].try_into().unwrap()) as usize;
    bad_tag[comp + 16 + 8 * entries] = 9; // the first entry's type tag
    let err = DataStore::<Handle>::from_bytes(&bad_tag).unwrap_err();
    println!("refused, a type tag overwritten: {err}");
    assert_eq!(
        err,
        DecodeError::InEntity {
            entity: victim,
            error: Box::new(DecodeError::BadTypeTag { entry: 0, tag: 9 }),
        }
    );

    let mut bad_block = bytes.clone();
    let loc_at = slot_offset(&bad_block, victim) + 8;
    // A 32-byte block (order 0) at 1 GiB, far past the end of the buffer.
    bad_block[loc_at..loc_at + 4].copy_from_slice(&0x4000_0000u32.to_le_bytes());
    let err = DataStore::<Handle>::from_bytes(&bad_block).unwrap_err();
    println!("refused, a block moved past the buffer: {err}");
    assert_eq!(err, DecodeError::BadBlock { entity: victim });
}
