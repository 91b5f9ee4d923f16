//! Errors.

use core::fmt;

use crate::entity::Entity;

/// The entity is not alive in this world: despawned (stale), reserved and not yet flushed, of
/// another world, or never made here. [`reason`](NoSuchEntity::reason) tells which.
///
/// ```
/// use dod_world::{NotAlive, World};
/// let mut world = World::new();
/// let e = world.spawn(());
/// world.despawn(e);
/// let err = world.insert(e, (1u8,)).unwrap_err();
/// assert_eq!(err.entity(), e);
/// assert_eq!(err.reason(), NotAlive::Despawned);
/// assert_eq!(err.to_string(), "entity 0v1 is not alive in this world: it was despawned");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoSuchEntity {
    entity: Entity,
    reason: NotAlive,
}

/// Why an entity is not alive in a world ([`NoSuchEntity::reason`]).
///
/// ```
/// use dod_world::{NotAlive, World};
/// let mut world = World::new();
/// let other = World::new().spawn(());
/// assert_eq!(
///     world.entity(other).unwrap_err().reason(),
///     NotAlive::OtherWorld {
///         entity_world: other.world_id(),
///         this_world: world.entities().world_id(),
///     }
/// );
/// let r = world.reserve_entity();
/// assert_eq!(world.entity(r).unwrap_err().reason(), NotAlive::Reserved);
/// let forged = dod_world::Entity::from_bits(r.to_bits() + (7 << 32)).unwrap();
/// assert_eq!(world.entity(forged).unwrap_err().reason(), NotAlive::NeverMade);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotAlive {
    /// The world id it carries is not this world's: another world made it, or this world
    /// has since loaded a save of another world (whose id it takes), which ends the entities
    /// it had.
    OtherWorld {
        /// The world id the entity carries.
        entity_world: u16,
        /// This world's id ([`Entities::world_id`](crate::Entities::world_id)).
        this_world: u16,
    },
    /// It was alive here and has been despawned (or cleared): only a load of a save made
    /// before that brings it back.
    Despawned,
    /// It was reserved ([`World::reserve_entity`](crate::World::reserve_entity),
    /// [`Commands::spawn`](crate::Commands::spawn)) and is not alive yet: the world's next
    /// structural change, [`World::flush`](crate::World::flush) or
    /// [`World::apply`](crate::World::apply) makes it alive.
    Reserved,
    /// This world never made it: its slot does not exist or never reached its generation (an
    /// entity forged from bits, or kept across a load of a save made before it).
    NeverMade,
}

impl NoSuchEntity {
    /// The error for `entity`, not alive for `reason`.
    pub(crate) fn new(entity: Entity, reason: NotAlive) -> Self {
        NoSuchEntity { entity, reason }
    }

    /// The entity that was asked for.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.despawn(e);
    /// assert_eq!(world.entity(e).unwrap_err().entity(), e);
    /// ```
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// Why the entity is not alive.
    ///
    /// ```
    /// use dod_world::NotAlive;
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.despawn(e);
    /// assert_eq!(world.entity(e).unwrap_err().reason(), NotAlive::Despawned);
    /// ```
    pub fn reason(&self) -> NotAlive {
        self.reason
    }
}

impl fmt::Display for NoSuchEntity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entity {} is not alive in this world: ", self.entity)?;
        match self.reason {
            NotAlive::OtherWorld {
                entity_world,
                this_world,
            } => write!(
                f,
                "it is of world {entity_world}, and this is world {this_world}"
            ),
            NotAlive::Despawned => f.write_str("it was despawned"),
            NotAlive::Reserved => f.write_str(
                "it is reserved, and made alive by the world's next structural change, flush \
                 or apply",
            ),
            NotAlive::NeverMade => f.write_str("this world never made it"),
        }
    }
}

impl std::error::Error for NoSuchEntity {}

/// Why [`Query::single`](crate::Query::single) found no single entity.
///
/// ```
/// use dod_world::{SingleError, World};
/// let mut world = dod_world::World::new();
/// assert_eq!(world.query::<&u32>().single().unwrap_err(), SingleError::NoMatch);
/// world.spawn((1u32,));
/// world.spawn((2u32,));
/// let err = world.query::<&u32>().single().unwrap_err();
/// assert_eq!(err, SingleError::SeveralMatches);
/// assert!(err.to_string().contains("more than one"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SingleError {
    /// No entity matches the query.
    NoMatch,
    /// More than one entity matches the query.
    SeveralMatches,
}

impl fmt::Display for SingleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SingleError::NoMatch => "no entity matches the query",
            SingleError::SeveralMatches => "more than one entity matches the query",
        })
    }
}

impl std::error::Error for SingleError {}
