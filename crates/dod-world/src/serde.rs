//! Saving and loading a world (feature `serde`).
//!
//! Component types are registered for saving under a name ([`World::register_saved`]); a saved
//! world holds its entity allocator (every slot's generation, the free queue in order,
//! `min_free`, the world id), the saved components of every entity, and the per-entity data.
//! After a load every saved [`Entity`] names the same entity, every stale one stays stale, and
//! the next spawns return what they would have. Entities reserved and not yet flushed
//! ([`World::reserve_entity`], [`Commands::spawn`]) are saved alive with no components, as the
//! next flush makes them, so a reserved id held across a save names the same entity after the
//! load. Commands that hooks left waiting (see [`World::flush`]) are not in a save: saving
//! takes `&World` and cannot apply them, so call [`World::flush`] before saving to include
//! their effects.
//!
//! The format is a struct of `world_id`, `min_free`, `slots` (each slot's tag:
//! `generation | world_id << 16`, plus `1 << 31` when vacant), `free` (the free queue, oldest
//! first), `components` (a map from each saved type's name to its `(index, value)` pairs),
//! `data` (the [`DataStore`] bytes of the live entities' data, compacted: after a load the
//! store's buffer is the size of its data, and grows again as data is set) and `data_names`
//! (the names of the data keys, each as its path segments, which the bytes do not hold; a
//! save without the field loads with no names).
//! Loading checks everything and returns an error, never a panic and never a broken world:
//! an unknown component name, an entity given one component twice, a component or data of a
//! dead entity, data past the save's entity slots (refused before anything is allocated for
//! it), a malformed allocator and a name the registry refuses are all errors.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::TypeId;
use core::fmt;
use core::marker::PhantomData;

use dod::data::{DataStore, KeyNames};
use dod::slot::Tag;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor,
};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};

use crate::entity::{Entities, Entity};
use crate::storage::{Component, Ctx, Storage, Tick};
use crate::World;

/// A component type registered for saving.
#[derive(Clone)]
pub(crate) struct SavedType {
    name: String,
    type_id: TypeId,
    register: fn(&mut crate::storage::Components),
    save: for<'a> fn(&'a World) -> Box<dyn erased_serde::Serialize + 'a>,
    read: ReadFn,
    store: StoreFn,
}

/// Reads one saved type's `(index, value)` pairs into a list (memory bounded by the input).
type ReadFn = fn(&mut dyn erased_serde::Deserializer<'_>) -> Result<Pending, erased_serde::Error>;

/// Stores a read list into a loaded world whose entities are known, checking every pair.
type StoreFn = fn(&mut World, Pending) -> Result<(), String>;

/// A read list of pairs, its type erased.
type Pending = Box<dyn core::any::Any>;

/// The types a world saves, in registration order.
#[derive(Clone, Default)]
pub(crate) struct SavedTypes(Vec<SavedType>);

impl SavedTypes {
    /// Registers every saved type as a component of a new world, in the same order.
    pub(crate) fn register_all(&self, components: &mut crate::storage::Components) {
        for t in &self.0 {
            (t.register)(components);
        }
    }
}

impl World {
    /// Registers `T` for saving under `name`: [`Serialize`] writes every entity's `T`, and
    /// [`load`](World::load) reads it back. Types not registered are neither saved nor kept by
    /// a load. Entities reserved and not yet flushed are saved alive with no components, as the
    /// next flush makes them; commands that hooks left waiting (see [`flush`](World::flush))
    /// are not saved, since saving takes `&World`: call `flush` before saving to include them.
    ///
    /// # Panics
    ///
    /// If `name` is already registered for another type, or `T` under another name.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use dod_world::World;
    ///
    /// #[derive(Serialize, Deserialize, Debug, PartialEq)]
    /// struct Pos(f32, f32);
    ///
    /// let mut world = World::new();
    /// world.register_saved::<Pos>("pos");
    /// let e = world.spawn((Pos(1.0, 2.0),));
    /// let saved = serde_json::to_string(&world).unwrap();
    ///
    /// let mut loaded = World::new();
    /// loaded.register_saved::<Pos>("pos");
    /// loaded.load(&mut serde_json::Deserializer::from_str(&saved)).unwrap();
    /// assert_eq!(loaded.get::<Pos>(e), Some(&Pos(1.0, 2.0)));
    /// ```
    #[track_caller]
    pub fn register_saved<T: Component + Serialize + DeserializeOwned>(
        &mut self,
        name: impl Into<String>,
    ) {
        let name = name.into();
        let type_id = TypeId::of::<T>();
        for s in &self.saved.0 {
            if s.name == name && s.type_id != type_id {
                panic!("`{name}` is already the saved name of another component type");
            }
            if s.type_id == type_id && s.name != name {
                panic!(
                    "`{}` is already saved under the name `{}`",
                    core::any::type_name::<T>(),
                    s.name
                );
            }
            if s.type_id == type_id {
                return;
            }
        }
        self.register::<T>();
        self.saved.0.push(SavedType {
            name,
            type_id,
            register: |c| {
                c.register::<T>();
            },
            save: save_of::<T>,
            read: read_of::<T>,
            store: store_of::<T>,
        });
    }

    /// Replaces the world's contents with a saved world's, read from `d`: entities (with
    /// their generations and free queue), the components of the types registered for saving,
    /// and the per-entity data with its key names (which replace the names registered in
    /// [`data_names_mut`](World::data_names_mut)). Components of types that are not saved are
    /// dropped. The world keeps its settings: hooks (not run by a load), tracked types (every
    /// loaded value stamped as added now, the removed lists emptied) and groups (packed
    /// again).
    ///
    /// A load restores the saved allocator too, as a snapshot (its keep-N-free count,
    /// [`min_free`](crate::WorldBuilder::min_free), included, which replaces the world's
    /// own): an entity spawned after the save was made is not in it, and its index may be
    /// handed out again at the generation it had (the next spawn returns what it returned
    /// after the save). Handles kept from after the save do not outlive a load of it.
    ///
    /// # Panics
    ///
    /// If the `Drop` of a value the load replaces panics: the load is complete by then (every
    /// old value dropped, the groups packed), and the first such panic goes on.
    ///
    /// If it is called by a command that a hook recorded
    /// ([`Commands::push`](crate::Commands::push)), before reading anything: the other
    /// commands the hooks recorded in that round would then be made in the loaded world.
    /// Load after the change that ran the hooks.
    ///
    /// # Errors
    ///
    /// The deserializer's error for anything malformed (an unknown component name, a
    /// component twice on one entity, a component or data of a dead entity, data past the
    /// save's entity slots, an inconsistent allocator, a data key name the registry refuses);
    /// the world is then left unchanged.
    ///
    /// ```
    /// use dod_world::World;
    /// let mut world = World::new();
    /// world.register_saved::<u32>("u32");
    /// let bad = r#"{"world_id":1,"min_free":0,"slots":[],"free":[],"components":{"u32":[[0,5]]},"data":null}"#;
    /// let err = world.load(&mut serde_json::Deserializer::from_str(bad)).unwrap_err();
    /// assert!(err.to_string().contains("dead entity"));
    /// assert!(world.is_empty());
    /// ```
    pub fn load<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        self.load_with(d, Unknown::Refuse).map(drop)
    }

    /// [`load`](World::load), except that the components saved under a name no type is
    /// registered under are skipped instead of refused; returns their names, in the save's
    /// order. For a save made by a newer build that has component types this one does not:
    /// its entities load with the components this build knows. Everything else is checked
    /// as `load` checks it.
    ///
    /// Skipping a value of unknown type needs a self-describing format (JSON, RON,
    /// MessagePack, CBOR); in a format that is not (bincode, postcard), an unknown
    /// component is an error, as with `load`. The skipped values are not kept: a save of the
    /// loaded world holds only the components this build registers.
    ///
    /// # Panics
    ///
    /// As [`load`](World::load).
    ///
    /// # Errors
    ///
    /// As [`load`](World::load), but for unknown names; the world is then left unchanged.
    ///
    /// ```
    /// use dod_world::World;
    /// let mut world = World::new();
    /// world.register_saved::<u32>("hp");
    /// let newer = r#"{"world_id":1,"min_free":0,"slots":[65537],"free":[],
    ///     "components":{"hp":[[0,7]],"shield":[[0,{"strength":3}]]},"data":null}"#;
    /// assert!(world.load(&mut serde_json::Deserializer::from_str(newer)).is_err());
    /// let skipped = world
    ///     .load_skipping_unknown(&mut serde_json::Deserializer::from_str(newer))
    ///     .unwrap();
    /// assert_eq!(skipped, ["shield"]);
    /// let e = world.entities().iter().next().unwrap();
    /// assert_eq!(world.get::<u32>(e), Some(&7));
    /// ```
    pub fn load_skipping_unknown<'de, D: Deserializer<'de>>(
        &mut self,
        d: D,
    ) -> Result<Vec<String>, D::Error> {
        self.load_with(d, Unknown::Skip)
    }

    /// The body of [`load`](World::load) and
    /// [`load_skipping_unknown`](World::load_skipping_unknown): the names skipped.
    fn load_with<'de, D: Deserializer<'de>>(
        &mut self,
        d: D,
        unknown: Unknown,
    ) -> Result<Vec<String>, D::Error> {
        if self.in_hook_round() {
            load_in_hooks();
        }
        let template = World::builder()
            .min_free(self.entities().min_free())
            .build_template(self.saved.clone());
        let Loaded {
            world: mut loaded,
            skipped,
        } = d.deserialize_struct(
            "World",
            FIELDS,
            WorldVisitor {
                world: template,
                unknown,
                _de: PhantomData,
            },
        )?;
        let saved: Vec<TypeId> = self.saved.0.iter().map(|t| t.type_id).collect();
        self.take_loaded(&mut loaded, &saved);
        Ok(skipped)
    }
}

/// What a load does with a component name no type is registered under.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknown {
    Refuse,
    Skip,
}

/// A loaded world and the names of the components skipped on the way.
struct Loaded {
    world: World,
    skipped: Vec<String>,
}

#[cold]
#[track_caller]
fn load_in_hooks() -> ! {
    panic!(
        "World::load called by a command a hook recorded: the other commands of that round \
         would be made in the loaded world; load after the change that ran the hooks"
    )
}

/// Writes every entity's `T` as `(index, value)` pairs.
fn save_of<T: Component + Serialize>(world: &World) -> Box<dyn erased_serde::Serialize + '_> {
    Box::new(Pairs(world.components().storage::<T>()))
}

/// The `(index, value)` pairs of one storage.
struct Pairs<'a, T>(Option<&'a Storage<T>>);

impl<T: Component + Serialize> Serialize for Pairs<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(storage) = self.0 else {
            return s.serialize_seq(Some(0))?.end();
        };
        let indices = crate::storage::AnyStorage::indices(storage);
        let mut seq = s.serialize_seq(Some(indices.len()))?;
        for i in indices {
            if let Some(v) = storage.get(i) {
                seq.serialize_element(&(i, v))?;
            }
        }
        seq.end()
    }
}

/// Reads the `(index, value)` pairs of `T` into a list: nothing is stored before the
/// entities are known, so an index far past them costs no memory.
fn read_of<T: Component + DeserializeOwned>(
    d: &mut dyn erased_serde::Deserializer<'_>,
) -> Result<Pending, erased_serde::Error> {
    let pairs: Vec<(u32, T)> = erased_serde::deserialize(d)?;
    Ok(Box::new(pairs))
}

/// Stores the pairs of `T` read by [`read_of`]: each must name a live entity, once.
fn store_of<T: Component>(world: &mut World, pending: Pending) -> Result<(), String> {
    let name = core::any::type_name::<T>;
    let Ok(pairs) = pending.downcast::<Vec<(u32, T)>>() else {
        return Err(alloc::format!(
            "component `{}` read as another type",
            name()
        ));
    };
    // A loaded world has no hooks and tracks nothing yet: the tick does not matter here.
    let mut commands = crate::Commands::new();
    let mut ctx = Ctx {
        now: Tick::default(),
        commands: &mut commands,
    };
    let (entities, storage) = world.loading_parts::<T>();
    // A tag's values in the saved order, not in bits, for a world whose storage of `T` keeps
    // positions (a tracked or grouped tag); the world takes bits back if it keeps those.
    storage.leave_bits();
    for (index, value) in *pairs {
        if !entities.is_occupied(index) {
            return Err(alloc::format!(
                "component `{}` on dead entity {index}",
                name()
            ));
        }
        let e = entities.entity_at(index);
        if !storage.insert(e, value, &mut ctx) {
            return Err(alloc::format!(
                "entity {index} has the component `{}` twice",
                name()
            ));
        }
    }
    Ok(())
}

const FIELDS: &[&str] = &[
    "world_id",
    "min_free",
    "slots",
    "free",
    "components",
    "data",
    "data_names",
];

impl Serialize for World {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let es = self.entities();
        // Entities reserved and not yet flushed are saved alive, as the next flush makes them.
        let (tags, free) = es.flushed_parts();
        let mut st = s.serialize_struct("World", FIELDS.len())?;
        st.serialize_field("world_id", &es.world_id())?;
        st.serialize_field("min_free", &es.min_free())?;
        st.serialize_field("slots", &tags)?;
        st.serialize_field("free", free)?;
        st.serialize_field("components", &SavedComponents(self))?;
        let data = (!self.data_store().is_empty()).then(|| compacted_bytes(self.data_store()));
        st.serialize_field("data", &data)?;
        st.serialize_field("data_names", &SavedNames(self.data_store().names()))?;
        st.end()
    }
}

/// The bytes of the live entities' data in `store`, [compacted](DataStore::compact): a save
/// holds the data, not the free space the store keeps for growth (a store left with one
/// small entry may keep a buffer of kilobytes), nor the slots of entities whose data is gone
/// (the world refuses their entities before it reads its store, and a load drops them).
/// O(size).
fn compacted_bytes(store: &DataStore<Entity>) -> Vec<u8> {
    // Room for every live block from the start: the copy does not grow as it fills.
    let used = store.capacity() - store.free_bytes();
    let mut copy = DataStore::<Entity>::with_capacity(store.len(), used);
    for (e, data) in store.iter() {
        copy.insert_data(e, data);
    }
    copy.compact();
    copy.to_bytes()
}

/// The data keys' names, each as its path segments.
struct SavedNames<'a>(&'a KeyNames);

impl Serialize for SavedNames<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|(_, segments)| SavedPath(segments)))
    }
}

/// One name's path segments, as a sequence of strings.
struct SavedPath<'a>(dod::data::Segments<'a>);

impl Serialize for SavedPath<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Gathered from the back, where each segment is O(1) (from the front, O(depth)).
        let mut segments: Vec<&str> = self.0.clone().rev().collect();
        segments.reverse();
        s.collect_seq(segments)
    }
}

/// The saved components, as a map from name to pairs.
struct SavedComponents<'a>(&'a World);

impl Serialize for SavedComponents<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let saved = &self.0.saved.0;
        let mut map = s.serialize_map(Some(saved.len()))?;
        for t in saved {
            map.serialize_entry(&t.name, &(t.save)(self.0))?;
        }
        map.end()
    }
}

struct WorldVisitor<'de> {
    world: World,
    unknown: Unknown,
    _de: PhantomData<&'de ()>,
}

impl<'de> Visitor<'de> for WorldVisitor<'de> {
    type Value = Loaded;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a saved dod_world::World")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Loaded, A::Error> {
        let mut f = Fields::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "world_id" => set_once(&mut f.world_id, &key, map.next_value()?)?,
                "min_free" => set_once(&mut f.min_free, &key, map.next_value()?)?,
                "slots" => set_once(&mut f.slots, &key, map.next_value_seed(U32s("slots"))?)?,
                "free" => set_once(&mut f.free, &key, map.next_value_seed(U32s("free"))?)?,
                "data" => set_once(&mut f.data, &key, map.next_value()?)?,
                "data_names" => set_once(&mut f.names, &key, map.next_value()?)?,
                "components" => {
                    if f.components.is_some() {
                        return Err(de::Error::duplicate_field("components"));
                    }
                    f.components = Some(map.next_value_seed(self.components_seed())?);
                }
                other => return Err(de::Error::unknown_field(other, FIELDS)),
            }
        }
        self.finish(f)
    }

    /// A struct as formats that are not self-describing (postcard, bincode) give it: its
    /// fields in order, as [`Serialize`] writes them. Those formats read all seven fields;
    /// a format that gives a struct as an array and says where it ends (JSON's `[..]`) may
    /// end it before `data` or `data_names`, as the keyed form may leave them out.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loaded, A::Error> {
        let missing = |at: usize| de::Error::invalid_length(at, &"the fields of a saved world");
        let world_id = Some(seq.next_element()?.ok_or_else(|| missing(0))?);
        let min_free = Some(seq.next_element()?.ok_or_else(|| missing(1))?);
        let slots = Some(
            seq.next_element_seed(U32s("slots"))?
                .ok_or_else(|| missing(2))?,
        );
        let free = Some(
            seq.next_element_seed(U32s("free"))?
                .ok_or_else(|| missing(3))?,
        );
        let components = Some(
            seq.next_element_seed(self.components_seed())?
                .ok_or_else(|| missing(4))?,
        );
        // Optional, as in the keyed form: an array that ends early leaves them out.
        let data = seq.next_element()?;
        let names = if data.is_some() {
            seq.next_element()?
        } else {
            None
        };
        self.finish(Fields {
            world_id,
            min_free,
            slots,
            free,
            components,
            data,
            names,
        })
    }
}

/// The fields of a saved world as read, each `None` until seen.
#[derive(Default)]
struct Fields {
    world_id: Option<u16>,
    min_free: Option<u32>,
    slots: Option<Vec<u32>>,
    free: Option<Vec<u32>>,
    components: Option<ReadComponents>,
    data: Option<Option<Vec<u8>>>,
    names: Option<Vec<Vec<String>>>,
}

impl WorldVisitor<'_> {
    /// Reads the `components` field by this load's rule for unknown names.
    fn components_seed(&self) -> ComponentsSeed<'_> {
        ComponentsSeed {
            world: &self.world,
            unknown: self.unknown,
        }
    }

    /// Builds the loaded world from its fields, checking every one.
    fn finish<E: de::Error>(mut self, f: Fields) -> Result<Loaded, E> {
        let world_id = f.world_id.ok_or_else(|| E::missing_field("world_id"))?;
        let min_free = f.min_free.ok_or_else(|| E::missing_field("min_free"))?;
        let slots = f.slots.ok_or_else(|| E::missing_field("slots"))?;
        let free = f.free.ok_or_else(|| E::missing_field("free"))?;
        if world_id == 0 || world_id > 0x7FFF {
            return Err(E::custom("world id out of range (1 ..= 32767)"));
        }
        let tags = slots.into_iter().map(Tag::from_bits).collect();
        let entities = Entities::from_parts(world_id, min_free, tags, free).map_err(E::custom)?;
        self.world.set_entities(entities);
        let components = f.components.unwrap_or_default();
        for (store, pending) in components.read {
            store(&mut self.world, pending).map_err(E::custom)?;
        }
        let mut store =
            match f.data {
                Some(Some(bytes)) => {
                    // No entity of the save lives past its slots, so a data slot past them is
                    // refused before the store allocates a page for it: what a load allocates
                    // follows the entities the save lists, not the indices its data names.
                    // (The bound of a save with no slot is index 0: one page at most, whose
                    // vacant slot is dropped; live data there is refused as a dead entity's.)
                    let slots = self.world.entities().slot_count();
                    let max = slots.saturating_sub(1) as u32;
                    let loaded = DataStore::<Entity>::from_bytes_with_max_index(&bytes, max)
                        .map_err(|err| match err {
                            dod::data::DecodeError::IndexAboveMax { entity, .. } => {
                                E::custom(format_args!(
                                    "data of entity {entity}, past the save's {slots} entity slots"
                                ))
                            }
                            other => E::custom(other),
                        })?;
                    live_data(&loaded).map_err(E::custom)?
                }
                _ => DataStore::new(),
            };
        for path in f.names.unwrap_or_default() {
            store
                .names_mut()
                .register_segments(&path)
                .map_err(E::custom)?;
        }
        self.world.set_data_store(store);
        self.world.check_loaded().map_err(E::custom)?;
        Ok(Loaded {
            world: self.world,
            skipped: components.skipped,
        })
    }
}

/// The live entries of a loaded data store, in a new store. The bytes may also hold the slots
/// of removed entries, each with the tag of the key it last held: the world checks liveness
/// itself and needs none of them, and a slot whose tag is newer than its entity's generation
/// (or of another world) would refuse that entity's data later. Whether each live entry
/// belongs to a live entity is checked with the components, in [`World::check_loaded`].
fn live_data(loaded: &DataStore<Entity>) -> Result<DataStore<Entity>, String> {
    // No names to carry over: the bytes hold none (the save's `data_names` does).
    let mut store = DataStore::with_capacity(loaded.len(), loaded.capacity());
    for (e, view) in loaded.iter() {
        store
            .try_insert_data(e, view)
            .map_err(|err| alloc::format!("data of entity {e:?}: {err}"))?;
    }
    Ok(store)
}

/// Stores a field's value, refusing a field given twice.
fn set_once<T, E: de::Error>(slot: &mut Option<T>, key: &str, value: T) -> Result<(), E> {
    if slot.replace(value).is_some() {
        return Err(E::custom(format_args!("duplicate field `{key}`")));
    }
    Ok(())
}

/// Reads a saved world's `slots` or `free`: a sequence of integers, which an error names by
/// its field (a file that is not a saved world mostly fails there, as `[1, 2, 3]` does).
struct U32s(&'static str);

impl<'de> DeserializeSeed<'de> for U32s {
    type Value = Vec<u32>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u32>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for U32s {
    type Value = Vec<u32>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the `{}` of a saved world: a sequence of integers",
            self.0
        )
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u32>, A::Error> {
        // A length the input claims is reserved only up to a bound: the rest is grown as
        // the values arrive.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(x) = seq.next_element()? {
            out.push(x);
        }
        Ok(out)
    }
}

/// Reads the `components` map into lists, one per saved type.
struct ComponentsSeed<'w> {
    world: &'w World,
    unknown: Unknown,
}

/// The `components` field as read: a list per saved type, and the names skipped.
#[derive(Default)]
struct ReadComponents {
    read: Vec<(StoreFn, Pending)>,
    skipped: Vec<String>,
}

impl<'de> DeserializeSeed<'de> for ComponentsSeed<'_> {
    type Value = ReadComponents;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ComponentsSeed<'_> {
    type Value = ReadComponents;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map from saved component names to (entity index, component) pairs")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut read: Vec<(String, StoreFn, Pending)> = Vec::new();
        let mut skipped: Vec<String> = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            if read.iter().any(|(n, ..)| *n == name) || skipped.contains(&name) {
                return Err(de::Error::custom(format_args!(
                    "component `{name}` listed twice"
                )));
            }
            match self.world.saved.0.iter().find(|t| t.name == name) {
                Some(t) => {
                    let pending = map.next_value_seed(TypeSeed(t.read))?;
                    read.push((name, t.store, pending));
                }
                None if self.unknown == Unknown::Skip => {
                    map.next_value::<de::IgnoredAny>().map_err(|err| {
                        de::Error::custom(format_args!(
                            "unknown component `{name}` could not be skipped: {err}"
                        ))
                    })?;
                    skipped.push(name);
                }
                None => {
                    return Err(de::Error::custom(format_args!(
                        "unknown component `{name}`: no type is registered for saving under it"
                    )))
                }
            }
        }
        Ok(ReadComponents {
            read: read.into_iter().map(|(_, store, p)| (store, p)).collect(),
            skipped,
        })
    }
}

/// Reads one saved type's pairs.
struct TypeSeed(ReadFn);

impl<'de> DeserializeSeed<'de> for TypeSeed {
    type Value = Pending;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Pending, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(d);
        (self.0)(&mut erased).map_err(de::Error::custom)
    }
}
