//! Errors.

use core::fmt;

use crate::entity::Entity;

/// The entity is not alive in this world: despawned (stale), reserved and not yet flushed, or
/// of another world.
///
/// ```
/// let mut world = dod_world::World::new();
/// let e = world.spawn(());
/// world.despawn(e);
/// let err = world.insert(e, (1u8,)).unwrap_err();
/// assert_eq!(err.entity(), e);
/// assert!(err.to_string().contains("not alive"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoSuchEntity(pub(crate) Entity);

impl NoSuchEntity {
    /// The entity that was asked for.
    ///
    /// ```
    /// let mut world = dod_world::World::new();
    /// let e = world.spawn(());
    /// world.despawn(e);
    /// assert_eq!(world.entity(e).unwrap_err().entity(), e);
    /// ```
    pub fn entity(&self) -> Entity {
        self.0
    }
}

impl fmt::Display for NoSuchEntity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entity {} is not alive in this world", self.0)
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
