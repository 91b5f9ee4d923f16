//! One storage per component type, and the registry that finds a type's storage.
//!
//! A component type `T` lives in a [`Storage<T>`]: a [`dod::SparseSet<T>`] keyed by entity
//! index (dense values, walked like a slice), or, for a *tag* (a zero-sized type with no drop
//! glue: `struct Enemy;`) that is neither tracked nor in an owning group, a [`dod::BitSet`] of
//! entity indices alone. Storages hold components of live entities only: the world checks
//! liveness once, at its entry points, and removes every component of an entity that it
//! despawns, so the storages need no check of their own.
//!
//! Storages are type-erased behind [`AnyStorage`] in a [`Column`], with an atomic borrow flag
//! for the shared form of queries ([`Shared`](crate::Shared)).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::any::{Any, TypeId};
use core::cell::UnsafeCell;
use core::hash::{BuildHasherDefault, Hash, Hasher};
use core::mem;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::collections::HashMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use dod::sparse_set::{AppendRun, SparseKey};
use dod::{BitSet, SparseSet};

use crate::commands::Commands;
use crate::entity::{Entities, Entity};

/// Anything that can be a component: `'static + Send + Sync`. Implemented for every such type.
///
/// A component is named by its own type: `get::<Pos>`, not `get::<&Pos>` (a reference is a
/// query item), and one type per call, not a tuple (a tuple is a [`Bundle`](crate::Bundle)).
/// Since a reference or a tuple is a type like any other, the world cannot refuse them at
/// compile time. When a lookup (`get`, `has`, `remove`, a query's types and filters) asks for
/// a type the world holds no value of, and that type is a reference to a component type it
/// holds or a tuple of such types (or of references to them), it panics naming the type,
/// where it would otherwise find nothing. Storing a reference or a tuple is allowed: once a
/// `(f32, f32)` or a `&'static str` is stored, it is found like any other component.
///
/// ```
/// fn is_component<T: dod_world::Component>() {}
/// is_component::<[f32; 3]>();
/// is_component::<String>();
/// ```
///
/// ```should_panic
/// struct Pos(f32);
/// let mut world = dod_world::World::new();
/// let e = world.spawn((Pos(0.0),));
/// world.get::<&Pos>(e); // panics: "`&rust_out::Pos` is not a component type of this world"
/// ```
pub trait Component: Send + Sync + 'static {}

impl<T: Send + Sync + 'static> Component for T {}

/// The number of a registered component type in its world: storages are kept in registration
/// order. Stable for the world's life.
///
/// ```
/// let mut world = dod_world::World::new();
/// let a = world.register::<u32>();
/// let b = world.register::<f32>();
/// assert_ne!(a, b);
/// assert_eq!(world.register::<u32>(), a);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentId(pub(crate) u32);

impl ComponentId {
    /// The position of the type's storage in registration order.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// assert_eq!(world.register::<u8>().index(), 0);
    /// ```
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A value of the world's change counter: writes are stamped with it, and change filters
/// compare stamps with the tick a query last ran at. Ticks wrap around; the world clamps
/// stamps older than [`Tick::MAX_AGE`] every 2²⁸ ticks (from
/// [`World::maintain`](crate::World::maintain) and exclusive remembered query runs), so
/// comparisons stay right across the wrap, and a [`QueryState`](crate::QueryState) idle
/// for longer than that sees every value on its next run.
///
/// ```
/// let mut world = dod_world::World::new();
/// let before = world.change_tick();
/// world.maintain();
/// assert!(world.change_tick().get() > before.get());
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tick(pub(crate) u32);

impl Tick {
    /// How far back a stamp can be told apart from older ones: 2³⁰ ticks. Older stamps are
    /// clamped to this age.
    pub const MAX_AGE: u32 = 1 << 30;

    /// How far the counter moves between two clamps of every stamp: the world clamps when
    /// [`World::maintain`](crate::World::maintain) or an exclusive remembered query run finds
    /// the counter this far past the last clamp, so that clamping costs nothing most frames
    /// and no stamp is ever more than `MAX_AGE` + 2 x `CLAMP_EVERY` (< 2³¹) ticks old.
    pub(crate) const CLAMP_EVERY: u32 = Self::MAX_AGE / 4;

    /// The counter value.
    ///
    /// ```
    /// assert_eq!(dod_world::World::new().change_tick().get(), 1);
    /// ```
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Whether a stamp made at `self` is newer than `since`, seen from `now` (all three within
    /// [`Tick::MAX_AGE`] of `now`): ages are compared, so the counter may wrap in between.
    #[inline]
    pub(crate) fn is_newer_than(self, since: Tick, now: Tick) -> bool {
        now.0.wrapping_sub(self.0) < now.0.wrapping_sub(since.0)
    }

    /// `self`, or the oldest tick still told apart if it is older.
    #[inline]
    pub(crate) fn clamped(self, now: Tick) -> Tick {
        if now.0.wrapping_sub(self.0) > Self::MAX_AGE {
            Tick(now.0.wrapping_sub(Self::MAX_AGE))
        } else {
            self
        }
    }
}

/// What a structural change needs besides the storage: the present tick and the buffer hooks
/// record into. (Public only so that [`Bundle`](crate::Bundle) can name it.)
#[doc(hidden)]
#[allow(unreachable_pub)]
pub struct Ctx<'a> {
    pub(crate) now: Tick,
    pub(crate) commands: &'a mut Commands,
}

/// A hook: called with the entity and its value when a value arrives or leaves.
pub(crate) type Hook<T> = Box<dyn Fn(Entity, &T, &mut Commands) + Send + Sync>;

/// The change stamps of a tracked type, position for position with its dense values, and the
/// entities that lost it since the last [`World::maintain`](crate::World::maintain).
#[derive(Default)]
pub(crate) struct Ticks {
    pub(crate) added: Vec<Tick>,
    pub(crate) changed: Vec<Tick>,
    pub(crate) removed: Vec<Entity>,
}

/// The storage of one component type: its values in a sparse set, or, for a tag that is
/// neither tracked nor in a group, its presence bits alone. With its change stamps (when
/// tracked) and hooks. (Public only so that [`Bundle`](crate::Bundle) can name it.)
#[doc(hidden)]
#[allow(unreachable_pub)]
pub struct Storage<T> {
    pub(crate) set: SparseSet<T>,
    /// The values live in `set` with nothing beside them: not in bits, no stamps, no hooks.
    /// Kept by [`refresh_plain`](Storage::refresh_plain) whenever one of those changes, so
    /// that the structural hot paths test one flag.
    plain: bool,
    pub(crate) tags: BitSet,
    pub(crate) tag_count: usize,
    /// Whether the values are the bits of `tags` (a tag not tracked nor grouped).
    pub(crate) in_bits: bool,
    pub(crate) ticks: Option<Ticks>,
    on_insert: Option<Hook<T>>,
    on_remove: Option<Hook<T>>,
}

/// Whether `T` is a tag: zero-sized with no drop glue, so one value is indistinguishable from
/// another and dropping one does nothing. Tags are stored as bits unless tracked or grouped.
#[inline]
pub(crate) const fn is_tag<T>() -> bool {
    mem::size_of::<T>() == 0 && !mem::needs_drop::<T>()
}

/// A reference to a tag value. For a zero-sized type, a dangling aligned pointer is valid
/// for reads and writes of zero bytes; `T` is inhabited because the world only calls this for
/// an entity that was given a `T`.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn tag_ref<'a, T>() -> &'a T {
    debug_assert!(is_tag::<T>());
    // SAFETY: `T` is zero-sized (checked by every caller through `is_tag`), so a non-null,
    // aligned pointer is valid for its zero-byte reads; a value of `T` was given to the world
    // for the entity this stands for, so `T` is inhabited.
    unsafe { NonNull::<T>::dangling().as_ref() }
}

/// A mutable reference to a tag value; see [`tag_ref`].
#[inline]
#[allow(unsafe_code)]
pub(crate) fn tag_mut<'a, T>() -> &'a mut T {
    debug_assert!(is_tag::<T>());
    // SAFETY: as in `tag_ref`; zero-sized references never overlap in memory, so any number
    // of them may be live at once.
    unsafe { NonNull::<T>::dangling().as_mut() }
}

/// A tag value taken out of its bits; see [`tag_ref`].
#[inline]
#[allow(unsafe_code)]
fn tag_value<T>() -> T {
    debug_assert!(is_tag::<T>());
    // SAFETY: as in `tag_ref`: `T` is zero-sized and inhabited, so reading zero bytes from an
    // aligned dangling pointer yields its one value; the value that was given was forgotten
    // (it has no drop glue), so no value is duplicated in effect.
    unsafe { NonNull::<T>::dangling().as_ptr().read() }
}

impl<T: Component> Storage<T> {
    /// Pointers to the dense values and to the change stamps (null when untracked), taken as
    /// `Vec::as_mut_ptr` takes them: they stay valid beside shared borrows of the storage
    /// until the arrays move.
    #[inline]
    pub(crate) fn writable(&mut self) -> (*mut T, *mut Tick) {
        let changed = self
            .ticks
            .as_mut()
            .map_or(core::ptr::null_mut(), |t| t.changed.as_mut_ptr());
        (self.set.values_as_mut_ptr(), changed)
    }

    /// The dense position of entity `index` (not for a tag in bits).
    #[inline]
    pub(crate) fn position_of(&self, index: u32) -> Option<usize> {
        debug_assert!(!self.in_bits());
        self.set.get_index_of(index)
    }

    /// Swaps two dense positions, stamps included. Inline in a group's moves, which swap in
    /// every owned storage per entity.
    #[inline(always)]
    pub(crate) fn swap_positions(&mut self, a: usize, b: usize) {
        self.set.swap_positions(a, b);
        if let Some(t) = &mut self.ticks {
            t.added.swap(a, b);
            t.changed.swap(a, b);
        }
    }

    pub(crate) fn new() -> Self {
        Storage {
            set: SparseSet::new(),
            plain: !is_tag::<T>(),
            tags: BitSet::new(),
            tag_count: 0,
            in_bits: is_tag::<T>(),
            ticks: None,
            on_insert: None,
            on_remove: None,
        }
    }

    /// Starts loading the slot of entity `index` into the cache.
    #[inline]
    pub(crate) fn prefetch(&self, index: u32) {
        if self.in_bits() {
            return;
        }
        self.set.prefetch(index);
    }

    /// Starts loading the value of entity `index` and its dense entry into the cache, if the
    /// storage holds one: a read of its slot, which should be loading already
    /// ([`prefetch`](Self::prefetch)). If it does, also starts loading the slot of the entity
    /// `lag` places before the end of the dense array: an estimate of the one its
    /// swap-remove will move, `lag` removals from now (exact when each of those removes a
    /// value from this storage and no group swaps between).
    #[inline]
    pub(crate) fn prefetch_value(&self, index: u32, lag: usize) {
        if self.in_bits() {
            return;
        }
        if let Some(p) = self.set.get_index_of(index) {
            let indices = self.set.indices();
            if let Some(&last) = indices
                .len()
                .checked_sub(lag + 1)
                .and_then(|moved| indices.get(moved))
            {
                self.set.prefetch(last);
            }
            if let Some(v) = self.set.values().get(p) {
                dod::hint::prefetch(v);
            }
            if let Some(i) = self.set.indices().get(p) {
                dod::hint::prefetch(i);
            }
        }
    }

    /// A run of appends for the new entities from `first` on (`first`'s index and the ones
    /// after it, all with `first`'s tag, which their slots carry: see
    /// [`SparseSet::append_run_as`]), if the storage is plain (no bits, stamps or hooks to
    /// keep) and cannot hold any of them.
    #[inline]
    pub(crate) fn append_run(&mut self, first: Entity) -> Option<AppendRun<'_, T>> {
        if !self.is_plain() {
            return None;
        }
        self.set.append_run_as(first)
    }

    /// Whether the values live in the sparse set with nothing beside them: no bits, no
    /// stamps, no hooks. The structural hot paths then do the set's own work and nothing else.
    /// A plain storage may still be owned by a group, which its callers check apart.
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        debug_assert_eq!(self.plain, self.plain_now());
        self.plain
    }

    /// What [`is_plain`](Self::is_plain) answers, computed from the bits, stamps and hooks.
    fn plain_now(&self) -> bool {
        !self.in_bits()
            && self.ticks.is_none()
            && self.on_insert.is_none()
            && self.on_remove.is_none()
    }

    /// Recomputes [`is_plain`](Self::is_plain) after a change of bits, stamps or hooks.
    fn refresh_plain(&mut self) {
        self.plain = self.plain_now();
    }

    /// Sets the insert hook.
    pub(crate) fn set_on_insert(&mut self, hook: Hook<T>) {
        self.on_insert = Some(hook);
        self.refresh_plain();
    }

    /// Sets the remove hook.
    pub(crate) fn set_on_remove(&mut self, hook: Hook<T>) {
        self.on_remove = Some(hook);
        self.refresh_plain();
    }

    /// Takes both hooks away.
    pub(crate) fn clear_hooks(&mut self) {
        self.on_insert = None;
        self.on_remove = None;
        self.refresh_plain();
    }

    /// Gives `e` its value; `true` if `e` had none. A value it replaces goes through the
    /// remove hook and is dropped; the new one through the insert hook.
    #[inline(always)]
    pub(crate) fn insert(&mut self, e: Entity, value: T, ctx: &mut Ctx<'_>) -> bool {
        match self.insert_plain(e, value) {
            Ok(new) => new,
            Err(value) => self.insert_special(e, value, ctx),
        }
    }

    /// [`insert`](Self::insert) into a plain storage (no bits, stamps or hooks), which needs
    /// no context; the value back if the storage is not plain.
    #[inline(always)]
    pub(crate) fn insert_plain(&mut self, e: Entity, value: T) -> Result<bool, T> {
        if !self.is_plain() {
            return Err(value);
        }
        // A value replaced is dropped here.
        Ok(self.put(e, value).is_none())
    }

    /// The set's insertion, with `e`'s tag in the slot (see [`get_of`](Self::get_of)); a tag
    /// type, whose values may have come out of bits by index, by index alone. Every value of
    /// a non-tag type enters the set here or through [`append_run`](Self::append_run), which
    /// writes the tag too: `get_of` finds a value only by its slot's tag, so a value put in
    /// by index alone would be missed.
    #[inline(always)]
    fn put(&mut self, e: Entity, value: T) -> Option<T> {
        if is_tag::<T>() {
            self.set.insert(e.index(), value)
        } else {
            self.set.insert(e, value)
        }
    }

    /// `e`'s value, or `None` if `e` has none or is not alive. The slot of a value holds the
    /// tag of the entity it was given to, and a despawn removes every value, so a slot whose
    /// tag is `e`'s is a value of `e` alive: one load, where checking the entity first would
    /// be another (a random one). A tag type (whose values may sit in bits, which hold no
    /// tag) asks `entities`.
    #[inline(always)]
    pub(crate) fn get_of(&self, e: Entity, entities: &Entities) -> Option<&T> {
        if is_tag::<T>() {
            return if entities.is_alive(e) {
                self.get(e.index())
            } else {
                None
            };
        }
        self.set.get(e)
    }

    /// [`get_of`](Self::get_of), mutable: stamped changed at `now` when tracked.
    #[inline(always)]
    pub(crate) fn get_mut_of(
        &mut self,
        e: Entity,
        entities: &Entities,
        now: Tick,
    ) -> Option<&mut T> {
        if is_tag::<T>() {
            return if entities.is_alive(e) {
                self.get_mut(e.index(), now)
            } else {
                None
            };
        }
        self.set_get_mut(e, now)
    }

    /// Whether `e` is alive and has a value (see [`get_of`](Self::get_of)).
    #[inline(always)]
    pub(crate) fn contains_of(&self, e: Entity, entities: &Entities) -> bool {
        if is_tag::<T>() {
            return entities.is_alive(e) && self.contains(e.index());
        }
        self.set.contains(e)
    }

    /// [`insert`](Self::insert) into a storage with bits, stamps or hooks.
    #[inline(never)]
    fn insert_special(&mut self, e: Entity, value: T, ctx: &mut Ctx<'_>) -> bool {
        let index = e.index();
        if self.in_bits() {
            mem::forget(value);
            let new = self.tags.insert(index);
            self.tag_count += usize::from(new);
            if !new {
                if let Some(h) = &self.on_remove {
                    h(e, &tag_value(), ctx.commands);
                }
            }
            if let Some(h) = &self.on_insert {
                h(e, tag_ref(), ctx.commands);
            }
            return new;
        }
        match self.put(e, value) {
            None => {
                if let Some(t) = &mut self.ticks {
                    t.added.push(ctx.now);
                    t.changed.push(ctx.now);
                }
                if let Some(h) = &self.on_insert {
                    let last = self.set.values().len() - 1;
                    h(e, &self.set.values()[last], ctx.commands);
                }
                true
            }
            Some(old) => self.replaced(e, old, ctx),
        }
    }

    /// The rest of an insertion that replaced `old`; out of line, as the rare case.
    #[cold]
    #[inline(never)]
    fn replaced(&mut self, e: Entity, old: T, ctx: &mut Ctx<'_>) -> bool {
        let index = e.index();
        if let Some(t) = &mut self.ticks {
            if let Some(p) = self.set.get_index_of(index) {
                t.changed[p] = ctx.now;
            }
        }
        if let Some(h) = &self.on_remove {
            h(e, &old, ctx.commands);
        }
        drop(old);
        if let (Some(h), Some(v)) = (&self.on_insert, self.set.get(index)) {
            h(e, v, ctx.commands);
        }
        false
    }

    /// Takes `e`'s value out, through the remove hook, noting `e` in the removed list when
    /// tracked.
    #[inline(always)]
    pub(crate) fn remove(&mut self, e: Entity, ctx: &mut Ctx<'_>) -> Option<T> {
        match self.remove_plain(e) {
            Some(taken) => taken,
            None => self.remove_special(e, ctx),
        }
    }

    /// [`remove`](Self::remove) from a plain storage (no bits, stamps or hooks), which needs
    /// no context; `None` if the storage is not plain.
    #[inline(always)]
    pub(crate) fn remove_plain(&mut self, e: Entity) -> Option<Option<T>> {
        if !self.is_plain() {
            return None;
        }
        Some(self.set.swap_remove(e.index()))
    }

    /// [`remove_plain`](Self::remove_plain) for an entity that has just left its owning
    /// group, which the caller did only after checking that the storage is plain: a storage
    /// found otherwise would have the entity out of its group and still holding the value.
    #[inline(always)]
    pub(crate) fn remove_left_group(&mut self, e: Entity) -> Option<T> {
        match self.remove_plain(e) {
            Some(taken) => taken,
            None => unreachable!("a grouped storage checked plain before its entity left"),
        }
    }

    /// [`remove`](Self::remove) from a storage with bits, stamps or hooks.
    #[inline(never)]
    fn remove_special(&mut self, e: Entity, ctx: &mut Ctx<'_>) -> Option<T> {
        let index = e.index();
        let value = if self.in_bits() {
            if !self.tags.remove(index) {
                return None;
            }
            self.tag_count -= 1;
            tag_value()
        } else if let Some(t) = &mut self.ticks {
            let p = self.set.get_index_of(index)?;
            t.added.swap_remove(p);
            t.changed.swap_remove(p);
            let value = self.set.swap_remove(index)?;
            // After the value: the stamps and the values stay one per value even if the
            // list's growth panics.
            t.removed.push(e);
            value
        } else {
            self.set.swap_remove(index)?
        };
        if let Some(h) = &self.on_remove {
            h(e, &value, ctx.commands);
        }
        Some(value)
    }

    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&T> {
        if self.in_bits() {
            self.tags.contains(index).then(tag_ref)
        } else {
            self.set.get(index)
        }
    }

    /// `e`'s value, mutably, stamped changed at `now` when tracked.
    #[inline]
    pub(crate) fn get_mut(&mut self, index: u32, now: Tick) -> Option<&mut T> {
        if self.in_bits() {
            return self.tags.contains(index).then(tag_mut);
        }
        self.set_get_mut(index, now)
    }

    /// The set's value of `key` (an index, or an entity whose tag the slot must carry),
    /// mutably, stamped changed at `now` when tracked: one lookup for the stamp and the value.
    #[inline(always)]
    fn set_get_mut<K: SparseKey>(&mut self, key: K, now: Tick) -> Option<&mut T> {
        if let Some(t) = &mut self.ticks {
            let p = self.set.get_index_of(key)?;
            t.changed[p] = now;
            return self.set.values_mut().get_mut(p);
        }
        self.set.get_mut(key)
    }

    /// The values at `N` distinct indices, mutably, each marked changed at `now`; `None` if
    /// one is missing or two are the same (nothing is marked then).
    pub(crate) fn get_disjoint_mut<const N: usize>(
        &mut self,
        indices: [u32; N],
        now: Tick,
    ) -> Option<[&mut T; N]> {
        if self.in_bits() {
            let distinct = indices
                .iter()
                .enumerate()
                .all(|(k, i)| self.tags.contains(*i) && !indices[..k].contains(i));
            return distinct.then(|| core::array::from_fn(|_| tag_mut()));
        }
        let mut positions = [0usize; N];
        for (p, &i) in positions.iter_mut().zip(&indices) {
            *p = self.set.get_index_of(i)?;
        }
        let values = self.set.values_mut().get_disjoint_mut(positions).ok()?;
        if let Some(t) = &mut self.ticks {
            for p in positions {
                t.changed[p] = now;
            }
        }
        Some(values)
    }

    #[inline]
    pub(crate) fn contains(&self, index: u32) -> bool {
        if self.in_bits() {
            self.tags.contains(index)
        } else {
            self.set.contains(index)
        }
    }

    /// Whether the values are the bits of `tags`: never for a type that is not a tag, which
    /// the compiler sees, so that other types' paths carry no test of it.
    #[inline(always)]
    pub(crate) fn in_bits(&self) -> bool {
        is_tag::<T>() && self.in_bits
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        if self.in_bits() {
            self.tag_count
        } else {
            self.set.len()
        }
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        if !self.in_bits() {
            self.set.reserve(additional);
            if let Some(t) = &mut self.ticks {
                t.added.reserve(additional);
                t.changed.reserve(additional);
            }
        }
    }

    /// Moves a tag's bits into the sparse set, so that its values have positions (for
    /// tracking and groups, and for a load, which keeps the saved order). O(len).
    pub(crate) fn leave_bits(&mut self) {
        if !self.in_bits() {
            return;
        }
        self.in_bits = false;
        self.refresh_plain();
        let bits = mem::take(&mut self.tags);
        self.tag_count = 0;
        for i in bits.iter() {
            self.set.insert(i, tag_value());
        }
    }

    /// Moves a tag's values from the sparse set into bits: the reverse of
    /// [`leave_bits`](Storage::leave_bits), for a tag that needs no positions. O(len).
    fn enter_bits(&mut self) {
        if !is_tag::<T>() || self.in_bits {
            return;
        }
        let set = mem::take(&mut self.set);
        for &i in set.indices() {
            self.tags.insert(i);
        }
        self.tag_count = set.len();
        self.in_bits = true;
        self.refresh_plain();
    }
}

/// A storage with its type erased: what the world needs without knowing the type.
pub(crate) trait AnyStorage: Any + Send + Sync {
    /// Drops `e`'s component, if it has one (through the remove hook). A panic of the value's
    /// `Drop` or of the hook is caught and handed back: the value is gone either way.
    fn remove_entity(&mut self, e: Entity, ctx: &mut Ctx<'_>) -> std::thread::Result<()>;
    /// Starts loading the slot of entity `index` into the cache (see [`Storage::prefetch`]).
    fn prefetch(&self, index: u32);
    /// Starts loading the value of entity `index`, and the slot of the entity a swap-remove
    /// will move `lag` removals from now, into the cache (see [`Storage::prefetch_value`]).
    fn prefetch_value(&self, index: u32, lag: usize);
    /// The number of entities with the component.
    fn len(&self) -> usize;

    /// Drops every component (through the remove hook, with the entities from `entities`).
    fn clear(&mut self, entities: &crate::Entities, ctx: &mut Ctx<'_>);
    /// Heap bytes held.
    fn memory_usage(&self) -> usize;
    /// Releases the capacity past what the storage holds.
    fn shrink_to_fit(&mut self);
    /// The entity indices that have the component, in storage order.
    fn indices(&self) -> Vec<u32>;
    /// Whether the slot of `e`'s index carries `e`'s tag (see [`Storage::get_of`]); always
    /// for a tag type, whose slots carry none.
    fn holds(&self, e: Entity) -> bool;
    /// Swaps two dense positions, stamps included.
    fn swap_positions(&mut self, a: usize, b: usize);
    /// Starts tracking changes, stamping every present value with `now`.
    fn track(&mut self, now: Tick);
    /// Whether changes are tracked.
    fn is_tracked(&self) -> bool;
    /// Pointers to the dense values and to the change stamps (null when untracked), taken
    /// as `Vec::as_mut_ptr` takes them (see [`Column::capture`]).
    fn writable(&mut self) -> (*mut (), *mut Tick);
    /// Whether an insert hook is set.
    fn has_insert_hook(&self) -> bool;
    /// Moves a tag out of bits (for groups).
    fn leave_bits(&mut self);
    /// Forgets the list of entities that lost a value.
    fn forget_removed(&mut self);
    /// Clamps every stamp to within [`Tick::MAX_AGE`] of `now`.
    fn clamp(&mut self, now: Tick);
    /// The dense slice of entity indices (empty for a tag in bits).
    fn dense_indices(&self) -> &[u32];
    /// Takes the values of `other` (a storage of the same type, freshly loaded), dropping its
    /// own without hooks; stamps them `now` when tracked.
    fn replace_values(&mut self, other: &mut dyn AnyStorage, now: Tick);
    /// Checks the storage's own invariants, panicking on the first that fails (for
    /// [`World::assert_invariants`](crate::World::assert_invariants)).
    fn assert_invariants(&self, name: &str);
    /// Drops every value without hooks (a load replaces the world's contents). If a value's
    /// `Drop` panics, the storage is empty already and the other values are still dropped.
    fn clear_silently(&mut self);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Component> AnyStorage for Storage<T> {
    fn prefetch(&self, index: u32) {
        Storage::prefetch(self, index);
    }

    fn prefetch_value(&self, index: u32, lag: usize) {
        Storage::prefetch_value(self, index, lag);
    }

    fn remove_entity(&mut self, e: Entity, ctx: &mut Ctx<'_>) -> std::thread::Result<()> {
        if self.is_plain() && !mem::needs_drop::<T>() {
            // Nothing here can panic: no hook, and no drop glue.
            self.set.swap_remove(e.index());
            return Ok(());
        }
        catch_unwind(AssertUnwindSafe(|| drop(self.remove(e, ctx))))
    }

    fn len(&self) -> usize {
        Storage::len(self)
    }

    fn clear(&mut self, entities: &crate::Entities, ctx: &mut Ctx<'_>) {
        let tracked = self.ticks.is_some();
        if self.on_remove.is_some() || tracked {
            // One by one, so that hooks see each value and the removed list each entity. A
            // value whose `Drop` (or a hook) panics does not stop the loop: every entity is
            // dead already, so every value must go; the first panic goes on afterwards.
            let mut panic = None;
            for i in self.indices() {
                let e = entities.entity_at(i);
                let r = catch_unwind(AssertUnwindSafe(|| drop(self.remove(e, ctx))));
                if let Err(p) = r {
                    panic.get_or_insert(p);
                }
            }
            if let Some(p) = panic {
                resume_unwind(p);
            }
        } else if self.in_bits() {
            self.tags.clear();
            self.tag_count = 0;
        } else {
            self.set.clear();
        }
    }

    fn memory_usage(&self) -> usize {
        self.set.memory_usage()
            + self.tags.memory_usage()
            + self.ticks.as_ref().map_or(0, |t| {
                (t.added.capacity() + t.changed.capacity()) * mem::size_of::<Tick>()
                    + t.removed.capacity() * mem::size_of::<Entity>()
            })
    }

    fn shrink_to_fit(&mut self) {
        self.set.shrink_to_fit();
        self.tags.shrink_to_fit();
        if let Some(t) = &mut self.ticks {
            t.added.shrink_to_fit();
            t.changed.shrink_to_fit();
            t.removed.shrink_to_fit();
        }
    }

    fn indices(&self) -> Vec<u32> {
        if self.in_bits() {
            self.tags.iter().collect()
        } else {
            self.set.indices().to_vec()
        }
    }

    fn holds(&self, e: Entity) -> bool {
        is_tag::<T>() || self.set.contains(e)
    }

    fn swap_positions(&mut self, a: usize, b: usize) {
        Storage::swap_positions(self, a, b);
    }

    fn track(&mut self, now: Tick) {
        if self.ticks.is_some() {
            return;
        }
        self.leave_bits();
        let n = self.set.values().len();
        self.ticks = Some(Ticks {
            added: alloc::vec![now; n],
            changed: alloc::vec![now; n],
            removed: Vec::new(),
        });
        self.refresh_plain();
    }

    fn is_tracked(&self) -> bool {
        self.ticks.is_some()
    }

    fn writable(&mut self) -> (*mut (), *mut Tick) {
        let (values, changed) = Storage::writable(self);
        (values.cast(), changed)
    }

    fn has_insert_hook(&self) -> bool {
        self.on_insert.is_some()
    }

    fn leave_bits(&mut self) {
        Storage::leave_bits(self);
    }

    fn forget_removed(&mut self) {
        if let Some(t) = &mut self.ticks {
            t.removed.clear();
        }
    }

    fn clamp(&mut self, now: Tick) {
        if let Some(t) = &mut self.ticks {
            for tick in t.added.iter_mut().chain(t.changed.iter_mut()) {
                *tick = tick.clamped(now);
            }
        }
    }

    fn dense_indices(&self) -> &[u32] {
        if self.in_bits() {
            &[]
        } else {
            self.set.indices()
        }
    }

    fn replace_values(&mut self, other: &mut dyn AnyStorage, now: Tick) {
        let other: &mut Storage<T> = downcast_mut(other.as_any_mut());
        let keep_bits = self.in_bits();
        mem::swap(&mut self.set, &mut other.set);
        mem::swap(&mut self.tags, &mut other.tags);
        mem::swap(&mut self.tag_count, &mut other.tag_count);
        self.in_bits = other.in_bits;
        self.refresh_plain();
        // A load fills a tag's values in the saved order (see `store_of`): a storage that
        // keeps positions (tracked, grouped) takes that order, one in bits drops it.
        if keep_bits {
            self.enter_bits();
        } else {
            self.leave_bits();
        }
        if let Some(t) = &mut self.ticks {
            let n = self.set.values().len();
            t.added = alloc::vec![now; n];
            t.changed = alloc::vec![now; n];
            t.removed.clear();
        }
    }

    fn assert_invariants(&self, name: &str) {
        self.set.assert_invariants();
        self.tags.assert_invariants();
        assert!(
            !self.in_bits || is_tag::<T>(),
            "`{name}`: values in bits for a type that is not a tag"
        );
        if self.in_bits() {
            assert!(self.set.is_empty(), "`{name}`: values beside its bits");
            assert_eq!(
                self.tags.count(),
                self.tag_count,
                "`{name}`: count of its bits"
            );
        } else {
            assert!(self.tags.is_empty(), "`{name}`: bits beside its values");
            assert_eq!(self.tag_count, 0, "`{name}`: count of its bits");
        }
        if let Some(t) = &self.ticks {
            let n = self.set.len();
            assert_eq!(t.added.len(), n, "`{name}`: one added stamp per value");
            assert_eq!(t.changed.len(), n, "`{name}`: one changed stamp per value");
        }
        assert_eq!(self.plain, self.plain_now(), "`{name}`: the plain flag");
    }

    fn clear_silently(&mut self) {
        self.tags.clear();
        self.tag_count = 0;
        if let Some(t) = &mut self.ticks {
            t.added.clear();
            t.changed.clear();
            t.removed.clear();
        }
        // Last: a value's `Drop` may panic, and the set is empty before any value drops.
        self.set.clear();
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The runtime borrow state of a column: 0 free, `n` shared borrows, or [`WRITING`].
pub(crate) struct AtomicBorrow(AtomicUsize);

const WRITING: usize = usize::MAX;

impl AtomicBorrow {
    const fn new() -> Self {
        AtomicBorrow(AtomicUsize::new(0))
    }

    /// Takes a shared borrow; `false` if the column is borrowed mutably.
    pub(crate) fn try_read(&self) -> bool {
        let mut n = self.0.load(Ordering::Relaxed);
        loop {
            if n == WRITING || n == WRITING - 1 {
                return false;
            }
            match self
                .0
                .compare_exchange_weak(n, n + 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
    }

    /// Takes the exclusive borrow; `false` if the column is borrowed at all.
    pub(crate) fn try_write(&self) -> bool {
        self.0
            .compare_exchange(0, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    pub(crate) fn release_read(&self) {
        self.0.fetch_sub(1, Ordering::Release);
    }

    pub(crate) fn release_write(&self) {
        self.0.store(0, Ordering::Release);
    }

    /// Frees the flag whatever it says: through `&mut`, no borrow it counts can be held (a
    /// query that took one and was leaked, with `mem::forget`, can no longer be used).
    pub(crate) fn reset(&mut self) {
        *self.0.get_mut() = 0;
    }

    /// Whether it is borrowed mutably right now (for messages).
    pub(crate) fn is_writing(&self) -> bool {
        self.0.load(Ordering::Relaxed) == WRITING
    }
}

/// A type-erased storage with its borrow flag and its type's name.
pub(crate) struct Column {
    pub(crate) borrow: AtomicBorrow,
    storage: UnsafeCell<Box<dyn AnyStorage>>,
    pub(crate) name: &'static str,
    /// The owning group this type belongs to.
    pub(crate) group: Option<u32>,
    /// Where the dense values are, with write access, as [`capture`](Column::capture) took it
    /// when the world was last shared (or [`capture_exclusive`](Column::capture_exclusive)
    /// before a run): what a query that writes `T` writes through when it must form no
    /// `&mut` to the storage.
    values: AtomicPtr<()>,
    /// The change stamps, likewise (null when the type is not tracked).
    changed: AtomicPtr<Tick>,
}

// SAFETY: the storage inside is `Send + Sync` (`AnyStorage` requires it). A `&Column` hands
// out `&Storage` freely (shared access of a `Sync` value) and `&mut Storage` only through
// `storage_mut`, whose callers hold `&mut World` (so no other thread has the column) and
// write through it only before any other reference to the storage is taken: a query's
// writer takes its raw value and stamp pointers from it and then holds it as shared, so the
// shared borrows a run takes beside it (a presence or change test of the same type, a
// group's driver) never see the storage's own fields change. While the world is shared, a
// query that writes `T` writes the values and stamps through the pointers `capture` took,
// holding this column's exclusive flag, and a query that reads them holds its shared flag;
// the other parts of the storage (the sparse side, the presence bits) are not written while
// the world is shared.
#[allow(unsafe_code)]
unsafe impl Sync for Column {}

impl Column {
    fn new<T: Component>() -> Self {
        Column {
            borrow: AtomicBorrow::new(),
            storage: UnsafeCell::new(Box::new(Storage::<T>::new())),
            name: core::any::type_name::<T>(),
            group: None,
            values: AtomicPtr::new(core::ptr::null_mut()),
            changed: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Takes the pointers a shared-form query writes the values and stamps through, as
    /// [`Vec::as_mut_ptr`] takes them: no reference to the values or stamps is formed, so the
    /// pointers stay valid beside the shared borrows of the storage that shared-form queries
    /// take, until the arrays move. [`World::share`](crate::World::share) calls it for every
    /// column; the arrays cannot move while the [`Shared`](crate::Shared) lives, since that
    /// takes `&mut World`.
    #[allow(unsafe_code)]
    pub(crate) fn capture(&mut self) {
        // SAFETY: `&mut self` is exclusive access to the column, and no reference into the
        // storage outlives it.
        unsafe { self.capture_exclusive() }
    }

    /// [`capture`](Column::capture) through `&self`: for a query of the exclusive form that
    /// also tests the presence of the type it writes, before its run borrows anything.
    ///
    /// # Safety
    ///
    /// The caller has exclusive access to this column (it holds `&mut World`), and no
    /// reference into the storage is alive.
    #[allow(unsafe_code)]
    pub(crate) unsafe fn capture_exclusive(&self) {
        // SAFETY: exclusive access, with no other reference into the storage alive: the
        // caller's contract.
        let any: &mut dyn AnyStorage = unsafe { &mut **self.storage.get() };
        let (values, changed) = any.writable();
        self.values.store(values, Ordering::Relaxed);
        self.changed.store(changed, Ordering::Relaxed);
    }

    /// The pointers [`capture`](Column::capture) took: the dense values (as `*mut T` for the
    /// column's type `T`) and the change stamps.
    #[inline]
    pub(crate) fn captured<T>(&self) -> (*mut T, *mut Tick) {
        (
            self.values.load(Ordering::Relaxed).cast(),
            self.changed.load(Ordering::Relaxed),
        )
    }

    /// The erased storage, shared.
    ///
    /// Callers hold `&World`. A `&mut` to a storage is formed only through `&mut World` (see
    /// [`storage_mut`](Column::storage_mut) and
    /// [`capture_exclusive`](Column::capture_exclusive)), and written through only before
    /// any other reference to the storage is taken: a query of the exclusive form that
    /// writes `T` holds its `&mut` as shared once it has the raw pointers it writes through,
    /// so a borrow taken here in the same run is a second shared one. What a caller may read
    /// of it is another matter: the values and stamps only under a borrow flag on a shared
    /// world (a writer writes them through the captured pointers meanwhile), the rest
    /// freely.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) fn any(&self) -> &dyn AnyStorage {
        // SAFETY: a `&mut` to the storage is formed only through `&mut World` (see
        // `storage_mut` and `capture_exclusive`) and is not written through once another
        // reference to the storage may exist (a query's writer holds it as shared after
        // taking its raw pointers); on a shared world, writers reach the values and stamps
        // through raw pointers and form no reference to the storage but shared ones.
        unsafe { &**self.storage.get() }
    }

    /// The erased storage, mutable, through `&mut self`.
    #[inline]
    pub(crate) fn any_mut(&mut self) -> &mut dyn AnyStorage {
        &mut **self.storage.get_mut()
    }

    /// The typed storage, shared. `T` must be the column's type.
    #[inline]
    pub(crate) fn storage<T: Component>(&self) -> &Storage<T> {
        downcast(self.any().as_any())
    }

    /// The typed storage, mutable, through `&mut self`.
    #[inline]
    pub(crate) fn storage_of_mut<T: Component>(&mut self) -> &mut Storage<T> {
        downcast_mut(self.any_mut().as_any_mut())
    }

    /// The typed storage, mutable, through `&mut self`, without checking its type: the hot
    /// paths of structural changes, which found the column by `T`'s id.
    ///
    /// # Safety
    ///
    /// `T` is the type the column was registered for.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn storage_of_mut_unchecked<T: Component>(&mut self) -> &mut Storage<T> {
        let any = self.any_mut();
        debug_assert!(any.as_any().is::<Storage<T>>(), "a column of another type");
        // SAFETY: the column holds a `Storage<T>` (the caller's contract), which is what the
        // data part of the `dyn AnyStorage` points at; `&mut self` makes the borrow unique.
        unsafe { &mut *(any as *mut dyn AnyStorage).cast::<Storage<T>>() }
    }

    /// The typed storage, shared, without checking its type: the hot paths of queries, which
    /// found the column by `T`'s id.
    ///
    /// # Safety
    ///
    /// `T` is the type the column was registered for (the reference is as sound as
    /// [`any`](Column::any)'s).
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn storage_of<T: Component>(&self) -> &Storage<T> {
        let any = self.any();
        debug_assert!(any.as_any().is::<Storage<T>>(), "a column of another type");
        // SAFETY: the column holds a `Storage<T>` (the caller's contract), which is what the
        // data part of the `dyn AnyStorage` points at.
        unsafe { &*(any as *const dyn AnyStorage).cast::<Storage<T>>() }
    }

    /// The typed storage, mutable, through `&self`, without checking its type.
    ///
    /// # Safety
    ///
    /// `T` is the type the column was registered for, and the caller has exclusive access to
    /// this column for `'a`: it holds `&mut World`, and writes through the returned reference
    /// only while it takes no other reference to this column. (A query's writer takes its
    /// raw value and stamp pointers from it and then holds it as shared, beside the shared
    /// borrows of the same storage its run may take. A shared world's writer never calls it:
    /// it writes through the pointers [`capture`](Column::capture) took.)
    #[inline]
    #[allow(unsafe_code, clippy::mut_from_ref)]
    pub(crate) unsafe fn storage_mut<'a, T: Component>(&'a self) -> &'a mut Storage<T> {
        // SAFETY: exclusive access for `'a` is the caller's contract.
        let any: &'a mut dyn AnyStorage = unsafe { &mut **self.storage.get() };
        debug_assert!(any.as_any().is::<Storage<T>>(), "a column of another type");
        // SAFETY: the column holds a `Storage<T>` (the caller's contract).
        unsafe { &mut *(any as *mut dyn AnyStorage).cast::<Storage<T>>() }
    }
}

#[inline]
#[track_caller]
fn downcast<T: Component>(any: &dyn Any) -> &Storage<T> {
    match any.downcast_ref() {
        Some(s) => s,
        None => unreachable!("a column holds the storage of the type it was registered for"),
    }
}

#[inline]
#[track_caller]
fn downcast_mut<T: Component>(any: &mut dyn Any) -> &mut Storage<T> {
    match any.downcast_mut() {
        Some(s) => s,
        None => unreachable!("a column holds the storage of the type it was registered for"),
    }
}

/// A hasher for `TypeId` keys, which are already random: it keeps the last integer written.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64 ^ (n >> 64) as u64;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Slots of [`Components::direct`].
const DIRECT: usize = 32;

/// The slot of type `t` in [`Components::direct`]. (For a type named in the code, `t` is a
/// constant, and so is its slot.)
#[inline]
fn direct_slot(t: TypeId) -> usize {
    let mut h = TypeIdHasher::default();
    t.hash(&mut h);
    h.finish() as usize % DIRECT
}

/// A type no world registers: it marks the vacant slots of [`Components::direct`].
struct Vacant;

/// The storages of a world, by registration order, and the map from type to column. (Public
/// only so that [`Bundle`](crate::Bundle) can name it; not reachable outside.)
#[derive(Default)]
#[doc(hidden)]
#[allow(unreachable_pub)]
pub struct Components {
    pub(crate) columns: Vec<Column>,
    by_type: HashMap<TypeId, ComponentId, BuildHasherDefault<TypeIdHasher>>,
    /// A direct-mapped table from type to id beside `by_type`: each slot keeps the first type
    /// registered that falls in it, so most lookups take one comparison, with no probing
    /// (the rest go to `by_type`, which holds every type). Empty until the first type
    /// registers, so that an empty world allocates nothing; ids never change, so it never
    /// goes stale.
    direct: Vec<(TypeId, ComponentId)>,
    pub(crate) groups: Vec<crate::group::Group>,
    /// The last bundle type whose ids [`bundle_ids`](Components::bundle_ids) found, and its
    /// ids: a loop spawning one bundle type finds them with one comparison instead of a hash
    /// lookup per type. Ids never change once registered.
    last_bundle: Option<(TypeId, [ComponentId; MAX_BUNDLE])>,
}

/// The elements of a tuple's type name without its parentheses: split at the commas outside
/// any `<>`, `()` or `[]`, trimmed, the empty part after a trailing comma dropped.
fn split_top_level(inner: &'static str) -> Vec<&'static str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

/// The most component types in one bundle.
pub(crate) const MAX_BUNDLE: usize = 12;

impl Components {
    /// The ids of bundle type `B`'s `N` types, registering them on first use: `register`
    /// makes them, in order; they are remembered for the next call with the same `B`.
    #[inline]
    pub(crate) fn bundle_ids<B: 'static, const N: usize>(
        &mut self,
        register: impl FnOnce(&mut Components) -> [ComponentId; N],
    ) -> [ComponentId; N] {
        const { assert!(N <= MAX_BUNDLE) };
        let t = TypeId::of::<B>();
        if let Some((last, ids)) = &self.last_bundle {
            if *last == t {
                return core::array::from_fn(|k| ids[k]);
            }
        }
        let ids = register(self);
        let mut kept = [ComponentId(0); MAX_BUNDLE];
        kept[..N].copy_from_slice(&ids);
        self.last_bundle = Some((t, kept));
        ids
    }

    /// The id of `T`, registering it on first use.
    #[inline]
    pub(crate) fn register<T: Component>(&mut self) -> ComponentId {
        if let Some(id) = self.find(TypeId::of::<T>()) {
            return id;
        }
        self.register_new::<T>()
    }

    /// The id of type `t`, if it is registered.
    #[inline]
    fn find(&self, t: TypeId) -> Option<ComponentId> {
        if let Some(&(kept, id)) = self.direct.get(direct_slot(t)) {
            if kept == t {
                return Some(id);
            }
        }
        self.by_type.get(&t).copied()
    }

    #[cold]
    fn register_new<T: Component>(&mut self) -> ComponentId {
        let id = ComponentId(
            u32::try_from(self.columns.len()).expect("fewer than 2^32 component types"),
        );
        self.columns.push(Column::new::<T>());
        let t = TypeId::of::<T>();
        self.by_type.insert(t, id);
        if self.direct.is_empty() {
            self.direct = alloc::vec![(TypeId::of::<Vacant>(), ComponentId(u32::MAX)); DIRECT];
        }
        let slot = &mut self.direct[direct_slot(t)];
        if slot.0 == TypeId::of::<Vacant>() {
            *slot = (t, id);
        }
        id
    }

    /// The id of `T`, if it is registered.
    #[inline]
    pub(crate) fn id<T: Component>(&self) -> Option<ComponentId> {
        match self.find(TypeId::of::<T>()) {
            Some(id) => Some(id),
            None => {
                self.refuse_misspelled::<T>();
                None
            }
        }
    }

    /// Panics if `T`, a type the world does not know and is asked about, is a reference to
    /// a registered component type (`&Pos` for `Pos`, the spelling of a query item) or a
    /// tuple of registered component types or references to them (a bundle where one type is
    /// asked for). Every type is a component, so without this `get::<&Pos>` or
    /// `remove::<(Pos, Vel)>` would find nothing, silently. Only lookups check: storing such a
    /// type (a flyweight `&'static Proto`, a `(f32, f32)` pair) registers it, and from then
    /// on it is found like any other.
    #[cold]
    #[track_caller]
    fn refuse_misspelled<T: Component>(&self) {
        let name = core::any::type_name::<T>();
        let known = |n: &str| self.columns.iter().any(|c| c.name == n);
        let referent = |n: &'static str| n.strip_prefix("&mut ").or_else(|| n.strip_prefix('&'));
        if let Some(r) = referent(name) {
            if known(r) {
                panic!(
                    "`{name}` is not a component type of this world: components are named by \
                     their type, `{r}` (a reference is a query item, not a component)"
                );
            }
        }
        if let Some(inner) = name.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
            let parts = split_top_level(inner);
            if !parts.is_empty() && parts.iter().all(|p| known(referent(p).unwrap_or(p))) {
                panic!(
                    "`{name}` is not a component type of this world: a tuple of components is \
                     a bundle; ask for one component type (`{}`), or take a bundle out with \
                     `World::take`",
                    referent(parts[0]).unwrap_or(parts[0])
                );
            }
        }
    }

    /// The id of the type `t`, if it is registered.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn id_of(&self, t: TypeId) -> Option<ComponentId> {
        self.find(t)
    }

    /// The column of `T`, if it is registered.
    #[inline]
    pub(crate) fn column<T: Component>(&self) -> Option<&Column> {
        let id = self.id::<T>()?;
        Some(&self.columns[id.index()])
    }

    /// The storage of `T`, if it is registered.
    #[inline]
    pub(crate) fn storage<T: Component>(&self) -> Option<&Storage<T>> {
        let id = self.id::<T>()?;
        // SAFETY: `id` was found by `T`'s `TypeId`, so its column holds a `Storage<T>`; the
        // caller meets the conditions of `Column::any`, as through `Column::storage`. (No
        // check of the type: a random `get` spent a fifth of its instructions on it.)
        #[allow(unsafe_code)]
        Some(unsafe { self.columns[id.index()].storage_of::<T>() })
    }

    /// The storage of `T`, mutable, registering `T` on first use.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn storage_or_insert<T: Component>(&mut self) -> &mut Storage<T> {
        let id = self.register::<T>();
        self.columns[id.index()].storage_of_mut()
    }

    /// The storage of `T`, mutable, if it is registered.
    #[inline]
    pub(crate) fn storage_mut<T: Component>(&mut self) -> Option<&mut Storage<T>> {
        let id = self.id::<T>()?;
        // SAFETY: `id` was found by `T`'s `TypeId`, so its column holds a `Storage<T>`.
        #[allow(unsafe_code)]
        Some(unsafe { self.columns[id.index()].storage_of_mut_unchecked::<T>() })
    }
}

/// Panics for `what` (a filter, or a call), which needs `T` tracked and found it not.
#[cold]
#[track_caller]
pub(crate) fn needs_tracking<T: Component>(what: core::fmt::Arguments<'_>) -> ! {
    panic!(
        "{what} needs the type tracked: call world.track::<{}>() first",
        core::any::type_name::<T>()
    )
}
