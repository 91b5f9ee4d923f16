//! [`ViewMut`]: one component type's storage, borrowed once for many entities.

use core::fmt;

use crate::commands::Commands;
use crate::entity::{Entities, Entity};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::group::{owned_storage, owned_storage_ref, Group, Leaving, OwnedStorages};
use crate::storage::{Component, Ctx, Storage, Tick};
use crate::World;

/// The storage of one component type, borrowed from the world once for many entities:
/// inserting, removing and looking up `T` without finding the type's storage again each time
/// (what shipyard's and specs' views do). Made by [`World::view_mut`].
///
/// Everything the world keeps in step is kept: liveness is checked per call, groups gain and
/// lose members, tracked types are stamped and removals listed, hooks run (the commands they
/// record are applied at the world's next change).
///
/// ```
/// use dod_world::World;
/// struct Shield(u32);
/// let mut world = World::new();
/// let es: Vec<_> = world.spawn_batch((0..100u32).map(|i| (i,))).collect();
/// let mut shields = world.view_mut::<Shield>();
/// for &e in &es {
///     shields.insert(e, Shield(10)).unwrap();
/// }
/// assert_eq!(shields.len(), 100);
/// for &e in &es[..50] {
///     shields.remove(e);
/// }
/// drop(shields);
/// assert_eq!(world.count::<Shield>(), 50);
/// ```
pub struct ViewMut<'w, T: Component> {
    entities: &'w Entities,
    target: Target<'w, T>,
    commands: &'w mut Commands,
    now: Tick,
}

/// What a view holds: the storage itself, or, for a type of an owning group, every storage
/// (entering and leaving the group moves the others too).
enum Target<'w, T: Component> {
    Alone(&'w mut Storage<T>),
    Grouped {
        /// The group's storages, `T`'s among them.
        owned: OwnedStorages<'w>,
        group: &'w mut Group,
        /// Where `T` is among the group's types.
        me: usize,
    },
}

impl World {
    /// The storage of `T`, borrowed for many calls: see [`ViewMut`]. Registers `T` on first
    /// use.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// let mut names = world.view_mut::<&str>();
    /// names.insert(e, "Gorm").unwrap();
    /// assert_eq!(names.get(e), Some(&"Gorm"));
    /// ```
    pub fn view_mut<T: Component>(&mut self) -> ViewMut<'_, T> {
        self.flush();
        let now = self.change_tick();
        let (entities, components, commands) = self.view_parts();
        let id = components.register::<T>();
        let target = match components.columns[id.index()].group {
            Some(g) => {
                let (owned, group) = components.group_parts(g as usize);
                let me = group.rank_of(id);
                Target::Grouped { owned, group, me }
            }
            None => {
                // SAFETY: `id` was registered for `T` just above.
                #[allow(unsafe_code)]
                let storage = unsafe { components.columns[id.index()].storage_of_mut_unchecked() };
                Target::Alone(storage)
            }
        };
        ViewMut {
            entities,
            target,
            commands,
            now,
        }
    }
}

impl<T: Component> ViewMut<'_, T> {
    /// The storage, shared.
    #[inline]
    fn shared(&self) -> &Storage<T> {
        match &self.target {
            Target::Alone(storage) => storage,
            Target::Grouped { owned, me, .. } => {
                // SAFETY: entry `me` is `T`'s storage (`view_mut` found `T`'s id there).
                #[allow(unsafe_code)]
                unsafe {
                    owned_storage_ref::<T>(&owned[*me])
                }
            }
        }
    }

    /// The storage, mutable, with the context of a structural change.
    #[inline]
    fn storage(&mut self) -> (&mut Storage<T>, Ctx<'_>) {
        let storage = match &mut self.target {
            Target::Alone(storage) => &mut **storage,
            Target::Grouped { owned, me, .. } => {
                // SAFETY: entry `me` is `T`'s storage (`view_mut` found `T`'s id there).
                // Unchecked: a view is made for many calls, and the type test would be paid
                // on every one.
                #[allow(unsafe_code)]
                unsafe {
                    owned_storage::<T>(&mut owned[*me])
                }
            }
        };
        (
            storage,
            Ctx {
                now: self.now,
                commands: self.commands,
            },
        )
    }

    /// Gives `e` its `T`, returning `true` if it had none (a value it had is replaced and
    /// dropped, through the hooks). O(1); O(owned storages) when `T` is in a group.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`](crate::NoSuchEntity) if `e` is not alive; the value is dropped.
    ///
    /// # Panics
    ///
    /// If a hook of `T` panics, or the `Drop` of a value it replaces: the new value is in
    /// (after a panicking `Drop`, without its insert hook call), and in a group the entity is
    /// packed all the same (see [`World::on_insert`](crate::World::on_insert)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// let mut v = world.view_mut::<u8>();
    /// assert_eq!(v.insert(e, 1), Ok(true));
    /// assert_eq!(v.insert(e, 2), Ok(false));
    /// assert_eq!(v.get(e), Some(&2));
    /// ```
    #[inline(always)]
    pub fn insert(&mut self, e: Entity, value: T) -> Result<bool, crate::NoSuchEntity> {
        if !self.entities.is_alive(e) {
            return Err(self.entities.not_alive(e));
        }
        // A plain storage (no bits, stamps or hooks): the set's own work and, in a group, one
        // call to the group's move, with no context to make. Only these paths are inlined
        // into the caller's loop (always: a call per entity costs as much as the insertion);
        // the rest is out of line.
        let value = match &mut self.target {
            Target::Alone(storage) => match storage.insert_plain(e, value) {
                Ok(new) => return Ok(new),
                Err(value) => value,
            },
            Target::Grouped { owned, group, me } => {
                // SAFETY: entry `me` is `T`'s storage (`view_mut` found `T`'s id there).
                #[allow(unsafe_code)]
                let storage = unsafe { owned_storage::<T>(&mut owned[*me]) };
                match storage.insert_plain(e, value) {
                    // No hook runs, so nothing can panic between the value going in and the
                    // entity entering; a replaced value (whose drop may panic) changes no
                    // membership.
                    Ok(new) => {
                        if new {
                            group.enter(owned, e.index());
                        }
                        return Ok(new);
                    }
                    Err(value) => value,
                }
            }
        };
        Ok(self.insert_special(e, value))
    }

    /// [`insert`](Self::insert) for a live `e` into a storage that has bits, stamps or hooks.
    #[inline(never)]
    fn insert_special(&mut self, e: Entity, value: T) -> bool {
        let grouped = matches!(self.target, Target::Grouped { .. });
        let (storage, mut ctx) = self.storage();
        if !grouped {
            return storage.insert(e, value, &mut ctx);
        }
        // The hooks run before the entity enters the group: if one panics, the value is in
        // and the entity enters all the same (`enter` checks what it has), as with
        // `World::insert`, before the panic goes on.
        let inserted = catch_unwind(AssertUnwindSafe(|| storage.insert(e, value, &mut ctx)));
        if let Target::Grouped { owned, group, .. } = &mut self.target {
            if inserted.as_ref().map_or(true, |&new| new) {
                group.enter(owned, e.index());
            }
        }
        match inserted {
            Ok(new) => new,
            Err(panic) => resume_unwind(panic),
        }
    }

    /// Takes `e`'s `T` out, or `None` if `e` is not alive or has none. O(1); O(owned
    /// storages) when `T` is in a group.
    ///
    /// # Panics
    ///
    /// If `T`'s remove hook panics: the value is out and dropped (see
    /// [`World::on_remove`](crate::World::on_remove)).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((5u8,));
    /// assert_eq!(world.view_mut::<u8>().remove(e), Some(5));
    /// ```
    #[inline(always)]
    pub fn remove(&mut self, e: Entity) -> Option<T> {
        if !self.entities.is_alive(e) {
            return None;
        }
        // As in `insert`: the plain paths inline, the rest out of line.
        match &mut self.target {
            Target::Alone(storage) => {
                if let Some(taken) = storage.remove_plain(e) {
                    return taken;
                }
            }
            Target::Grouped { owned, group, me } => {
                // SAFETY: entry `me` is `T`'s storage (`view_mut` found `T`'s id there).
                #[allow(unsafe_code)]
                let plain = unsafe { owned_storage::<T>(&mut owned[*me]) }.is_plain();
                if plain {
                    group.leave(owned, e.index(), Leaving::Loses(*me));
                    // SAFETY: as above.
                    #[allow(unsafe_code)]
                    let storage = unsafe { owned_storage::<T>(&mut owned[*me]) };
                    return storage.remove_left_group(e);
                }
            }
        }
        self.remove_special(e)
    }

    /// [`remove`](Self::remove) for a live `e` from a storage that has bits, stamps or hooks.
    #[inline(never)]
    fn remove_special(&mut self, e: Entity) -> Option<T> {
        if let Target::Grouped { owned, group, me } = &mut self.target {
            group.leave(owned, e.index(), Leaving::Loses(*me));
        }
        let (storage, mut ctx) = self.storage();
        storage.remove(e, &mut ctx)
    }

    /// `e`'s `T`, or `None`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((5u8,));
    /// assert_eq!(world.view_mut::<u8>().get(e), Some(&5));
    /// ```
    #[inline]
    pub fn get(&self, e: Entity) -> Option<&T> {
        self.shared().get_of(e, self.entities)
    }

    /// `e`'s `T`, mutably (stamped changed when tracked), or `None`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((5u8,));
    /// let mut v = world.view_mut::<u8>();
    /// *v.get_mut(e).unwrap() += 1;
    /// assert_eq!(v.get(e), Some(&6));
    /// ```
    #[inline]
    pub fn get_mut(&mut self, e: Entity) -> Option<&mut T> {
        let (now, entities) = (self.now, self.entities);
        self.storage().0.get_mut_of(e, entities, now)
    }

    /// Whether `e` is alive and has a `T`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn((5u8,));
    /// assert!(world.view_mut::<u8>().contains(e));
    /// ```
    #[inline]
    pub fn contains(&self, e: Entity) -> bool {
        self.shared().contains_of(e, self.entities)
    }

    /// The number of entities with a `T`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// world.spawn((5u8,));
    /// assert_eq!(world.view_mut::<u8>().len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.shared().len()
    }

    /// Whether no entity has a `T`. O(1).
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// assert!(world.view_mut::<u8>().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Component> fmt::Debug for ViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewMut")
            .field("type", &core::any::type_name::<T>())
            .field("len", &self.len())
            .finish()
    }
}
