//! Pool against a model (a `HashMap<Handle, u16>` of live items, every slot's generation, and
//! the holes in FIFO order with the `min_free` rule), with stale and forged handles, checked
//! after every step: every insertion must return the key the model predicts, under both reuse
//! policies, switched and re-tuned along the way. Plus arbitrary bytes fed to the serde
//! reader.
//!
//! The shared `Op` enum has no pool-specific variants, so this target reads three of them its
//! own way: `Sort` switches the reuse policy, `Defragment(n)` sets `min_free` to `n % 8`, and
//! `ShrinkToFit` replaces the pool by a clone.
#![no_main]

use std::collections::{BTreeSet, HashMap, VecDeque};

use dod::pool::Reuse;
use dod::{Handle, Handle32, Pool};
use dod_fuzz::Op;
use libfuzzer_sys::fuzz_target;

struct Model {
    reuse: Reuse,
    min_free: u32,
    type_id: u16,
    /// Per slot: the generation of its current or last item, and whether it holds one.
    slots: Vec<(u16, bool)>,
    /// The holes that are not retired, in slot order.
    holes: BTreeSet<u32>,
    /// Under `Fifo`, the same holes, oldest first.
    fifo: VecDeque<u32>,
    live: HashMap<Handle, u16>,
}

impl Model {
    fn reusable(&self, i: usize) -> bool {
        let (g, live) = self.slots[i];
        !live && g < u16::MAX
    }

    fn next_key(&self) -> Handle {
        let i = match self.reuse {
            Reuse::Fifo if self.fifo.len() > self.min_free as usize => Some(self.fifo[0]),
            Reuse::Fifo => None,
            Reuse::LowestFirst => self.holes.first().copied(),
        };
        match i {
            Some(i) => Handle::new(i, self.slots[i as usize].0 + 1, self.type_id).unwrap(),
            None => Handle::new(self.slots.len() as u32, 1, self.type_id).unwrap(),
        }
    }

    fn insert(&mut self, h: Handle, v: u16) {
        assert_eq!(h, self.next_key(), "the key the model predicts");
        let i = h.index() as usize;
        if i == self.slots.len() {
            self.slots.push((1, true));
        } else {
            if self.reuse == Reuse::Fifo {
                assert_eq!(self.fifo.pop_front(), Some(h.index()));
            }
            assert!(self.holes.remove(&h.index()));
            self.slots[i] = (h.generation(), true);
        }
        self.live.insert(h, v);
    }

    fn remove(&mut self, h: Handle) -> Option<u16> {
        let v = self.live.remove(&h)?;
        let i = h.index() as usize;
        self.slots[i].1 = false;
        if self.reusable(i) {
            self.holes.insert(h.index());
            if self.reuse == Reuse::Fifo {
                self.fifo.push_back(h.index());
            }
        }
        Some(v)
    }

    /// The live keys in slot order: the order `clear`, `drain` and `retain` vacate them in.
    fn keys_in_slot_order(&self) -> Vec<Handle> {
        let mut keys: Vec<Handle> = self.live.keys().copied().collect();
        keys.sort_by_key(|k| k.index());
        keys
    }

    fn set_reuse(&mut self, reuse: Reuse) {
        if reuse == self.reuse {
            return;
        }
        self.reuse = reuse;
        self.fifo.clear();
        if reuse == Reuse::Fifo {
            self.fifo = self.holes.iter().copied().collect();
        }
    }
}

fn check(pool: &Pool<u16>, model: &Model, seen: &[Handle]) {
    pool.assert_invariants();
    assert_eq!(pool.len(), model.live.len());
    assert_eq!(pool.slot_count(), model.slots.len());
    assert_eq!(
        (pool.reuse(), pool.min_free()),
        (model.reuse, model.min_free)
    );
    for h in seen {
        assert_eq!(pool.get(*h), model.live.get(h));
    }
    assert_eq!(pool.iter().count(), model.live.len());
    for (k, v) in pool.iter() {
        assert_eq!(model.live.get(&k), Some(v));
    }
}

fuzz_target!(|input: (Vec<Op>, Vec<u8>, u8)| {
    let (ops, bytes, setup) = input;
    // Untrusted bytes never panic the reader and never give a broken pool.
    if let Ok(p) = serde_json::from_slice::<Pool<u16>>(&bytes) {
        p.assert_invariants();
    }
    if let Ok(p) = serde_json::from_slice::<Pool<u16, Handle32>>(&bytes) {
        p.assert_invariants();
    }

    let type_id = u16::from(setup % 4);
    let reuse = if setup & 4 == 0 {
        Reuse::Fifo
    } else {
        Reuse::LowestFirst
    };
    let min_free = u32::from(setup >> 3) % 8;
    let mut pool: Pool<u16> = Pool::new()
        .with_type_id(type_id)
        .with_reuse(reuse)
        .with_min_free(min_free);
    let mut model = Model {
        reuse,
        min_free,
        type_id,
        slots: Vec::new(),
        holes: BTreeSet::new(),
        fifo: VecDeque::new(),
        live: HashMap::new(),
    };
    let mut seen: Vec<Handle> = Vec::new();
    let pick =
        |seen: &[Handle], k: u16| (!seen.is_empty()).then(|| seen[usize::from(k) % seen.len()]);
    for op in ops.into_iter().take(256) {
        match op {
            Op::Insert(v) => {
                let h = pool.insert(v);
                model.insert(h, v);
                assert!(!seen.contains(&h), "a handle was handed out twice");
                seen.push(h);
            }
            Op::InsertMany(vs) => {
                for v in vs.into_iter().take(64) {
                    let h = pool.insert(v);
                    model.insert(h, v);
                    seen.push(h);
                }
            }
            Op::Remove(k) => {
                if let Some(h) = pick(&seen, k) {
                    assert_eq!(pool.remove(h), model.remove(h));
                }
            }
            Op::RemoveMany(ks) => {
                for k in ks {
                    if let Some(h) = pick(&seen, k) {
                        assert_eq!(pool.remove(h), model.remove(h));
                    }
                }
            }
            Op::Get(k) => {
                if let Some(h) = pick(&seen, k) {
                    assert_eq!(pool.get(h), model.live.get(&h));
                }
            }
            Op::GetForged(bits) => {
                if let Some(h) = Handle::from_bits(bits) {
                    assert_eq!(pool.get(h), model.live.get(&h));
                    assert_eq!(pool.contains(h), model.live.contains_key(&h));
                }
            }
            Op::Set(k, v) => {
                if let Some(h) = pick(&seen, k) {
                    if let Some(x) = pool.get_mut(h) {
                        *x = v;
                        model.live.insert(h, v);
                    } else {
                        assert!(!model.live.contains_key(&h));
                    }
                }
            }
            Op::Retain(m) => {
                let m = u16::from(m.max(1));
                pool.retain(|_, v| *v % m != 0);
                for k in model.keys_in_slot_order() {
                    if model.live[&k] % m == 0 {
                        model.remove(k);
                    }
                }
            }
            Op::Clear => {
                pool.clear();
                for k in model.keys_in_slot_order() {
                    model.remove(k);
                }
            }
            Op::Reset => {
                let drained: Vec<Handle> = pool.drain().map(|(k, _)| k).collect();
                let order = model.keys_in_slot_order();
                assert_eq!(drained, order);
                for k in order {
                    model.remove(k);
                }
            }
            Op::Sort => {
                let other = match pool.reuse() {
                    Reuse::Fifo => Reuse::LowestFirst,
                    Reuse::LowestFirst => Reuse::Fifo,
                };
                pool.set_reuse(other);
                model.set_reuse(other);
            }
            Op::Defragment(n) => {
                let n = u32::from(n % 8);
                pool.set_min_free(n);
                model.min_free = n;
            }
            Op::ShrinkToFit => {
                let c = pool.clone();
                c.assert_invariants();
                assert!(c == pool);
                pool = c;
            }
            Op::Reserve(n) => pool.reserve(usize::from(n)),
            Op::RoundTrip => {
                let json = serde_json::to_vec(&pool).unwrap();
                pool = serde_json::from_slice(&json).unwrap();
            }
        }
        check(&pool, &model, &seen);
    }
    // The next insertion, once more after the last step.
    let h = pool.insert(0);
    model.insert(h, 0);
});
