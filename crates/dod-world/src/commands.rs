//! [`Commands`]: structural changes recorded while queries run, made later by
//! [`World::apply`](crate::World::apply).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use crate::bundle::Bundle;
use crate::entity::{Entities, Entity};
use crate::storage::Component;
use crate::World;

/// A recorded insertion: gives the entity its bundle, `false` if it is gone.
type InsertFn = Box<dyn FnOnce(&mut World, Entity) -> bool + Send + Sync>;

/// Gives an entity `bundle` when applied: `false` if the entity is gone.
fn insertion<B: Bundle>(bundle: B) -> InsertFn {
    Box::new(move |world: &mut World, e| world.insert(e, bundle).is_ok())
}

/// A recorded change run with the world: a spawn whose entity is allocated when it is made, or
/// a command of the caller's own ([`Commands::push`]).
type WorldFn = Box<dyn FnOnce(&mut World) + Send + Sync>;

/// One recorded change.
enum Command {
    /// Runs with the world.
    Run(WorldFn),
    /// Gives an entity reserved by [`Commands::spawn`] its bundle: it must be of the world
    /// the commands are applied to.
    SpawnReserved(Entity, InsertFn),
    /// Gives an entity (perhaps reserved, flushed by then) its bundle.
    Insert(Entity, InsertFn),
    /// Takes a component out and drops it.
    Remove(Entity, fn(&mut World, Entity) -> bool),
    /// Despawns an entity.
    Despawn(Entity),
}

/// A buffer of structural changes (spawn, despawn, insert, remove, and commands of the
/// caller's own, [`push`](Commands::push)), recorded while queries hold the world and made
/// in order by [`World::apply`](crate::World::apply). It is `Send`: keep one per thread.
///
/// [`spawn`](Commands::spawn) reserves its entity at once ([`Entities::reserve`]), so the id
/// can be stored in the same frame; the entity becomes alive when the commands are applied.
/// A reservation is not undone by dropping or [clearing](Commands::clear) the commands: the
/// world's next change makes the entity alive all the same, with no components (despawn it
/// then, or apply the commands).
/// [`spawn_unnamed`](Commands::spawn_unnamed) needs no [`Entities`] (a hook has none): its
/// entity is allocated when applied.
///
/// A query on `&mut World` holds the world, so its closure cannot reach
/// [`World::entities`](crate::World::entities) to name a spawn: run the system on the shared
/// form ([`World::share`](crate::World::share), whose
/// [`entities`](crate::Shared::entities) stay reachable, as below), or spawn with
/// `spawn_unnamed`.
///
/// ```
/// use dod_world::{Commands, Entity, World};
///
/// struct Ttl(u32);
/// struct Bullet;
///
/// let mut world = World::new();
/// world.spawn((Ttl(0),));
/// world.spawn((Ttl(3),));
///
/// let mut commands = Commands::new();
/// let w = world.share();
/// w.query::<(Entity, &Ttl)>().for_each(|(e, ttl)| {
///     if ttl.0 == 0 {
///         commands.despawn(e);
///         commands.spawn(w.entities(), (Bullet,));
///     }
/// });
/// world.apply(&mut commands);
/// assert_eq!(world.count::<Ttl>(), 1);
/// assert_eq!(world.count::<Bullet>(), 1);
/// ```
#[derive(Default)]
pub struct Commands {
    commands: Vec<Command>,
}

impl Commands {
    /// An empty buffer. Allocates nothing.
    ///
    /// ```
    /// assert!(dod_world::Commands::new().is_empty());
    /// ```
    pub const fn new() -> Self {
        Commands {
            commands: Vec::new(),
        }
    }

    /// The number of recorded commands.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let mut c = dod_world::Commands::new();
    /// c.spawn(world.entities(), ());
    /// assert_eq!(c.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether nothing is recorded.
    ///
    /// ```
    /// assert!(dod_world::Commands::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Drops every recorded command unmade. Entities reserved by [`spawn`](Commands::spawn)
    /// still become alive (with no component) at the world's next flush.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let mut c = dod_world::Commands::new();
    /// c.spawn(world.entities(), (1u8,));
    /// c.clear();
    /// assert!(c.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.commands.clear();
    }

    /// Moves every command of `other` to the end of these, in order, leaving `other` empty
    /// (`Vec::append`): the buffers that threads filled become one, applied by one
    /// [`World::apply`](crate::World::apply). O(other's length).
    ///
    /// ```
    /// use dod_world::{Commands, World};
    ///
    /// let mut world = World::new();
    /// let w = world.share();
    /// // One buffer per thread, merged at the end.
    /// let mut buffers = [Commands::new(), Commands::new()];
    /// std::thread::scope(|s| {
    ///     for (t, c) in buffers.iter_mut().enumerate() {
    ///         let w = &w;
    ///         s.spawn(move || {
    ///             for i in 0..50u32 {
    ///                 c.spawn(w.entities(), (t as u32 * 50 + i,));
    ///             }
    ///         });
    ///     }
    /// });
    /// let [mut all, mut second] = buffers;
    /// all.append(&mut second);
    /// assert!(second.is_empty());
    /// assert_eq!(all.len(), 100);
    /// assert_eq!(world.apply(&mut all), 0); // none skipped
    /// assert_eq!(world.count::<u32>(), 100);
    /// ```
    pub fn append(&mut self, other: &mut Commands) {
        self.commands.append(&mut other.commands);
    }

    /// Reserves an entity from `entities` (the world's, from
    /// [`World::entities`](crate::World::entities) or
    /// [`Shared::entities`](crate::Shared::entities)) and records that it gets `bundle`.
    /// Returns the entity, valid from now on.
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice (before reserving anything); when applied, if the
    /// commands are applied to a world other than the one `entities` belongs to (the entity
    /// is that world's: it becomes alive there, with no component, and nothing is made in
    /// the other).
    ///
    /// ```
    /// use dod_world::{Commands, World};
    /// let mut world = World::new();
    /// let mut c = Commands::new();
    /// let e = c.spawn(world.entities(), (7u8,));
    /// world.apply(&mut c);
    /// assert_eq!(world.get::<u8>(e), Some(&7));
    /// ```
    #[track_caller]
    pub fn spawn<B: Bundle>(&mut self, entities: &Entities, bundle: B) -> Entity {
        crate::bundle::check_distinct::<B>();
        let e = entities.reserve();
        self.commands
            .push(Command::SpawnReserved(e, insertion(bundle)));
        e
    }

    /// Records that an entity with `bundle` is spawned, allocated and named only when the
    /// commands are applied: for code that cannot reach the world's [`Entities`] and needs no
    /// id now, such as a hook ([`World::on_insert`](crate::World::on_insert)).
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice; when applied, as
    /// [`World::spawn`](crate::World::spawn).
    ///
    /// ```
    /// use dod_world::World;
    /// struct Enemy;
    /// struct HealthBar;
    /// let mut world = World::new();
    /// world.on_insert::<Enemy>(|_, _, commands| commands.spawn_unnamed((HealthBar,)));
    /// world.spawn((Enemy,));
    /// assert_eq!(world.count::<HealthBar>(), 1);
    /// ```
    #[track_caller]
    pub fn spawn_unnamed<B: Bundle>(&mut self, bundle: B) {
        crate::bundle::check_distinct::<B>();
        self.push(move |world| {
            world.spawn(bundle);
        });
    }

    /// Records a command of the caller's own: `f` runs with the world when the commands are
    /// applied, in order with the others. It may do anything a `&mut World` allows, such as
    /// spawning an entity and linking it to another, which a hook cannot do with the commands
    /// above (it has no [`Entities`] to name a spawn with, and the world is busy while it
    /// runs). A panic in `f` is a panicking command (see [`World::apply`](crate::World::apply)).
    ///
    /// Recorded by a hook, `f` runs while the world applies the round of commands its hooks
    /// recorded: the hooks of the changes `f` makes record into the next round, made after
    /// `f` returns (so `f` does not see them, and a [`flush`](crate::World::flush) inside it
    /// does not make them), and `f` may not load a world (`World::load`, feature `serde`: it
    /// panics).
    ///
    /// ```
    /// use dod_world::{Entity, World};
    /// struct Enemy;
    /// struct HealthBar { of: Entity }
    /// struct Bar(Entity);
    ///
    /// let mut world = World::new();
    /// world.on_insert::<Enemy>(|enemy, _, commands| {
    ///     commands.push(move |world| {
    ///         let bar = world.spawn((HealthBar { of: enemy },));
    ///         world.insert(enemy, (Bar(bar),)).unwrap();
    ///     })
    /// });
    /// let enemy = world.spawn((Enemy,));
    /// let bar = world.get::<Bar>(enemy).unwrap().0;
    /// assert_eq!(world.get::<HealthBar>(bar).unwrap().of, enemy);
    /// ```
    pub fn push(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.commands.push(Command::Run(Box::new(f)));
    }

    /// Records that `e` gets the components of `bundle` (replacing the ones it has).
    ///
    /// # Panics
    ///
    /// If `bundle` holds a type twice.
    ///
    /// ```
    /// use dod_world::{Commands, World};
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let mut c = Commands::new();
    /// c.insert(e, (1u8,));
    /// world.apply(&mut c);
    /// assert!(world.has::<u8>(e));
    /// ```
    #[track_caller]
    pub fn insert<B: Bundle>(&mut self, e: Entity, bundle: B) {
        crate::bundle::check_distinct::<B>();
        self.commands.push(Command::Insert(e, insertion(bundle)));
    }

    /// Records that `e` loses its `T` (dropped when applied).
    ///
    /// ```
    /// use dod_world::{Commands, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u8, 'x'));
    /// let mut c = Commands::new();
    /// c.remove::<u8>(e);
    /// world.apply(&mut c);
    /// assert!(!world.has::<u8>(e) && world.has::<char>(e));
    /// ```
    pub fn remove<T: Component>(&mut self, e: Entity) {
        self.commands.push(Command::Remove(e, |world, e| {
            let alive = world.is_alive(e);
            drop(world.remove::<T>(e));
            alive
        }));
    }

    /// Records that `e` is despawned.
    ///
    /// ```
    /// use dod_world::{Commands, World};
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let mut c = Commands::new();
    /// c.despawn(e);
    /// world.apply(&mut c);
    /// assert!(!world.is_alive(e));
    /// ```
    pub fn despawn(&mut self, e: Entity) {
        self.commands.push(Command::Despawn(e));
    }

    /// Makes every command, in order; returns how many found their entity gone.
    pub(crate) fn apply_to(&mut self, world: &mut World) -> usize {
        let mut skipped = 0;
        let mut commands = self.commands.drain(..).peekable();
        while let Some(command) = commands.next() {
            let done = match command {
                Command::Run(f) => {
                    f(world);
                    true
                }
                Command::SpawnReserved(e, f) => {
                    if e.world_id() != world.entities().world_id() {
                        reserved_elsewhere(e, world.entities().world_id());
                    }
                    f(world, e)
                }
                Command::Insert(e, f) => f(world, e),
                Command::Remove(e, f) => f(world, e),
                Command::Despawn(e) => {
                    // A run of despawns goes as one batch, which loads the next entities'
                    // slots while it despawns one.
                    let mut run = 1;
                    let rest = core::iter::from_fn(|| match commands.next_if(is_despawn)? {
                        Command::Despawn(e) => {
                            run += 1;
                            Some(e)
                        }
                        _ => unreachable!("`next_if` took a despawn"),
                    });
                    let despawned = world.despawn_batch(core::iter::once(e).chain(rest));
                    skipped += run - despawned;
                    continue;
                }
            };
            skipped += usize::from(!done);
        }
        skipped
    }
}

impl fmt::Debug for Commands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Commands")
            .field("len", &self.commands.len())
            .finish()
    }
}

/// Whether `command` despawns.
fn is_despawn(command: &Command) -> bool {
    matches!(command, Command::Despawn(_))
}

#[cold]
#[track_caller]
fn reserved_elsewhere(e: Entity, here: u16) -> ! {
    panic!(
        "Commands::spawn reserved {e} from the entities of world {} and the commands were \
         applied to world {here} (another world, or this one after it loaded a save, which \
         takes the save's id): apply commands to the world whose entities named their spawns",
        e.world_id()
    )
}
