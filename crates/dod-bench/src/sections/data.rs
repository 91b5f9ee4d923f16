//! `data`: per-entity dynamic data. Every entity has a character sheet (name,
//! stats.health, stats.mana, status_effects.drunk, status_effects.delirious) plus 0..8 random
//! extra keys. Contenders: a `DataComponent` per entity, one `DataStore`, the naive tree
//! (`HashMap<String, Value>` with nested maps), `serde_json::Value`, `FxHashMap<u32, Value>`
//! (hashed keys, std allocations) and, for saving and loading, `flexbuffers`, a plain copy of
//! the `DataStore`'s bytes and the store's load stripped to copying and validating (the floor
//! of its layout).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hint::black_box;
use std::rc::Rc;

use dod::data::{DataComponent, DataKey, DataStore, DataView, OwnedValue, Value};
use dod::Handle;
use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use crate::alloc_counter;
use crate::harness::{per_elem, progress, time, Config, Rng, Sampler, Table};

/// Every path the workload uses: the sheet, then the extras.
const PATHS: &[&[&str]] = &[
    &["name"],
    &["stats", "health"],
    &["stats", "mana"],
    &["status_effects", "drunk"],
    &["status_effects", "delirious"],
    &["inventory", "gold"],
    &["quests", "main", "stage"],
    &["flags", "met_king"],
    &["title"],
    &["position"],
    &["resist", "fire"],
    &["resist", "ice"],
    &["dialogue", "last"],
];
const NAME: usize = 0;
const HEALTH: usize = 1;

/// One entity's data as the workload generates it.
struct Spec {
    entries: Vec<(usize, OwnedValue)>,
}

fn specs(n: usize, rng: &mut Rng) -> Vec<Spec> {
    (0..n)
        .map(|i| {
            let mut entries = vec![
                (0, OwnedValue::String(format!("Character {i}"))),
                (1, OwnedValue::F32((rng.unit() * 200.0).round() as f32)),
                (2, OwnedValue::F32(rng.below(300) as f32)),
                (3, OwnedValue::Bool(rng.below(2) == 0)),
                (4, OwnedValue::Bool(rng.below(2) == 0)),
            ];
            let mut extras: Vec<usize> = (5..PATHS.len()).collect();
            rng.shuffle(&mut extras);
            for &p in &extras[..rng.below(9)] {
                let v = match p {
                    7 => OwnedValue::Bool(true),
                    8 => OwnedValue::String("the Brave".into()),
                    9 => OwnedValue::F32s(vec![1.0, 2.0, 3.0]),
                    12 => OwnedValue::String("Well met, traveller.".into()),
                    _ => OwnedValue::F32(rng.below(1000) as f32),
                };
                entries.push((p, v));
            }
            Spec { entries }
        })
        .collect()
}

/// What a get returns, reduced to a number all contenders agree on. The value is *used*:
/// a string's first and last bytes are read, an array's floats summed, as a caller would.
fn weigh(v: Option<Value<'_>>) -> f64 {
    match v {
        None => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(b)) + 0.5,
        Some(Value::F32(f)) => f64::from(f),
        Some(Value::Str(s)) => str_weight(s),
        Some(Value::F32s(a)) => a.iter().map(f64::from).sum::<f64>() * 11.0,
        Some(Value::I64(i)) => i as f64,
    }
}

fn str_weight(s: &str) -> f64 {
    let b = s.as_bytes();
    s.len() as f64 * 7.0
        + b.first().map_or(0.0, |&x| f64::from(x))
        + b.last().map_or(0.0, |&x| f64::from(x))
}

// ---- the naive tree --------------------------------------------------------------------

#[derive(Clone)]
enum Naive {
    Bool(bool),
    F32(f32),
    Str(String),
    Arr(Vec<f32>),
    Obj(HashMap<String, Naive>),
}

fn naive_value(v: &OwnedValue) -> Naive {
    match v {
        OwnedValue::Bool(b) => Naive::Bool(*b),
        OwnedValue::F32(f) => Naive::F32(*f),
        OwnedValue::String(s) => Naive::Str(s.clone()),
        OwnedValue::F32s(a) => Naive::Arr(a.clone()),
        OwnedValue::I64(_) => unreachable!("the workload holds no integers"),
    }
}

/// Sets the value at `segs`, allocating a key only for a segment the tree does not have yet
/// (looking a segment up twice when it is there: a lookup that hands out the entry and then
/// inserts does not borrow-check on stable Rust).
fn naive_set(t: &mut HashMap<String, Naive>, segs: &[&str], v: Naive) {
    let (last, parents) = segs.split_last().expect("paths have a segment");
    let mut obj = t;
    for s in parents {
        if !obj.contains_key(*s) {
            obj.insert((*s).to_string(), Naive::Obj(HashMap::new()));
        }
        obj = match obj.get_mut(*s) {
            Some(Naive::Obj(m)) => m,
            _ => unreachable!("the workload's paths never conflict"),
        };
    }
    match obj.get_mut(*last) {
        Some(slot) => *slot = v,
        None => {
            obj.insert((*last).to_string(), v);
        }
    }
}

fn naive_get<'a>(t: &'a HashMap<String, Naive>, segs: &[&str]) -> Option<Value<'a>> {
    let (last, parents) = segs.split_last()?;
    let mut obj = t;
    for s in parents {
        match obj.get(*s)? {
            Naive::Obj(m) => obj = m,
            _ => return None,
        }
    }
    Some(match obj.get(*last)? {
        Naive::Bool(b) => Value::Bool(*b),
        Naive::F32(f) => Value::F32(*f),
        Naive::Str(s) => Value::Str(s),
        Naive::Arr(a) => Value::from(a),
        Naive::Obj(_) => return None,
    })
}

// ---- serde_json::Value ------------------------------------------------------------------

fn json_value(v: &OwnedValue) -> Json {
    match v {
        OwnedValue::Bool(b) => Json::Bool(*b),
        OwnedValue::F32(f) => Json::from(f64::from(*f)),
        OwnedValue::String(s) => Json::String(s.clone()),
        OwnedValue::F32s(a) => Json::Array(a.iter().map(|f| Json::from(f64::from(*f))).collect()),
        OwnedValue::I64(i) => Json::from(*i),
    }
}

/// Sets the value at `segs`, allocating a key only for a segment the tree does not have yet,
/// as [`naive_set`].
fn json_set(t: &mut Json, segs: &[&str], v: Json) {
    let mut obj = t;
    for s in segs {
        let map = obj.as_object_mut().expect("objects on the way");
        if !map.contains_key(*s) {
            map.insert((*s).to_string(), Json::Object(Default::default()));
        }
        obj = map.get_mut(*s).expect("just made");
    }
    *obj = v;
}

/// Floats of a JSON array, kept to weigh them like the others.
fn json_get(t: &Json, segs: &[&str]) -> f64 {
    let mut obj = t;
    for s in segs {
        match obj.as_object().and_then(|m| m.get(*s)) {
            Some(v) => obj = v,
            None => return 0.0,
        }
    }
    match obj {
        Json::Bool(b) => f64::from(u8::from(*b)) + 0.5,
        Json::Number(n) => n.as_f64().unwrap_or(0.0),
        Json::String(s) => str_weight(s),
        Json::Array(a) => a.iter().filter_map(Json::as_f64).sum::<f64>() * 11.0,
        _ => 0.0,
    }
}

// ---- FxHashMap<u32, Value> ----------------------------------------------------------------

#[derive(Clone)]
enum FxVal {
    Bool(bool),
    F32(f32),
    Str(String),
    Arr(Vec<f32>),
}

fn fx_value(v: &OwnedValue) -> FxVal {
    match v {
        OwnedValue::Bool(b) => FxVal::Bool(*b),
        OwnedValue::F32(f) => FxVal::F32(*f),
        OwnedValue::String(s) => FxVal::Str(s.clone()),
        OwnedValue::F32s(a) => FxVal::Arr(a.clone()),
        OwnedValue::I64(_) => unreachable!("the workload holds no integers"),
    }
}

fn fx_get(m: &FxHashMap<u32, FxVal>, k: u32) -> Option<Value<'_>> {
    Some(match m.get(&k)? {
        FxVal::Bool(b) => Value::Bool(*b),
        FxVal::F32(f) => Value::F32(*f),
        FxVal::Str(s) => Value::Str(s),
        FxVal::Arr(a) => Value::from(a),
    })
}

// ---- the contenders ----------------------------------------------------------------------

const COMPONENT: &str = "DataComponent per entity";
const STORE: &str = "DataStore";
const NAIVE: &str = "naive tree (HashMap<String, Value>, nested)";
const JSON: &str = "serde_json::Value";
const FX: &str = "FxHashMap<u32, Value>";
const FLEX: &str = "flexbuffers (of the serde_json values)";
const COPY: &str = "plain copy of the DataStore bytes";
const LOAD_FLOOR: &str = "DataStore's load, stripped (floor)";

const COLS: &[&str] = &[
    "build all",
    "random get",
    "set a float",
    "set a growing string",
    "clone one entity",
    "save all",
    "load all",
];

fn entity(i: usize) -> Handle {
    Handle::new(i as u32, 1, 0).expect("index in range")
}

/// Builds with the counting allocator watching: (result, allocations, live bytes added).
fn counted<R>(f: impl FnOnce() -> R) -> (R, usize, isize) {
    let (a0, b0) = (alloc_counter::allocations(), alloc_counter::live_bytes());
    let r = f();
    (
        r,
        alloc_counter::allocations() - a0,
        alloc_counter::live_bytes() - b0,
    )
}

fn build_components(specs: &[Spec], keys: &[DataKey]) -> Vec<DataComponent> {
    specs
        .iter()
        .map(|s| {
            let mut c = DataComponent::new();
            for (p, v) in &s.entries {
                c.set(keys[*p], v);
            }
            c
        })
        .collect()
}

fn fill_store(store: &mut DataStore, specs: &[Spec], keys: &[DataKey]) {
    for (i, s) in specs.iter().enumerate() {
        store.insert(entity(i));
        for (p, v) in &s.entries {
            let set = store.set(entity(i), keys[*p], v);
            assert!(set, "entity {i} was just given data");
        }
    }
}

fn build_naive(specs: &[Spec]) -> Vec<HashMap<String, Naive>> {
    specs
        .iter()
        .map(|s| {
            let mut t = HashMap::new();
            for (p, v) in &s.entries {
                naive_set(&mut t, PATHS[*p], naive_value(v));
            }
            t
        })
        .collect()
}

fn build_json(specs: &[Spec]) -> Vec<Json> {
    specs
        .iter()
        .map(|s| {
            let mut t = Json::Object(Default::default());
            for (p, v) in &s.entries {
                json_set(&mut t, PATHS[*p], json_value(v));
            }
            t
        })
        .collect()
}

fn build_fx(specs: &[Spec], keys: &[DataKey]) -> Vec<FxHashMap<u32, FxVal>> {
    specs
        .iter()
        .map(|s| {
            let mut m = FxHashMap::default();
            for (p, v) in &s.entries {
                m.insert(keys[*p].to_raw(), fx_value(v));
            }
            m
        })
        .collect()
}

fn save_components(cs: &[DataComponent]) -> Vec<u8> {
    let total: usize = cs.iter().map(|c| 4 + c.as_bytes().len()).sum();
    let mut out = Vec::with_capacity(total);
    for c in cs {
        out.extend_from_slice(&(c.as_bytes().len() as u32).to_le_bytes());
        out.extend_from_slice(c.as_bytes());
    }
    out
}

fn load_components(mut b: &[u8]) -> Vec<DataComponent> {
    let mut out = Vec::new();
    while b.len() >= 4 {
        let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        out.push(DataComponent::from_bytes(&b[4..4 + len]).expect("saved bytes load"));
        b = &b[4 + len..];
    }
    out
}

/// What every contender runs: the same entities, random gets, and entities to change.
struct Work {
    n: usize,
    ops: usize,
    specs: Vec<Spec>,
    keys: Vec<DataKey>,
    /// Random gets: (entity, path).
    queries: Vec<(usize, usize)>,
    /// Entities to change or clone: every entity once in random order, again and again.
    targets: Vec<usize>,
    /// The growing string the "set string" column writes, a longer prefix each time.
    long: String,
}

/// What a contender holds per entity, from the counting allocator.
struct Memory {
    bytes: isize,
    allocs: usize,
    re_allocs: usize,
}

/// One contender, built and ready to be measured: a sampler per column of [`COLS`] (`None`:
/// not applicable), what it holds, and its answer to the random gets.
struct Built<'w> {
    name: &'static str,
    samplers: Vec<Option<Sampler<'w>>>,
    memory: Option<Memory>,
    sum: Option<f64>,
}

/// A contender's state, shared by its samplers (one column runs at a time).
type Shared<S> = Rc<RefCell<S>>;

/// A sampler of `work`, which builds something the sample then drops, outside the timing.
fn timed<'w, R>(mut work: impl FnMut() -> R + 'w) -> Option<Sampler<'w>> {
    Some(Box::new(move || time(&mut work).0))
}

/// A sampler of `work` on the contender's state, borrowed outside the timing.
fn on<'w, S: 'w, R>(
    state: &Shared<S>,
    mut work: impl FnMut(&mut S) -> R + 'w,
) -> Option<Sampler<'w>> {
    let state = Rc::clone(state);
    Some(Box::new(move || {
        let mut s = state.borrow_mut();
        time(|| work(&mut s)).0
    }))
}

/// A sampler of `load` on the bytes `save` makes of the state as the first (uncounted) sample
/// finds it: after the set columns, as a program would save it.
fn on_saved<'w, S: 'w, B: 'w, R>(
    state: &Shared<S>,
    save: impl Fn(&S) -> B + 'w,
    mut load: impl FnMut(&B) -> R + 'w,
) -> Option<Sampler<'w>> {
    let state = Rc::clone(state);
    let mut saved: Option<B> = None;
    Some(Box::new(move || {
        let b = saved.get_or_insert_with(|| save(&state.borrow()));
        time(|| load(b)).0
    }))
}

/// Times cloning `items[e]` for every target `e`.
fn clones<'w, C: Clone + HasLen + 'w>(w: &'w Work, items: &Shared<Vec<C>>) -> Option<Sampler<'w>> {
    on(items, move |items| {
        w.targets
            .iter()
            .map(|&e| black_box(items[e].clone()).len())
            .sum::<usize>()
    })
}

/// A length read from a clone, so that the clone is used.
trait HasLen {
    fn len(&self) -> usize;
}

impl HasLen for DataComponent {
    fn len(&self) -> usize {
        DataComponent::len(self)
    }
}

impl<K, V, S> HasLen for HashMap<K, V, S> {
    fn len(&self) -> usize {
        HashMap::len(self)
    }
}

/// Builds with the counting allocator watching, then clears and builds again: the value and
/// what it holds.
fn built_counted<T>(build: impl FnOnce() -> T, rebuild: impl FnOnce(&mut T)) -> (T, Memory) {
    let (mut v, allocs, bytes) = counted(build);
    let (_, re_allocs, _) = counted(|| rebuild(&mut v));
    (
        v,
        Memory {
            bytes,
            allocs,
            re_allocs,
        },
    )
}

/// A `DataComponent` per entity.
fn component(w: &Work) -> Built<'_> {
    let (cs, memory) = built_counted(
        || build_components(&w.specs, &w.keys),
        |cs| {
            for (c, s) in cs.iter_mut().zip(&w.specs) {
                c.clear();
                for (p, v) in &s.entries {
                    c.set(w.keys[*p], v);
                }
            }
        },
    );
    let get = move |cs: &mut Vec<DataComponent>| {
        w.queries
            .iter()
            .map(|&(e, k)| weigh(cs[e].get(w.keys[k])))
            .sum::<f64>()
    };
    let cs = Rc::new(RefCell::new(cs));
    let sum = get(&mut cs.borrow_mut());
    let mut lens = vec![16usize; w.n];
    Built {
        name: COMPONENT,
        samplers: vec![
            timed(move || build_components(&w.specs, &w.keys)),
            on(&cs, get),
            on(&cs, move |cs| {
                for (i, &e) in w.targets.iter().enumerate() {
                    cs[e].set(w.keys[HEALTH], i as f32);
                }
            }),
            on(&cs, move |cs| {
                for &e in &w.targets {
                    lens[e] += 1;
                    cs[e].set(w.keys[NAME], &w.long[..lens[e]]);
                }
            }),
            clones(w, &cs),
            on(&cs, |cs| save_components(cs)),
            on_saved(&cs, |cs| save_components(cs), |b| load_components(b)),
        ],
        memory: Some(memory),
        sum: Some(sum),
    }
}

/// One `DataStore` for every entity; also returns the store, which [`plain_copy`] saves.
fn store(w: &Work) -> (Built<'_>, Shared<DataStore>) {
    let (store, memory) = built_counted(
        || {
            let mut s = DataStore::new();
            fill_store(&mut s, &w.specs, &w.keys);
            s
        },
        |s| {
            s.clear();
            fill_store(s, &w.specs, &w.keys);
        },
    );
    let get = move |s: &mut DataStore| {
        w.queries
            .iter()
            .map(|&(e, k)| weigh(s.get_value(entity(e), w.keys[k])))
            .sum::<f64>()
    };
    let st = Rc::new(RefCell::new(store));
    let sum = get(&mut st.borrow_mut());
    let mut lens = vec![16usize; w.n];
    let built = Built {
        name: STORE,
        samplers: vec![
            timed(move || {
                let mut s = DataStore::new();
                fill_store(&mut s, &w.specs, &w.keys);
                s
            }),
            on(&st, get),
            on(&st, move |s| {
                let mut set = 0;
                for (i, &e) in w.targets.iter().enumerate() {
                    set += usize::from(s.set(entity(e), w.keys[HEALTH], i as f32));
                }
                assert_eq!(set, w.targets.len(), "every target has data");
            }),
            on(&st, move |s| {
                let mut set = 0;
                for &e in &w.targets {
                    lens[e] += 1;
                    set += usize::from(s.set(entity(e), w.keys[NAME], &w.long[..lens[e]]));
                }
                assert_eq!(set, w.targets.len(), "every target has data");
            }),
            on(&st, move |s| {
                w.targets
                    .iter()
                    .map(|&e| black_box(DataComponent::from(s.get(entity(e)).unwrap())).len())
                    .sum::<usize>()
            }),
            on(&st, |s| s.to_bytes()),
            on_saved(
                &st,
                |s| s.to_bytes(),
                |b| DataStore::<Handle>::from_bytes(b).unwrap(),
            ),
        ],
        memory: Some(memory),
        sum: Some(sum),
    };
    (built, st)
}

/// The floor of saving and loading a `DataStore`: a plain copy of its bytes, in both columns.
fn plain_copy<'w>(store: &Shared<DataStore>) -> Built<'w> {
    let copy = || on_saved(store, |s| s.to_bytes(), |b| b.to_vec());
    Built {
        name: COPY,
        samplers: vec![None, None, None, None, None, copy(), copy()],
        memory: None,
        sum: None,
    }
}

/// The floor of a `DataStore` load for its layout: the buffer copied in one piece, then each
/// component in it validated, in buffer order. What the load does besides is left out: reading
/// and checking the slots, building the slot table, putting the blocks in buffer order and
/// checking that none overlap, rebuilding the allocator. The blocks are found from the saved
/// bytes before the timing.
fn load_floor<'w>(store: &Shared<DataStore>) -> Built<'w> {
    let load = on_saved(
        store,
        |s| {
            let bytes = s.to_bytes();
            let (arena, blocks) = component_blocks(&bytes);
            assert_eq!(blocks.len(), s.len(), "a block per entity with data");
            (bytes, arena, blocks)
        },
        |(bytes, arena, blocks)| {
            let copy = bytes[*arena..].to_vec();
            for &(start, end) in blocks {
                black_box(DataView::new(&copy[start..end]).expect("a saved component validates"));
            }
            copy
        },
    );
    Built {
        name: LOAD_FLOOR,
        samplers: vec![None, None, None, None, None, None, load],
        memory: None,
        sum: None,
    }
}

/// Where the buffer starts in a `DataStore`'s bytes, and the blocks (start, end) of its live
/// components in the buffer, in buffer order: read from the format `DataStore::to_bytes`
/// documents (a 24-byte header whose slot count is at 12, then 12 bytes per slot: index, tag
/// whose bit 31 is set if the slot holds nothing, block offset | order, the block being
/// `32 << order` bytes).
fn component_blocks(b: &[u8]) -> (usize, Vec<(usize, usize)>) {
    let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let arena = 24 + 12 * word(12) as usize;
    let mut blocks: Vec<(usize, usize)> = (24..arena)
        .step_by(12)
        .filter(|&at| word(at + 4) & (1 << 31) == 0)
        .map(|at| {
            let loc = word(at + 8);
            let start = (loc & !31) as usize;
            (start, start + (32 << (loc & 31)))
        })
        .collect();
    blocks.sort_unstable();
    (arena, blocks)
}

/// The naive tree per entity.
fn naive(w: &Work) -> Built<'_> {
    let (ts, memory) = built_counted(
        || build_naive(&w.specs),
        |ts| {
            for (tree, s) in ts.iter_mut().zip(&w.specs) {
                tree.clear();
                for (p, v) in &s.entries {
                    naive_set(tree, PATHS[*p], naive_value(v));
                }
            }
        },
    );
    let get = move |ts: &mut Vec<HashMap<String, Naive>>| {
        w.queries
            .iter()
            .map(|&(e, k)| weigh(naive_get(&ts[e], PATHS[k])))
            .sum::<f64>()
    };
    let ts = Rc::new(RefCell::new(ts));
    let sum = get(&mut ts.borrow_mut());
    let mut lens = vec![16usize; w.n];
    Built {
        name: NAIVE,
        samplers: vec![
            timed(move || build_naive(&w.specs)),
            on(&ts, get),
            on(&ts, move |ts| {
                for (i, &e) in w.targets.iter().enumerate() {
                    naive_set(&mut ts[e], PATHS[HEALTH], Naive::F32(i as f32));
                }
            }),
            on(&ts, move |ts| {
                for &e in &w.targets {
                    lens[e] += 1;
                    naive_set(
                        &mut ts[e],
                        PATHS[NAME],
                        Naive::Str(w.long[..lens[e]].to_string()),
                    );
                }
            }),
            clones(w, &ts),
            None,
            None,
        ],
        memory: Some(memory),
        sum: Some(sum),
    }
}

/// A `serde_json::Value` per entity; also returns the values, which [`flexbuffers`] saves.
fn json(w: &Work) -> (Built<'_>, Shared<Vec<Json>>) {
    let (js, memory) = built_counted(
        || build_json(&w.specs),
        |js| {
            for (j, s) in js.iter_mut().zip(&w.specs) {
                if let Some(m) = j.as_object_mut() {
                    m.clear();
                }
                for (p, v) in &s.entries {
                    json_set(j, PATHS[*p], json_value(v));
                }
            }
        },
    );
    let get = move |js: &mut Vec<Json>| {
        w.queries
            .iter()
            .map(|&(e, k)| json_get(&js[e], PATHS[k]))
            .sum::<f64>()
    };
    let js = Rc::new(RefCell::new(js));
    let sum = get(&mut js.borrow_mut());
    let mut lens = vec![16usize; w.n];
    let built = Built {
        name: JSON,
        samplers: vec![
            timed(move || build_json(&w.specs)),
            on(&js, get),
            on(&js, move |js| {
                for (i, &e) in w.targets.iter().enumerate() {
                    json_set(&mut js[e], PATHS[HEALTH], Json::from(i as f32 as f64));
                }
            }),
            on(&js, move |js| {
                for &e in &w.targets {
                    lens[e] += 1;
                    json_set(
                        &mut js[e],
                        PATHS[NAME],
                        Json::String(w.long[..lens[e]].to_string()),
                    );
                }
            }),
            on(&js, move |js| {
                w.targets
                    .iter()
                    .map(|&e| black_box(js[e].clone()).is_object() as usize)
                    .sum::<usize>()
            }),
            on(&js, |js| serde_json::to_vec(js).unwrap()),
            on_saved(
                &js,
                |js| serde_json::to_vec(js).unwrap(),
                |b| serde_json::from_slice::<Vec<Json>>(b).unwrap(),
            ),
        ],
        memory: Some(memory),
        sum: Some(sum),
    };
    (built, js)
}

/// flexbuffers, saving and loading the serde_json values.
fn flexbuffers<'w>(js: &Shared<Vec<Json>>) -> Built<'w> {
    Built {
        name: FLEX,
        samplers: vec![
            None,
            None,
            None,
            None,
            None,
            on(js, |js| flexbuffers::to_vec(&*js).unwrap()),
            on_saved(
                js,
                |js| flexbuffers::to_vec(js).unwrap(),
                |b| flexbuffers::from_slice::<Vec<Json>>(b).unwrap(),
            ),
        ],
        memory: None,
        sum: None,
    }
}

/// An `FxHashMap<u32, Value>` per entity, keyed by the paths' hashes.
fn fx(w: &Work) -> Built<'_> {
    let (ms, memory) = built_counted(
        || build_fx(&w.specs, &w.keys),
        |ms| {
            for (m, s) in ms.iter_mut().zip(&w.specs) {
                m.clear();
                for (p, v) in &s.entries {
                    m.insert(w.keys[*p].to_raw(), fx_value(v));
                }
            }
        },
    );
    let get = move |ms: &mut Vec<FxHashMap<u32, FxVal>>| {
        w.queries
            .iter()
            .map(|&(e, k)| weigh(fx_get(&ms[e], w.keys[k].to_raw())))
            .sum::<f64>()
    };
    let ms = Rc::new(RefCell::new(ms));
    let sum = get(&mut ms.borrow_mut());
    let mut lens = vec![16usize; w.n];
    Built {
        name: FX,
        samplers: vec![
            timed(move || build_fx(&w.specs, &w.keys)),
            on(&ms, get),
            on(&ms, move |ms| {
                for (i, &e) in w.targets.iter().enumerate() {
                    ms[e].insert(w.keys[HEALTH].to_raw(), FxVal::F32(i as f32));
                }
            }),
            on(&ms, move |ms| {
                for &e in &w.targets {
                    lens[e] += 1;
                    ms[e].insert(
                        w.keys[NAME].to_raw(),
                        FxVal::Str(w.long[..lens[e]].to_string()),
                    );
                }
            }),
            clones(w, &ms),
            None,
            None,
        ],
        memory: Some(memory),
        sum: Some(sum),
    }
}

/// The section.
pub const SECTION: super::Section = super::Section {
    name: "data",
    about:
        "DataComponent and DataStore against a naive tree, serde_json, FxHashMap and flexbuffers",
    run,
};

fn run(cfg: &Config) -> Vec<Table> {
    let large = cfg.n_or(100_000, 10_000);
    let mut tables = Vec::new();
    for n in [1_000, large] {
        tables.extend(run_size(cfg, n));
    }
    tables
}

fn run_size(cfg: &Config, n: usize) -> Vec<Table> {
    progress(format!("data: {n} entities"));
    let mut rng = cfg.rng("data");
    let specs = specs(n, &mut rng);
    let keys: Vec<DataKey> = PATHS.iter().map(|p| DataKey::from_segments(*p)).collect();
    let ops = n.clamp(10_000, 100_000);
    let queries: Vec<(usize, usize)> = (0..ops)
        .map(|_| (rng.below(n), rng.below(PATHS.len())))
        .collect();
    let order = rng.permutation(n);
    let targets: Vec<usize> = (0..ops).map(|i| order[i % n]).collect();
    let w = Work {
        n,
        ops,
        specs,
        keys,
        queries,
        targets,
        long: "n".repeat(ops + 64),
    };

    let mut t = Table::new(
        "data",
        format!("data: {n} entities, time"),
        "ns per entity (build, save, load) or per operation (get, set, clone)",
    )
    .columns(COLS);
    let mut mem = Table::new(
        "data",
        format!("data: {n} entities, memory"),
        "per entity: heap bytes kept, heap allocations to build, heap allocations to build again after clear()",
    )
    .columns(&["bytes", "allocations, build", "allocations, rebuild"]);

    // Every contender is built first; then the contenders of each column are measured
    // together, column after column, in the order of COLS (the set columns change the values
    // the clone, save and load columns then work on, for every contender alike).
    let (store_row, store_state) = store(&w);
    let (json_row, json_values) = json(&w);
    let mut contenders = vec![
        component(&w),
        store_row,
        plain_copy(&store_state),
        load_floor(&store_state),
        naive(&w),
        json_row,
        flexbuffers(&json_values),
        fx(&w),
    ];
    let rows = contenders
        .iter_mut()
        .map(|c| (c.name.to_string(), std::mem::take(&mut c.samplers)))
        .collect();
    progress(format!("data: {n} entities, measuring"));
    // Build, save and load are per entity; the others per operation.
    t.measure_rows(cfg.reps, rows, |c, d| {
        per_elem(d, if matches!(c, 0 | 5 | 6) { w.n } else { w.ops })
    });
    for c in &contenders {
        if let Some(m) = &c.memory {
            mem.row(
                c.name,
                vec![
                    Some(m.bytes as f64 / n as f64),
                    Some(m.allocs as f64 / n as f64),
                    Some(m.re_allocs as f64 / n as f64),
                ],
            );
        }
    }
    let sums: Vec<(&str, f64)> = contenders
        .iter()
        .filter_map(|c| Some((c.name, c.sum?)))
        .collect();
    let store_bytes = store_state.borrow().to_bytes().len();

    // Every contender answered the same random gets (the sheet's values are the same data).
    let first = sums[0].1;
    for (name, s) in &sums {
        assert!(
            (s - first).abs() <= 1e-6 * first.abs().max(1.0),
            "{name} answered the random gets differently: {s} vs {first}"
        );
    }

    let r = |row: &str, of: &str, col: &str| t.ratio(row, of, col).unwrap_or(f64::NAN);
    t.note(format!(
        "Targets: random get >= 5x faster than the naive tree: {:.1}x (DataComponent), {:.1}x (DataStore); \
         <= 1.0x FxHashMap<u32, Value>: {:.2}x (DataComponent), {:.2}x (DataStore). \
         DataStore load (validate + copy) <= 3x a plain copy of its bytes: {:.2}x; the load stripped to the copy \
         and the validation of each component (the floor of its layout): {:.2}x. Save is one copy of the buffer \
         (plus the 12-byte slot per entity): {:.2}x the plain copy.",
        1.0 / r(COMPONENT, NAIVE, "random get"),
        1.0 / r(STORE, NAIVE, "random get"),
        r(COMPONENT, FX, "random get"),
        r(STORE, FX, "random get"),
        r(STORE, COPY, "load all"),
        r(LOAD_FLOOR, COPY, "load all"),
        r(STORE, COPY, "save all"),
    ));
    t.note(format!(
        "The DataStore's saved bytes: {store_bytes} ({:.0} per entity). A random get reads the value it gets \
         (a string's first and last bytes, an array's floats). Setting a growing string: \
         the std-based rows build a new String per set (the value arrives as text), the dod rows copy it into their buffer.",
        store_bytes as f64 / n as f64
    ));
    let m = |row: &str, of: &str| mem.ratio(row, of, "bytes").unwrap_or(f64::NAN);
    mem.note(format!(
        "Target: bytes per entity <= 0.25x the naive tree: {:.2}x (DataComponent), {:.2}x (DataStore). \
         DataStore: {} heap allocations per entity once the buffer has grown (the rebuild column).",
        m(COMPONENT, NAIVE),
        m(STORE, NAIVE),
        mem.get(STORE, "allocations, rebuild").unwrap_or(f64::NAN),
    ));
    vec![t, mem]
}
