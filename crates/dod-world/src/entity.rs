//! [`Entity`] and the allocator that hands entities out, [`Entities`].
//!
//! The allocator follows dod's generational slot rules ([`dod::slot`]): a slot's [`Tag`] holds
//! the generation of its entity and the world's id; a despawned entity's slot keeps its
//! generation, joins the back of a FIFO queue, and is reused only once at least `min_free`
//! other slots wait in the queue (keep N free); a slot whose generation reached 65 535 is
//! retired instead of reused. So a despawned entity never resolves again, in this world or
//! another.
//!
//! # Reservation
//!
//! [`Entities::reserve`] takes `&self`: an atomic cursor counts the reservations made since the
//! last flush, and the n-th reservation names the n-th slot the next allocations would take
//! (the queue's front, then new slots past the end). The world makes reserved entities alive,
//! in reservation order, before any structural change ([`World::flush`](crate::World::flush)).
//!
//! # Invariants
//!
//! 1. `queue[head..]` holds each vacant, non-retired slot exactly once, in the order the slots
//!    were vacated; `queue[..head]` is spent and holds nothing that matters.
//! 2. Every tag carries the world id; `live` counts the occupied tags.
//! 3. `reserved` is 0 whenever `&mut self` is observed by anything but `flush`.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use dod::slot::{Age, Tag};
use dod::Key;

use crate::error::{NoSuchEntity, NotAlive};

dod::new_handle_type! {
    /// An entity of a [`World`](crate::World): a 64-bit generational id (index 32 bits,
    /// generation 16, the world's id 15).
    ///
    /// An entity stays valid until it is despawned; after that it is *stale* for good: every
    /// lookup with it answers `None`, `false` or [`NoSuchEntity`](crate::NoSuchEntity), and
    /// no component of it ever shows up under another entity. Entities of another world are
    /// refused the same way, by their world id, as far as 15 bits allow:
    /// - the worlds a process makes take ids 1 to 32 767 in turn, from a start drawn once per
    ///   process, so no two of them share one until 32 767 have been made;
    /// - a loaded world keeps the id it was saved with (so the saved entities stay valid): two
    ///   worlds loaded from one save accept each other's entities, and each world the process
    ///   made has about one chance in 32 767 of sharing its id with a loaded one.
    ///
    /// `Option<Entity>` is 8 bytes. With the `serde` feature an entity is written as its
    /// 64-bit integer form ([`to_bits`](Entity::to_bits)), which is above 2⁵³ for most
    /// entities: a reader that keeps JSON numbers as `f64` (JavaScript's `JSON.parse`) rounds
    /// it to another entity. Keep such saves in a binary format, or read them with a parser
    /// that keeps 64-bit integers.
    ///
    /// ```
    /// use dod_world::{Entity, World};
    /// let mut world = World::new();
    /// let e: Entity = world.spawn((1u32,));
    /// assert!(world.is_alive(e));
    /// world.despawn(e);
    /// assert!(!world.is_alive(e));
    /// assert_eq!(core::mem::size_of::<Option<Entity>>(), 8);
    /// ```
    pub struct Entity;
}

impl Entity {
    /// The slot index: the key that component storages are indexed by.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// assert_eq!(world.spawn(()).index(), 0);
    /// ```
    #[inline]
    pub fn index(self) -> u32 {
        Key::index(self)
    }

    /// The generation of the slot when the entity was spawned.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// assert_eq!(world.spawn(()).generation(), 1);
    /// ```
    #[inline]
    pub fn generation(self) -> u16 {
        Key::generation(self)
    }

    /// The id of the world that spawned or reserved the entity: its
    /// [`Entities::world_id`] (which `Debug` prints as `type_id`, the name of this part of a
    /// [`dod::Key`]).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert_eq!(e.world_id(), world.entities().world_id());
    /// assert!(format!("{e:?}").contains(&format!("type_id: {}", e.world_id())));
    /// ```
    #[inline]
    pub fn world_id(self) -> u16 {
        Key::type_id(self)
    }

    /// The entity as 64 bits, for files, scripts and the network; [`from_bits`](Entity::from_bits)
    /// reads it back.
    ///
    /// ```
    /// use dod_world::{Entity, World};
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
    /// ```
    #[inline]
    pub fn to_bits(self) -> u64 {
        self.raw().to_bits()
    }

    /// An entity from [`to_bits`](Entity::to_bits), or `None` for a pattern no world hands
    /// out: generation 0, world id 0, index `u32::MAX`, or the reserved top bit set. A
    /// well-formed but forged entity is still checked by the world it is used with. (An
    /// entity read with serde, or checked as `bytemuck` bits, is read as a [`dod::Handle`]
    /// is, which allows world id 0; every world refuses such an entity as of another world.)
    /// To build an entity from its parts, use [`Key::from_parts`](dod::Key::from_parts).
    ///
    /// ```
    /// use core::num::NonZeroU16;
    /// use dod_world::{dod::Key, Entity};
    /// assert_eq!(Entity::from_bits(0), None);
    /// let e = Entity::from_bits(3 | 1 << 32 | 5 << 48).unwrap(); // index 3, generation 1, world 5
    /// assert_eq!((e.index(), e.generation(), e.world_id()), (3, 1, 5));
    /// assert_eq!(e, Entity::from_parts(3, NonZeroU16::MIN, 5));
    /// assert_eq!(Entity::from_bits(3 | 1 << 32), None); // world id 0: no world has it
    /// ```
    #[inline]
    pub fn from_bits(bits: u64) -> Option<Entity> {
        dod::Handle::from_bits(bits)
            .map(Entity::from_raw)
            .filter(|e| e.world_id() != 0)
    }
}

/// The index and the generation, as `3v1` (the [world id](Entity::world_id) is left out;
/// `Debug` shows it, as the key's `type_id`).
///
/// ```
/// let mut world = dod_world::World::new();
/// let e = world.spawn(());
/// assert_eq!(e.to_string(), "0v1");
/// ```
impl core::fmt::Display for Entity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())
    }
}

/// The entity allocator of a [`World`](crate::World): which entities are alive, and which
/// slots the next spawns take. Reached through [`World::entities`](crate::World::entities)
/// and [`Shared::entities`](crate::Shared::entities).
pub struct Entities {
    tags: Vec<Tag>,
    queue: Vec<u32>,
    head: usize,
    min_free: u32,
    live: u32,
    world_id: u16,
    reserved: AtomicUsize,
}

/// The most slots a world has: every index an [`Entity`] can carry.
const MAX_SLOTS: usize = (u32::MAX - 1) as usize + 1;

impl Entities {
    pub(crate) fn new(world_id: u16, min_free: u32) -> Self {
        Entities {
            tags: Vec::new(),
            queue: Vec::new(),
            head: 0,
            min_free,
            live: 0,
            world_id,
            reserved: AtomicUsize::new(0),
        }
    }

    /// The number of live entities (reserved ones count once the world has flushed them).
    /// O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn(());
    /// assert_eq!(world.entities().len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// Whether no entity is alive. O(1).
    ///
    /// ```
    /// assert!(dod_world::World::new().entities().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether `e` is alive in this world: spawned here and not despawned since. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// assert!(world.entities().is_alive(e));
    /// ```
    #[inline]
    pub fn is_alive(&self, e: Entity) -> bool {
        self.tags
            .get(e.index() as usize)
            .is_some_and(|t| t.matches(e))
    }

    /// The live entities, in index order. O(slots): it walks every slot ever used.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let a = world.spawn(());
    /// let b = world.spawn(());
    /// let c = world.spawn(());
    /// world.despawn(b);
    /// assert_eq!(world.entities().iter().collect::<Vec<_>>(), [a, c]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        self.tags
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_vacant())
            .map(|(i, t)| t.to_key(i as u32))
    }

    /// The number of slots ever used: live, vacant and retired. Entity indices are below it.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.despawn(e);
    /// assert_eq!((world.entities().len(), world.entities().slot_count()), (0, 1));
    /// ```
    #[inline]
    pub fn slot_count(&self) -> usize {
        self.tags.len()
    }

    /// How many vacant slots are kept back before one is reused (keep N free).
    ///
    /// ```
    /// let world = dod_world::World::builder().min_free(16).build();
    /// assert_eq!(world.entities().min_free(), 16);
    /// ```
    #[inline]
    pub fn min_free(&self) -> u32 {
        self.min_free
    }

    /// The id this world stamps into its entities.
    ///
    /// ```
    /// let a = dod_world::World::new();
    /// let b = dod_world::World::new();
    /// assert_ne!(a.entities().world_id(), b.entities().world_id());
    /// ```
    #[inline]
    pub fn world_id(&self) -> u16 {
        self.world_id
    }

    /// Names an entity that the world will make alive, without changing anything: callable
    /// from several threads at once. The entity becomes alive (with no component) at the
    /// world's next flush, which every structural change and
    /// [`World::apply`](crate::World::apply) do first; until then
    /// [`is_alive`](Entities::is_alive) is `false` for it.
    ///
    /// # Panics
    ///
    /// If every index an entity can carry is in use (2³² − 1 slots).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.entities().reserve();
    /// assert!(!world.is_alive(e));
    /// world.flush();
    /// assert!(world.is_alive(e));
    /// ```
    #[track_caller]
    pub fn reserve(&self) -> Entity {
        let n = self.reserved.fetch_add(1, Ordering::Relaxed);
        let (index, tag) = self.reservation(n);
        assert!(
            index < MAX_SLOTS,
            "World is full: every entity index is in use or retired"
        );
        occupied(tag).to_key(index as u32)
    }

    /// The slot the `n`-th reservation since the last flush names, and the slot's tag now:
    /// the queue's front first, then new slots past the end (an index that may be past the
    /// last one an entity can carry, which `reserve` refuses).
    #[inline]
    fn reservation(&self, n: usize) -> (usize, Tag) {
        let reuse = self.reusable();
        if n < reuse {
            let index = self.queue[self.head + n] as usize;
            // Queued slots are not retired (invariant 1), so they can be occupied.
            return (index, self.tags[index]);
        }
        (self.tags.len() + (n - reuse), Tag::vacant(0, self.world_id))
    }

    /// Queued slots that the next allocations may take, beyond the `min_free` kept back.
    #[inline]
    fn reusable(&self) -> usize {
        (self.queue.len() - self.head).saturating_sub(self.min_free as usize)
    }

    /// The error for `e`, which is not alive here, with the reason. O(pending reservations):
    /// for error paths only.
    #[cold]
    #[inline(never)]
    pub(crate) fn not_alive(&self, e: Entity) -> NoSuchEntity {
        debug_assert!(!self.is_alive(e), "{e} is alive");
        let entity_world = e.world_id();
        let reason = if entity_world != self.world_id {
            NotAlive::OtherWorld {
                entity_world,
                this_world: self.world_id,
            }
        } else if self.is_reserved(e) {
            NotAlive::Reserved
        } else {
            match self.tags.get(e.index() as usize).map(|t| t.age_of(e)) {
                // The slot moved past it, or holds it vacant: it lived here and was despawned.
                Some(Age::Older | Age::Same) => NotAlive::Despawned,
                _ => NotAlive::NeverMade,
            }
        };
        NoSuchEntity::new(e, reason)
    }

    /// Whether `e` is one of the entities reserved since the last flush, each named as
    /// [`reserve`](Entities::reserve) named it. O(pending reservations).
    fn is_reserved(&self, e: Entity) -> bool {
        let pending = self.reserved.load(Ordering::Relaxed);
        (0..pending).any(|n| {
            let (index, tag) = self.reservation(n);
            index == e.index() as usize && occupied(tag).to_key::<Entity>(e.index()) == e
        })
    }

    /// Whether entities were reserved since the last flush.
    #[inline]
    pub(crate) fn has_reserved(&mut self) -> bool {
        *self.reserved.get_mut() != 0
    }

    /// Makes every reserved entity alive, in reservation order; returns how many there were.
    pub(crate) fn flush(&mut self) -> usize {
        let n = core::mem::take(self.reserved.get_mut());
        if n == 0 {
            return 0;
        }
        let reuse = n.min(self.reusable());
        for _ in 0..reuse {
            self.pop_queued();
        }
        self.live += reuse as u32;
        self.push_new(n - reuse);
        n
    }

    /// Takes the slot at the front of the queue and occupies it.
    #[inline]
    fn pop_queued(&mut self) -> u32 {
        let index = self.queue[self.head];
        self.head += 1;
        let t = &mut self.tags[index as usize];
        *t = occupied(*t);
        index
    }

    /// Makes a new entity alive. The caller has flushed.
    ///
    /// # Panics
    ///
    /// If every index is in use or retired.
    #[inline]
    #[track_caller]
    pub(crate) fn alloc(&mut self) -> Entity {
        debug_assert_eq!(*self.reserved.get_mut(), 0);
        let (index, tag) = if self.queue.len() - self.head > self.min_free as usize {
            let index = self.pop_queued();
            (index, self.tags[index as usize])
        } else if self.tags.len() < MAX_SLOTS {
            let tag = Self::fresh_tag(self.world_id);
            self.tags.push(tag);
            (self.tags.len() as u32 - 1, tag)
        } else {
            self.alloc_when_full()
        };
        self.live += 1;
        tag.to_key(index)
    }

    /// `alloc` once every index has been handed out: a queued slot is taken even if fewer
    /// than `min_free` wait.
    #[cold]
    #[track_caller]
    fn alloc_when_full(&mut self) -> (u32, Tag) {
        assert!(
            self.queue.len() > self.head,
            "World is full: every entity index is in use or retired"
        );
        let index = self.pop_queued();
        (index, self.tags[index as usize])
    }

    /// The first index of a run of new slots, if the next allocations take new slots (no
    /// queued slot waits beyond keep-N-free): a batch can then spawn `first, first + 1, …`
    /// and make them alive at the end with [`push_new`](Self::push_new).
    #[inline]
    pub(crate) fn new_run_start(&self) -> Option<u32> {
        let len = self.tags.len();
        (self.reusable() == 0 && len < MAX_SLOTS).then_some(len as u32)
    }

    /// How many new slots are left past the end.
    #[inline]
    pub(crate) fn new_slots_left(&self) -> usize {
        MAX_SLOTS - self.tags.len()
    }

    /// How many new slots fit past the end without reallocating (and without passing the
    /// slot limit).
    #[inline]
    pub(crate) fn new_slots_reserved(&self) -> usize {
        (self.tags.capacity() - self.tags.len()).min(self.new_slots_left())
    }

    /// Makes `n` new slots alive at the end: the entities a run spawned. The caller has
    /// checked the room with [`new_slots_left`](Self::new_slots_left).
    pub(crate) fn push_new(&mut self, n: usize) {
        debug_assert!(n <= self.new_slots_left());
        let tag = Self::fresh_tag(self.world_id);
        self.tags.resize(self.tags.len() + n, tag);
        self.live += n as u32;
    }

    /// The tag of a new slot once occupied.
    #[inline]
    pub(crate) fn fresh_tag(world_id: u16) -> Tag {
        occupied(Tag::vacant(0, world_id))
    }

    /// The index the allocation after the next one takes, if it reuses a queued slot (a new
    /// slot is the next one past the end, which is rarely far from the cache): far enough
    /// ahead that its slots are loaded by the time a run of spawns reaches it.
    #[inline]
    pub(crate) fn reused_after_next(&self) -> Option<u32> {
        if self.queue.len() - self.head > self.min_free as usize + 1 {
            Some(self.queue[self.head + 1])
        } else {
            None
        }
    }

    /// Starts loading the slot of `index` into the cache.
    #[inline]
    pub(crate) fn prefetch(&self, index: u32) {
        if let Some(t) = self.tags.get(index as usize) {
            dod::hint::prefetch(t);
        }
    }

    /// Room for `additional` more entities without reallocating.
    pub(crate) fn reserve_capacity(&mut self, additional: usize) {
        let reuse = self.reusable();
        self.tags.reserve(additional.saturating_sub(reuse));
    }

    /// Ends `e`'s life; `false` if it was not alive. Its slot joins the back of the queue,
    /// or retires if its generations are spent.
    #[inline]
    pub(crate) fn free(&mut self, e: Entity) -> bool {
        debug_assert_eq!(*self.reserved.get_mut(), 0);
        let i = e.index() as usize;
        match self.tags.get_mut(i) {
            Some(t) if t.matches(e) => {
                *t = t.vacate();
                if !t.is_retired() {
                    self.enqueue(i as u32);
                }
                self.live -= 1;
                true
            }
            _ => false,
        }
    }

    #[inline]
    fn enqueue(&mut self, index: u32) {
        // Drop the spent front once it is most of the buffer: amortised O(1) per slot.
        if self.head > 64 && self.head * 2 > self.queue.len() {
            self.drop_spent();
        }
        self.queue.push(index);
    }

    #[cold]
    #[inline(never)]
    fn drop_spent(&mut self) {
        self.queue.drain(..self.head);
        self.head = 0;
    }

    /// Whether slot `index` holds a live entity.
    #[inline]
    pub(crate) fn is_occupied(&self, index: u32) -> bool {
        self.tags
            .get(index as usize)
            .is_some_and(|t| !t.is_vacant())
    }

    /// The entity at `index`: the live one, or the last one if the slot is vacant (the slot
    /// held one: its generation is not 0).
    #[inline]
    pub(crate) fn entity_at(&self, index: u32) -> Entity {
        self.tags[index as usize].to_key(index)
    }

    /// Ends every entity's life, in index order.
    pub(crate) fn clear(&mut self) {
        debug_assert_eq!(*self.reserved.get_mut(), 0);
        for i in 0..self.tags.len() {
            let t = self.tags[i];
            if !t.is_vacant() {
                let t = t.vacate();
                self.tags[i] = t;
                if !t.is_retired() {
                    self.enqueue(i as u32);
                }
            }
        }
        self.live = 0;
    }

    /// Releases the capacity past the slots and the queued entries (no reservation is
    /// outstanding: the world applied them).
    pub(crate) fn shrink_to_fit(&mut self) {
        debug_assert_eq!(*self.reserved.get_mut(), 0);
        self.drop_spent();
        self.queue.shrink_to_fit();
        self.tags.shrink_to_fit();
    }

    /// Heap bytes held.
    pub(crate) fn memory_usage(&self) -> usize {
        self.tags.capacity() * core::mem::size_of::<Tag>()
            + self.queue.capacity() * core::mem::size_of::<u32>()
    }

    /// The queued slots, oldest first.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn queued(&self) -> &[u32] {
        &self.queue[self.head..]
    }

    /// The slot tags (as bits) and the free queue as they will be once the world flushes, for
    /// saving from a shared reference: the entities reserved so far are alive in them, so an
    /// entity reserved before a save names the same entity after the load, and no later spawn
    /// is handed its index.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn flushed_parts(&self) -> (Vec<u32>, &[u32]) {
        let n = self.reserved.load(Ordering::Relaxed);
        let reuse = n.min(self.reusable());
        let mut tags: Vec<u32> = self.tags.iter().map(|t| t.to_bits()).collect();
        for &index in &self.queue[self.head..self.head + reuse] {
            tags[index as usize] = occupied(self.tags[index as usize]).to_bits();
        }
        // `reserve` handed out these new indices below `MAX_SLOTS`, and the saved world
        // would make them alive at its next flush, as this one will.
        let fresh = (n - reuse).min(self.new_slots_left());
        tags.resize(tags.len() + fresh, Self::fresh_tag(self.world_id).to_bits());
        (tags, &self.queue[self.head + reuse..])
    }

    /// An allocator from saved parts, checked: every tag carries `world_id`, the queue holds
    /// exactly the vacant, non-retired slots, each once.
    #[allow(dead_code)]
    pub(crate) fn from_parts(
        world_id: u16,
        min_free: u32,
        tags: Vec<Tag>,
        queue: Vec<u32>,
    ) -> Result<Self, &'static str> {
        if tags.len() > MAX_SLOTS {
            return Err("more entity slots than an entity index can name");
        }
        let mut live = 0u32;
        let mut reusable = 0usize;
        for t in &tags {
            if t.type_id() != world_id {
                return Err("an entity slot carries another world id");
            }
            if t.is_vacant() {
                if !t.is_retired() {
                    reusable += 1;
                }
            } else if t.generation() == 0 {
                return Err("an occupied entity slot at generation 0");
            } else {
                live += 1;
            }
        }
        let mut seen = alloc::vec![false; tags.len()];
        for &i in &queue {
            let t = tags
                .get(i as usize)
                .ok_or("the free queue names a slot out of range")?;
            if !t.is_vacant() || t.is_retired() {
                return Err("the free queue names a live or retired slot");
            }
            if core::mem::replace(&mut seen[i as usize], true) {
                return Err("the free queue names a slot twice");
            }
        }
        if queue.len() != reusable {
            return Err("a vacant entity slot is missing from the free queue");
        }
        Ok(Entities {
            tags,
            queue,
            head: 0,
            min_free,
            live,
            world_id,
            reserved: AtomicUsize::new(0),
        })
    }

    /// Checks every invariant; for tests.
    pub(crate) fn assert_invariants(&self) {
        assert_eq!(
            self.reserved.load(Ordering::Relaxed),
            0,
            "unflushed reservations"
        );
        let mut queued = alloc::vec![false; self.tags.len()];
        for &i in self.queued() {
            let t = self.tags[i as usize];
            assert!(
                t.is_vacant() && !t.is_retired(),
                "queued slot {i} is not reusable"
            );
            assert!(
                !core::mem::replace(&mut queued[i as usize], true),
                "slot {i} queued twice"
            );
        }
        let mut live = 0;
        for (i, t) in self.tags.iter().enumerate() {
            assert_eq!(t.type_id(), self.world_id, "world id of slot {i}");
            if t.is_vacant() {
                assert_eq!(!t.is_retired(), queued[i], "slot {i} queued iff reusable");
            } else {
                live += 1;
            }
        }
        assert_eq!(live, self.live, "live count");
    }
}

/// The tag of a reusable vacant slot once occupied.
#[inline]
fn occupied(t: Tag) -> Tag {
    // Callers only pass vacant slots that are not retired, or occupied tags.
    t.occupy().unwrap_or(t)
}

impl core::fmt::Debug for Entities {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entities")
            .field("live", &self.live)
            .field("slots", &self.tags.len())
            .field("queued", &(self.queue.len() - self.head))
            .field("min_free", &self.min_free)
            .field("world_id", &self.world_id)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_reuse_keeps_min_free_back() {
        let mut es = Entities::new(1, 2);
        let a = es.alloc();
        let b = es.alloc();
        let c = es.alloc();
        assert!(es.free(b));
        assert!(es.free(a));
        // Two queued, two kept back: a new slot.
        let d = es.alloc();
        assert_eq!(d.index(), 3);
        assert!(es.free(c));
        // Three queued: the oldest (b's slot) comes back, a generation on.
        let e = es.alloc();
        assert_eq!((e.index(), e.generation()), (b.index(), 2));
        assert!(!es.is_alive(b) && es.is_alive(e));
        es.assert_invariants();
    }

    #[test]
    fn reservations_name_what_flush_makes_alive() {
        let mut es = Entities::new(3, 0);
        let a = es.alloc();
        let b = es.alloc();
        es.free(a);
        let r: Vec<Entity> = (0..3).map(|_| es.reserve()).collect();
        assert_eq!(r[0].index(), a.index());
        assert_eq!(r[0].generation(), 2);
        assert_eq!((r[1].index(), r[2].index()), (2, 3));
        assert!(r.iter().all(|&e| !es.is_alive(e)));
        assert_eq!(es.flush(), 3);
        assert!(r.iter().all(|&e| es.is_alive(e)));
        assert!(es.is_alive(b));
        assert_eq!(es.len(), 4);
        es.assert_invariants();
    }

    #[test]
    fn a_slot_retires_instead_of_wrapping() {
        let mut es = Entities::new(1, 0);
        let mut last = es.alloc();
        for _ in 1..u16::MAX {
            es.free(last);
            last = es.alloc();
            assert_eq!(last.index(), 0);
        }
        assert_eq!(last.generation(), u16::MAX);
        es.free(last);
        let next = es.alloc();
        assert_eq!(next.index(), 1, "slot 0 is retired");
        es.assert_invariants();
    }

    #[test]
    fn foreign_entities_are_not_alive() {
        let mut a = Entities::new(1, 0);
        let b = Entities::new(2, 0);
        let e = a.alloc();
        assert!(!b.is_alive(e));
        let mut b = b;
        let f = b.alloc();
        assert_eq!(e.index(), f.index());
        assert!(!b.is_alive(e) && !a.is_alive(f));
    }
}
