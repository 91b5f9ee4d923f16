//! Which storages a query reads and writes, the check that one query never asks for a
//! component mutably twice (or mutably and shared), and the runtime borrow flags of the shared
//! form.

use core::any::TypeId;

use smallvec::SmallVec;

use crate::storage::{Component, ComponentId};
use crate::World;

/// The accesses of one query, inline for the common queries (no allocation per run, little
/// to move).
pub(crate) type Accesses = SmallVec<[Access; 6]>;

/// How a query uses a storage.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[allow(unreachable_pub)]
pub enum Kind {
    /// Hands out `&T`.
    Read,
    /// Hands out `&mut T`.
    Write,
    /// Tests presence only: the sparse side or the presence bits, which no query writes. On a
    /// shared world it takes no borrow flag, so it runs beside a query that writes `T`.
    Presence,
    /// Reads the change stamps (and the sparse side): a shared flag on a shared world, as the
    /// stamps are written by a query that writes `T`.
    Stamps,
}

/// One storage a query uses, and how. (Public only so that the query traits can name it; not
/// reachable outside.)
#[derive(Copy, Clone, Debug)]
#[allow(unreachable_pub)]
pub struct Access {
    /// The storage, or `None` if the type is not registered (nothing to borrow or find).
    pub(crate) id: Option<ComponentId>,
    /// The type's name, for messages (a function, so the entry stays small).
    pub(crate) name: fn() -> &'static str,
    /// The type itself, to tell two unregistered types apart (a function, as `name`).
    pub(crate) type_id: fn() -> TypeId,
    pub(crate) kind: Kind,
    /// Whether every entity the query visits has the component (not `Option`, not
    /// `Without`).
    pub(crate) required: bool,
}

impl Access {
    /// Records that the query uses `T` as `kind`: one entry per element and filter, in order,
    /// which `prepare` takes back one by one.
    #[inline]
    pub(crate) fn push<T: Component>(
        world: &World,
        kind: Kind,
        required: bool,
        out: &mut Accesses,
    ) {
        out.push(Access {
            id: world.components().id::<T>(),
            name: core::any::type_name::<T>,
            type_id: TypeId::of::<T>,
            kind,
            required,
        });
    }

    /// The storage of the next element, taking its entry off `ids`.
    #[inline]
    pub(crate) fn take(ids: &mut &[Access]) -> Option<ComponentId> {
        let (first, rest) = ids.split_first()?;
        *ids = rest;
        first.id
    }
}

/// Panics if one query asks for a component mutably twice, or mutably and shared. Returns
/// whether it tests the presence of a component it writes (whose writer must then not borrow
/// the storage mutably: see `exclusive_column`).
#[inline]
#[track_caller]
pub(crate) fn check_conflicts(accesses: &[Access]) -> bool {
    // One element cannot conflict with itself: for the common one-component query, this
    // test is all that is inlined into the caller.
    if accesses.len() < 2 {
        return false;
    }
    check_pairs(accesses)
}

/// [`check_conflicts`] of two accesses or more: every pair, out of line.
#[inline(never)]
#[track_caller]
fn check_pairs(accesses: &[Access]) -> bool {
    let mut tests_written = false;
    for (i, a) in accesses.iter().enumerate() {
        for b in &accesses[i + 1..] {
            // A registered type has one id; an unregistered one has none, and is told apart
            // by its `TypeId` (asked only then), so that the check does not wait for the
            // type's first value.
            let same = match (a.id, b.id) {
                (Some(x), Some(y)) => x == y,
                (None, None) => (a.type_id)() == (b.type_id)(),
                _ => false,
            };
            if !same {
                continue;
            }
            match (a.kind, b.kind) {
                (Kind::Write, Kind::Write) => panic!(
                    "a query asks for `{}` mutably twice; ask for each component once",
                    (a.name)()
                ),
                (Kind::Write, Kind::Read) | (Kind::Read, Kind::Write) => panic!(
                    "a query asks for `{}` both mutably and shared; ask for it once, mutably",
                    (a.name)()
                ),
                (Kind::Write, Kind::Presence) | (Kind::Presence, Kind::Write) => {
                    tests_written = true;
                }
                _ => {}
            }
        }
    }
    tests_written
}

/// A storage a shared-form query borrows: its id, its type's name, and whether exclusively.
type Wanted = (ComponentId, fn() -> &'static str, bool);

/// The borrow flags a query of the shared form holds, released when dropped. (Public only so
/// that the query forms' sealed trait can name it; not reachable outside.)
#[allow(unreachable_pub)]
pub struct Held<'w> {
    world: &'w World,
    /// `(column, exclusive)`.
    held: SmallVec<[(ComponentId, bool); 8]>,
}

impl<'w> Held<'w> {
    /// Takes every flag `accesses` needs: exclusive for a column written, shared for one
    /// read, none for one only tested for presence.
    ///
    /// # Panics
    ///
    /// If a column is borrowed in a way that conflicts (by another query running at the same
    /// time); the flags taken so far are released first.
    #[track_caller]
    pub(crate) fn acquire(world: &'w World, accesses: &[Access]) -> Self {
        let mut held = Held {
            world,
            held: SmallVec::new(),
        };
        // Per storage: the strongest use (exclusive if any element writes it). A presence
        // test needs none: it reads only what no query writes.
        let mut wanted: SmallVec<[Wanted; 8]> = SmallVec::new();
        for a in accesses {
            let Some(id) = a.id else { continue };
            if a.kind == Kind::Presence {
                continue;
            }
            let write = a.kind == Kind::Write;
            match wanted.iter_mut().find(|w| w.0 == id) {
                Some(w) => w.2 |= write,
                None => wanted.push((id, a.name, write)),
            }
        }
        for (id, name, write) in wanted {
            let column = &world.components().columns[id.index()];
            let ok = if write {
                column.borrow.try_write()
            } else {
                column.borrow.try_read()
            };
            if !ok {
                let by = if column.borrow.is_writing() {
                    "mutably"
                } else {
                    "shared"
                };
                drop(held);
                panic!(
                    "`{}` is already borrowed {by} by another live query (a query keeps its \
                     borrows from its first run until it is dropped); cannot borrow it {}",
                    name(),
                    if write { "mutably" } else { "shared" }
                );
            }
            held.held.push((id, write));
        }
        held
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        for &(id, write) in &self.held {
            let b = &self.world.components().columns[id.index()].borrow;
            if write {
                b.release_write();
            } else {
                b.release_read();
            }
        }
    }
}
