//! Untrusted bytes: `DataView::new` and `DataComponent::from_bytes` either reject them or give
//! a value whose every accessor and mutator works without panicking. Integer records (type
//! tag 4, 8 bytes in the value area) are validated like the others; setting integers and
//! setting by path string (which keeps names on the side) leave the bytes valid.
#![no_main]

use dod::data::{DataComponent, DataKey, DataView, Value, ValueType};
use libfuzzer_sys::fuzz_target;

fn exercise(v: DataView<'_>) {
    let n = v.len();
    let mut count = 0;
    for (k, val) in v.iter() {
        assert_eq!(v.get(k), Some(val));
        assert!(v.contains(k));
        let _ = (v.get_f32(k), v.get_bool(k), v.get_str(k));
        // Each typed getter answers for its own type only.
        assert_eq!(v.get_i64(k), val.as_i64());
        assert_eq!(val.value_type() == ValueType::I64, v.get_i64(k).is_some());
        if let Some(a) = v.get_f32s(k) {
            let _ = a.to_vec();
        }
        count += 1;
    }
    assert_eq!(count, n);
    let _ = v.get("name");
    let _ = v.packed_size();
    let _ = format!("{v:?}");
}

fuzz_target!(|input: &[u8]| {
    // Most inputs get a valid magic, version and hash id, so the fuzzer spends its time on the
    // counts, offsets and values behind them.
    let prefixed;
    let data = if input.first().is_some_and(|b| b & 1 == 1) {
        &input[1..]
    } else {
        prefixed = [b"DODc\x01\x00\x01\x00", input.get(1..).unwrap_or(&[])].concat();
        &prefixed[..]
    };
    let Ok(view) = DataView::new(data) else {
        assert!(DataComponent::from_bytes(data).is_err());
        return;
    };
    exercise(view);
    let mut c = DataComponent::from_bytes(data).expect("a valid view is a valid component");
    assert_eq!(c.view(), view);
    let keys: Vec<DataKey> = c.iter().map(|(k, _)| k).collect();
    // Keys the input may or may not hold, at both ends of the hash range: lookups agree with
    // iteration, and setting then removing one leaves every other entry as it was.
    for raw in [0, 1, u32::MAX - 1, u32::MAX] {
        let k = DataKey::from_raw(raw);
        let held = keys.contains(&k);
        assert_eq!(view.contains(k), held);
        let mut d = c.clone();
        d.set(k, 2.5);
        assert_eq!(d.len(), view.len() + usize::from(!held));
        assert_eq!(d.get_f32(k), Some(2.5));
        // An integer over whatever was there, in place or in a new record.
        d.set(k, i64::MIN + i64::from(raw));
        assert_eq!(d.get(k), Some(Value::I64(i64::MIN + i64::from(raw))));
        assert_eq!(d.len(), view.len() + usize::from(!held));
        for &other in keys.iter().filter(|&&o| o != k) {
            assert_eq!(d.get(other), view.get(other));
        }
        assert!(d.remove(k));
        assert!(!d.remove(k));
        assert_eq!(d.len(), view.len() - usize::from(held));
    }
    // Merging the input into a component that holds another key keeps both.
    let mut merged = DataComponent::new();
    merged.set("hp", 7.0);
    merged.merge_from(view);
    for &k in &keys {
        assert_eq!(merged.get(k), view.get(k));
    }
    if !view.contains("hp") {
        assert_eq!(merged.get_f32("hp"), Some(7.0));
        assert_eq!(merged.len(), view.len() + 1);
    }
    for (i, k) in keys.iter().enumerate() {
        match i % 5 {
            0 => c.set(*k, "a string that is longer than most"),
            1 => c.set(*k, 1.5),
            2 => c.set(*k, &[1.0, 2.0, 3.0]),
            3 => c.set(*k, i64::MAX - i as i64),
            _ => {
                c.remove(*k);
            }
        }
    }
    // By path string: the name is kept beside the bytes, which stay what they would be.
    c.set("fresh", "value");
    c.set("fresh.id", i64::MAX);
    assert_eq!(c.get_i64("fresh.id"), Some(i64::MAX));
    assert!(c.names().name(DataKey::from_path("fresh.id")).is_some());
    exercise(c.view());
    let reloaded = DataComponent::from_bytes(c.as_bytes()).expect("own bytes load");
    assert_eq!(reloaded, c);
    assert!(reloaded.names().is_empty());
    let patch = c.diff(view);
    let mut back = DataComponent::from(view);
    back.apply(&patch);
    assert_eq!(back, c);
    c.compact();
    assert_eq!(DataView::new(c.as_bytes()).map(|v| v.len()), Ok(c.len()));
});
