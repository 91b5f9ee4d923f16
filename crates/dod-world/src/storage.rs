//! One storage per component type, and the registry that finds a type's storage.
//!
//! A component type `T` lives in a [`Storage<T>`]: a [`dod::SparseSet<T>`] keyed by entity
//! index (dense values, walked like a slice), or, for a *tag* (a zero-sized type with no drop
//! glue: `struct Enemy;`), a [`dod::BitSet`] of entity indices alone. Storages hold components
//! of live entities only: the world checks liveness once, at its entry points, and removes
//! every component of an entity that it despawns, so the storages need no check of their own
//! (the component-storage article's rule: no liveness check in the hot path).
//!
//! Storages are type-erased behind [`AnyStorage`] in a [`Column`], with an atomic borrow flag
//! for the shared form of queries ([`Shared`](crate::Shared)).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::any::{Any, TypeId};
use core::cell::UnsafeCell;
use core::hash::{BuildHasherDefault, Hasher};
use core::mem;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::collections::HashMap;

use dod::{BitSet, SparseSet};

/// Anything that can be a component: `'static + Send + Sync`. Implemented for every such type.
///
/// ```
/// fn is_component<T: dod_world::Component>() {}
/// is_component::<[f32; 3]>();
/// is_component::<String>();
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

/// The storage of one component type: its values in a sparse set, or its presence bits for a
/// tag. (Public only so that [`Bundle`](crate::Bundle) can name it; not reachable outside.)
#[doc(hidden)]
#[allow(unreachable_pub)]
pub struct Storage<T> {
    pub(crate) set: SparseSet<T>,
    pub(crate) tags: BitSet,
    pub(crate) tag_count: usize,
}

/// Whether `T` is stored as presence bits: zero-sized with no drop glue, so one value is
/// indistinguishable from another and dropping one does nothing.
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

/// A tag value taken out of its storage; see [`tag_ref`].
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
    const IS_TAG: bool = is_tag::<T>();

    pub(crate) fn new() -> Self {
        Storage {
            set: SparseSet::new(),
            tags: BitSet::new(),
            tag_count: 0,
        }
    }

    /// Gives entity `index` its value; returns the value it replaced.
    #[inline]
    pub(crate) fn insert(&mut self, index: u32, value: T) -> Option<T> {
        if Self::IS_TAG {
            mem::forget(value);
            if self.tags.insert(index) {
                self.tag_count += 1;
                None
            } else {
                Some(tag_value())
            }
        } else {
            self.set.insert(index, value)
        }
    }

    /// Takes entity `index`'s value out.
    #[inline]
    pub(crate) fn remove(&mut self, index: u32) -> Option<T> {
        if Self::IS_TAG {
            if self.tags.remove(index) {
                self.tag_count -= 1;
                Some(tag_value())
            } else {
                None
            }
        } else {
            self.set.swap_remove(index)
        }
    }

    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&T> {
        if Self::IS_TAG {
            self.tags.contains(index).then(tag_ref)
        } else {
            self.set.get(index)
        }
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, index: u32) -> Option<&mut T> {
        if Self::IS_TAG {
            self.tags.contains(index).then(tag_mut)
        } else {
            self.set.get_mut(index)
        }
    }

    #[inline]
    pub(crate) fn contains(&self, index: u32) -> bool {
        if Self::IS_TAG {
            self.tags.contains(index)
        } else {
            self.set.contains(index)
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        if Self::IS_TAG {
            self.tag_count
        } else {
            self.set.len()
        }
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        if !Self::IS_TAG {
            self.set.reserve(additional);
        }
    }
}

/// A storage with its type erased: what the world needs without knowing the type.
pub(crate) trait AnyStorage: Any + Send + Sync {
    /// Drops entity `index`'s component, if it has one.
    fn remove_index(&mut self, index: u32) -> bool;
    /// The number of entities with the component.
    fn len(&self) -> usize;
    /// Drops every component.
    fn clear(&mut self);
    /// Heap bytes held.
    fn memory_usage(&self) -> usize;
    /// The entity indices that have the component, in storage order.
    fn indices(&self) -> Vec<u32>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Component> AnyStorage for Storage<T> {
    fn remove_index(&mut self, index: u32) -> bool {
        self.remove(index).is_some()
    }

    fn len(&self) -> usize {
        Storage::len(self)
    }

    fn clear(&mut self) {
        if Self::IS_TAG {
            self.tags.clear();
            self.tag_count = 0;
        } else {
            self.set.clear();
        }
    }

    fn memory_usage(&self) -> usize {
        self.set.memory_usage() + self.tags.memory_usage()
    }

    fn indices(&self) -> Vec<u32> {
        if Self::IS_TAG {
            self.tags.iter().collect()
        } else {
            self.set.indices().to_vec()
        }
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
}

// SAFETY: the storage inside is `Send + Sync` (`AnyStorage` requires it). A `&Column` hands
// out `&Storage` freely (shared access of a `Sync` value) and `&mut Storage` only through
// `storage_mut`, whose callers hold either `&mut World` or this column's exclusive borrow
// flag, so no `&mut` ever coexists with another reference to the same storage.
#[allow(unsafe_code)]
unsafe impl Sync for Column {}

impl Column {
    fn new<T: Component>() -> Self {
        Column {
            borrow: AtomicBorrow::new(),
            storage: UnsafeCell::new(Box::new(Storage::<T>::new())),
            name: core::any::type_name::<T>(),
        }
    }

    /// The erased storage, shared.
    ///
    /// Callers hold `&World` with no exclusive access to this column live: the world is not
    /// in a [`Shared`](crate::Shared) scope, or they hold a shared borrow flag.
    #[inline]
    #[allow(unsafe_code)]
    pub(crate) fn any(&self) -> &dyn AnyStorage {
        // SAFETY: `&mut` to the storage exists only under `&mut World` or this column's
        // exclusive flag (see `storage_mut`); a caller of `any` holds `&World` outside a
        // `Shared` scope (so no flag-based `&mut` exists) or a shared flag.
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

    /// The typed storage, mutable, through `&self`.
    ///
    /// # Safety
    ///
    /// The caller has exclusive access to this column for `'a`: it holds `&mut World` (and
    /// takes no other reference to this column), or this column's exclusive borrow flag.
    #[inline]
    #[allow(unsafe_code, clippy::mut_from_ref)]
    pub(crate) unsafe fn storage_mut<'a, T: Component>(&'a self) -> &'a mut Storage<T> {
        // SAFETY: exclusive access for `'a` is the caller's contract.
        let any: &'a mut dyn AnyStorage = unsafe { &mut **self.storage.get() };
        downcast_mut(any.as_any_mut())
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

/// The storages of a world, by registration order, and the map from type to column. (Public
/// only so that [`Bundle`](crate::Bundle) can name it; not reachable outside.)
#[derive(Default)]
#[doc(hidden)]
#[allow(unreachable_pub)]
pub struct Components {
    pub(crate) columns: Vec<Column>,
    by_type: HashMap<TypeId, ComponentId, BuildHasherDefault<TypeIdHasher>>,
}

impl Components {
    /// The id of `T`, registering it on first use.
    #[inline]
    pub(crate) fn register<T: Component>(&mut self) -> ComponentId {
        if let Some(&id) = self.by_type.get(&TypeId::of::<T>()) {
            return id;
        }
        self.register_new::<T>()
    }

    #[cold]
    fn register_new<T: Component>(&mut self) -> ComponentId {
        let id = ComponentId(
            u32::try_from(self.columns.len()).expect("fewer than 2^32 component types"),
        );
        self.columns.push(Column::new::<T>());
        self.by_type.insert(TypeId::of::<T>(), id);
        id
    }

    /// The id of `T`, if it is registered.
    #[inline]
    pub(crate) fn id<T: Component>(&self) -> Option<ComponentId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
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
        Some(self.column::<T>()?.storage())
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
        Some(self.columns[id.index()].storage_of_mut())
    }
}
