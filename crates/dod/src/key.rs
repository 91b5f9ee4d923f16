//! Handles: the keys that dod's containers hand out.
//!
//! A handle names a *slot* (its index) at one moment of that slot's life (its generation). When
//! the item in the slot is removed the slot's generation moves on, so every handle that still
//! carries the old generation is *stale*: containers answer `None` for it, never another item.
//!
//! Two layouts are provided:
//!
//! | type | bits | index | generation | type id | `Option<_>` |
//! |---|---|---|---|---|---|
//! | [`Handle`] | 64 | 32 bits (0 ..= 2³² − 2) | 16 bits (1 ..= 65 535) | 15 bits | 8 bytes |
//! | [`Handle32`] | 32 | 16 bits (0 ..= 65 534) | 16 bits (1 ..= 65 535) | none | 4 bytes |
//!
//! The generation is never zero, which is what makes `Option<Handle>` as small as `Handle`. A
//! slot whose generation would wrap past 65 535 is *retired* by the containers: never handed out
//! again, so no stale handle can ever match a later item, however long the program runs.
//!
//! Containers are generic over the [`Key`] trait. [`new_handle_type!`](crate::new_handle_type)
//! declares a distinct handle type per container, so that an `EnemyId` cannot be passed where a
//! `BulletId` is expected.

use core::fmt;
use core::hash::Hash;
use core::num::{NonZeroU16, NonZeroU32, NonZeroU64};

/// The trait of every handle type: a slot index, a non-zero generation and an optional type id.
///
/// Implemented by [`Handle`], [`Handle32`] and every type declared with
/// [`new_handle_type!`](crate::new_handle_type). Containers never trust a key: a stale key, a
/// key with another type id, and a key naming no live slot are answered with `None` or a clear
/// panic, never undefined behaviour. A key forged with the exact index, generation and type id
/// of a live item names that item, as the item's own key would: give each container its own
/// type id (or its own handle type) so that keys of different containers cannot be confused.
///
/// To implement it for a type of your own, keep to the layout the containers rely on:
/// [`tag`](Key::tag) is `generation | type_id << 16` with `type_id` at most `0x7FFF`, and
/// [`from_parts`](Key::from_parts) / [`from_index_tag`](Key::from_index_tag) give back a key
/// that reads the same parts.
///
/// # Example
///
/// ```
/// use core::num::NonZeroU16;
/// use dod::{Handle, Handle32, Key};
///
/// fn describe<K: Key>(k: K) -> (u32, u16) {
///     (k.index(), k.generation())
/// }
/// let g = NonZeroU16::new(7).unwrap();
/// assert_eq!(describe(Handle::from_parts(3, g, 0)), (3, 7));
/// assert_eq!(describe(Handle32::from_parts(3, g, 0)), (3, 7));
/// ```
pub trait Key: Copy + Eq + Ord + Hash + fmt::Debug + Send + Sync + 'static {
    /// How many slots this key type can address: valid indices are `0 .. MAX_SLOTS`.
    const MAX_SLOTS: u32;
    /// The largest type id this key type can carry (0 when it has no type id field).
    const MAX_TYPE_ID: u16;

    /// Builds a key from its parts.
    ///
    /// Bits that do not fit the layout are masked off: `index` must be below
    /// [`MAX_SLOTS`](Key::MAX_SLOTS) and `type_id` at most [`MAX_TYPE_ID`](Key::MAX_TYPE_ID) for
    /// the parts to read back unchanged. Containers call this; users normally receive keys.
    fn from_parts(index: u32, generation: NonZeroU16, type_id: u16) -> Self;

    /// The slot index.
    fn index(self) -> u32;

    /// The generation of the slot when this key was handed out (at least 1 in a key a
    /// container handed out; a forged key may say 0, and no container resolves it).
    fn generation(self) -> u16;

    /// The type id stamped by the container that handed this key out (0 when there is none).
    fn type_id(self) -> u16;

    /// Generation and type id packed as `generation | type_id << 16`: the value a container
    /// compares against its slot in one instruction.
    #[inline]
    fn tag(self) -> u32 {
        u32::from(self.generation()) | (u32::from(self.type_id()) << 16)
    }

    /// Builds a key from a slot index and a [`tag`](Key::tag) (`generation | type_id << 16`,
    /// generation non-zero), the form containers keep in their slots.
    #[inline]
    fn from_index_tag(index: u32, tag: u32) -> Self {
        let generation = NonZeroU16::new(tag as u16).unwrap_or(NonZeroU16::MIN);
        Self::from_parts(index, generation, (tag >> 16) as u16)
    }
}

/// A 64-bit generational handle: index 32 bits, generation 16 bits, type id 15 bits, and one
/// reserved bit that is always zero.
///
/// The layout is that of the griffin `handle_map` ids, as a `u64` (least significant first):
/// bits 0–31 the index, 32–47 the generation, 48–62 the type id, 63 reserved. Ordering and
/// equality compare that `u64`. `Option<Handle>` is 8 bytes.
///
/// # Example
///
/// ```
/// use dod::Handle;
///
/// let h = Handle::new(5, 2, 9).unwrap();
/// assert_eq!((h.index(), h.generation(), h.type_id()), (5, 2, 9));
/// assert_eq!(Handle::from_bits(h.to_bits()), Some(h));
/// assert_eq!(Handle::from_bits(0), None); // generation 0 is impossible
/// assert_eq!(core::mem::size_of::<Option<Handle>>(), 8);
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Handle(NonZeroU64);

impl Handle {
    const GEN_SHIFT: u32 = 32;
    const TYPE_SHIFT: u32 = 48;
    const RESERVED_BIT: u64 = 1 << 63;
    /// The largest type id a [`Handle`] can carry (15 bits).
    pub const MAX_TYPE_ID: u16 = 0x7FFF;

    /// Builds a handle from its fields, or `None` if a field is out of range: the generation is
    /// 0, the index is `u32::MAX` (never a slot) or the type id needs more than 15 bits.
    ///
    /// ```
    /// # use dod::Handle;
    /// assert!(Handle::new(0, 1, 0).is_some());
    /// assert!(Handle::new(0, 0, 0).is_none());
    /// assert!(Handle::new(0, 1, 0x8000).is_none());
    /// ```
    pub const fn new(index: u32, generation: u16, type_id: u16) -> Option<Self> {
        if generation == 0 || index == u32::MAX || type_id > Self::MAX_TYPE_ID {
            return None;
        }
        let bits = index as u64
            | (generation as u64) << Self::GEN_SHIFT
            | (type_id as u64) << Self::TYPE_SHIFT;
        match NonZeroU64::new(bits) {
            Some(nz) => Some(Handle(nz)),
            None => None,
        }
    }

    /// The slot index (bits 0–31).
    ///
    /// ```
    /// assert_eq!(dod::Handle::new(9, 1, 0).unwrap().index(), 9);
    /// ```
    #[inline]
    pub const fn index(self) -> u32 {
        self.0.get() as u32
    }

    /// The generation (bits 32–47), never 0.
    ///
    /// ```
    /// assert_eq!(dod::Handle::new(9, 4, 0).unwrap().generation(), 4);
    /// ```
    #[inline]
    pub const fn generation(self) -> u16 {
        (self.0.get() >> Self::GEN_SHIFT) as u16
    }

    /// The type id (bits 48–62).
    ///
    /// ```
    /// assert_eq!(dod::Handle::new(9, 4, 2).unwrap().type_id(), 2);
    /// ```
    #[inline]
    pub const fn type_id(self) -> u16 {
        ((self.0.get() >> Self::TYPE_SHIFT) as u16) & Self::MAX_TYPE_ID
    }

    /// The handle as a `u64`, for FFI, scripting languages and files.
    ///
    /// ```
    /// assert_eq!(dod::Handle::new(1, 1, 0).unwrap().to_bits(), 1 << 32 | 1);
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u64 {
        self.0.get()
    }

    /// Reads a handle back from [`to_bits`](Handle::to_bits), or `None` for a pattern no
    /// container ever hands out (generation 0, index `u32::MAX`, reserved bit set).
    ///
    /// A handle read this way is still checked by the container it is used with: a forged but
    /// well-formed handle is answered with `None` unless it names a live item.
    ///
    /// ```
    /// # use dod::Handle;
    /// assert_eq!(Handle::from_bits(1 << 32).map(|h| h.generation()), Some(1));
    /// assert_eq!(Handle::from_bits(1 << 63 | 1 << 32), None);
    /// ```
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Self> {
        let generation = (bits >> Self::GEN_SHIFT) as u16;
        if bits & Self::RESERVED_BIT != 0 || generation == 0 || bits as u32 == u32::MAX {
            return None;
        }
        match NonZeroU64::new(bits) {
            Some(nz) => Some(Handle(nz)),
            None => None,
        }
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .field("type_id", &self.type_id())
            .finish()
    }
}

/// `index`v`generation`, as in `3v1`, and `t` with the type id when it is not 0 (`3v1t2`):
/// short enough for logs and error messages.
///
/// ```
/// use dod::Handle;
/// assert_eq!(Handle::new(3, 1, 0).unwrap().to_string(), "3v1");
/// assert_eq!(Handle::new(3, 1, 2).unwrap().to_string(), "3v1t2");
/// ```
impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())?;
        match self.type_id() {
            0 => Ok(()),
            t => write!(f, "t{t}"),
        }
    }
}

impl Key for Handle {
    const MAX_SLOTS: u32 = u32::MAX;
    const MAX_TYPE_ID: u16 = Handle::MAX_TYPE_ID;

    #[inline]
    fn from_parts(index: u32, generation: NonZeroU16, type_id: u16) -> Self {
        let bits = u64::from(index)
            | u64::from(generation.get()) << Self::GEN_SHIFT
            | u64::from(type_id & Self::MAX_TYPE_ID) << Self::TYPE_SHIFT;
        // The generation is non-zero, so `bits` is too.
        Handle(NonZeroU64::new(bits).unwrap_or(NonZeroU64::MIN))
    }
    #[inline]
    fn index(self) -> u32 {
        Handle::index(self)
    }
    #[inline]
    fn generation(self) -> u16 {
        Handle::generation(self)
    }
    #[inline]
    fn type_id(self) -> u16 {
        Handle::type_id(self)
    }
    #[inline]
    fn tag(self) -> u32 {
        // Generation and type id are the upper half; the reserved bit is always 0.
        (self.0.get() >> Self::GEN_SHIFT) as u32
    }
    #[inline]
    fn from_index_tag(index: u32, tag: u32) -> Self {
        let bits = u64::from(index) | u64::from(tag & 0x7FFF_FFFF) << Self::GEN_SHIFT;
        Handle(NonZeroU64::new(bits).unwrap_or(NonZeroU64::MIN))
    }
}

/// A 32-bit generational handle: index 16 bits, generation 16 bits, no type id.
///
/// Bitsquid's ID lookup table id: as a `u32`, bits 0–15 the index and 16–31 the generation. A
/// container keyed by `Handle32` holds at most 65 535 items. `Option<Handle32>` is 4 bytes.
///
/// # Example
///
/// ```
/// use dod::Handle32;
///
/// let h = Handle32::new(7, 3).unwrap();
/// assert_eq!((h.index(), h.generation()), (7, 3));
/// assert_eq!(h.to_bits(), 3 << 16 | 7);
/// assert_eq!(Handle32::from_bits(h.to_bits()), Some(h));
/// assert_eq!(core::mem::size_of::<Option<Handle32>>(), 4);
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Handle32(NonZeroU32);

impl Handle32 {
    /// Builds a handle from its fields, or `None` if the generation is 0 or the index does
    /// not fit 16 bits below `0xFFFF` (never a slot). The index is a `u32`, as every
    /// container's and [`index`](Handle32::index)'s.
    ///
    /// ```
    /// # use dod::Handle32;
    /// assert!(Handle32::new(0, 1).is_some());
    /// assert!(Handle32::new(0xFFFE, 1).is_some());
    /// assert!(Handle32::new(0xFFFF, 1).is_none());
    /// assert!(Handle32::new(70_000, 1).is_none());
    /// assert!(Handle32::new(0, 0).is_none());
    /// ```
    pub const fn new(index: u32, generation: u16) -> Option<Self> {
        if generation == 0 || index >= u16::MAX as u32 {
            return None;
        }
        match NonZeroU32::new(index | (generation as u32) << 16) {
            Some(nz) => Some(Handle32(nz)),
            None => None,
        }
    }

    /// The slot index (bits 0–15, so below 65 535), as a `u32`: the index type of every
    /// container and of [`Key::index`], so that code written for one key type (`pool.get_at(
    /// h.index())`, `mask.insert(h.index())`) compiles for the others.
    ///
    /// ```
    /// let h = dod::Handle32::new(9, 1).unwrap();
    /// assert_eq!(h.index(), 9u32);
    /// ```
    #[inline]
    pub const fn index(self) -> u32 {
        self.0.get() & 0xFFFF
    }

    /// The generation (bits 16–31), never 0.
    ///
    /// ```
    /// assert_eq!(dod::Handle32::new(9, 4).unwrap().generation(), 4);
    /// ```
    #[inline]
    pub const fn generation(self) -> u16 {
        (self.0.get() >> 16) as u16
    }

    /// The handle as a `u32`.
    ///
    /// ```
    /// assert_eq!(dod::Handle32::new(1, 1).unwrap().to_bits(), 1 << 16 | 1);
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u32 {
        self.0.get()
    }

    /// Reads a handle back from [`to_bits`](Handle32::to_bits), or `None` for a pattern no
    /// container hands out (generation 0 or index `0xFFFF`).
    ///
    /// ```
    /// # use dod::Handle32;
    /// assert_eq!(Handle32::from_bits(1 << 16), Handle32::new(0, 1));
    /// assert_eq!(Handle32::from_bits(0), None);
    /// ```
    #[inline]
    pub const fn from_bits(bits: u32) -> Option<Self> {
        Self::new(bits & 0xFFFF, (bits >> 16) as u16)
    }
}

impl fmt::Debug for Handle32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle32")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .finish()
    }
}

/// `index`v`generation`, as in `3v1`.
///
/// ```
/// use dod::Handle32;
/// assert_eq!(Handle32::new(3, 1).unwrap().to_string(), "3v1");
/// ```
impl fmt::Display for Handle32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())
    }
}

impl Key for Handle32 {
    const MAX_SLOTS: u32 = u16::MAX as u32;
    const MAX_TYPE_ID: u16 = 0;

    #[inline]
    fn from_parts(index: u32, generation: NonZeroU16, _type_id: u16) -> Self {
        let bits = (index & 0xFFFF) | u32::from(generation.get()) << 16;
        Handle32(NonZeroU32::new(bits).unwrap_or(NonZeroU32::MIN))
    }
    #[inline]
    fn index(self) -> u32 {
        Handle32::index(self)
    }
    #[inline]
    fn generation(self) -> u16 {
        Handle32::generation(self)
    }
    #[inline]
    fn type_id(self) -> u16 {
        0
    }
    #[inline]
    fn tag(self) -> u32 {
        self.0.get() >> 16
    }
    #[inline]
    fn from_index_tag(index: u32, tag: u32) -> Self {
        let bits = (index & 0xFFFF) | tag << 16;
        Handle32(NonZeroU32::new(bits).unwrap_or(NonZeroU32::MIN))
    }
}

/// Declares handle types of their own, so that handles of different containers cannot be mixed
/// up at compile time.
///
/// Each type is a `#[repr(transparent)]` wrapper around [`Handle`] (the default) or, written
/// `struct Name: Handle32;`, around [`Handle32`]. It implements [`Key`], `Copy`, `Eq`, `Ord`,
/// `Hash`, `Debug`, `from_raw` / `raw` and `From` conversions to and from the raw handle (whose
/// `to_bits` / `from_bits` give the integer form), and the `serde` and `bytemuck` traits when
/// those features of `dod` are on.
///
/// # Example
///
/// ```
/// use dod::{new_handle_type, Handle, HandleMap, Handle32, Key};
///
/// new_handle_type! {
///     /// A handle to an enemy.
///     pub struct EnemyId;
///     /// A handle to a bone: 32 bits.
///     pub struct BoneId: Handle32;
/// }
///
/// let mut enemies: HandleMap<&str, EnemyId> = HandleMap::with_key();
/// let orc: EnemyId = enemies.insert("orc");
/// assert_eq!(enemies[orc], "orc");
///
/// let mut bones: HandleMap<[f32; 3], BoneId> = HandleMap::with_key();
/// let root = bones.insert([0.0; 3]);
/// assert_eq!(root.index(), 0);
/// assert_eq!(orc.generation(), 1); // through `Key`, the same number as the raw handle's
/// assert_eq!(Handle::from(orc).generation(), 1);
/// assert_eq!(core::mem::size_of::<Option<BoneId>>(), 4);
/// ```
///
/// Passing an `EnemyId` to a map keyed by another type does not compile:
///
/// ```compile_fail,E0308
/// use dod::{new_handle_type, HandleMap};
/// new_handle_type! { struct EnemyId; struct BulletId; }
/// let mut enemies: HandleMap<u32, EnemyId> = HandleMap::with_key();
/// let bullets: HandleMap<u32, BulletId> = HandleMap::with_key();
/// let e = enemies.insert(1);
/// let _ = bullets.get(e);
/// ```
#[macro_export]
macro_rules! new_handle_type {
    () => {};
    ($(#[$meta:meta])* $vis:vis struct $name:ident : $raw:ty ; $($rest:tt)*) => {
        $(#[$meta])*
        #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        $vis struct $name($raw);

        impl $name {
            /// Wraps a raw handle (for handles that crossed FFI or a file as integers).
            #[inline]
            #[allow(dead_code)]
            pub const fn from_raw(raw: $raw) -> Self {
                $name(raw)
            }
            /// The raw handle inside.
            #[inline]
            #[allow(dead_code)]
            pub const fn raw(self) -> $raw {
                self.0
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($name))
                    .field("index", &$crate::Key::index(self.0))
                    .field("generation", &$crate::Key::generation(self.0))
                    .field("type_id", &$crate::Key::type_id(self.0))
                    .finish()
            }
        }

        impl ::core::convert::From<$raw> for $name {
            #[inline]
            fn from(raw: $raw) -> Self {
                $name(raw)
            }
        }

        impl ::core::convert::From<$name> for $raw {
            #[inline]
            fn from(k: $name) -> Self {
                k.0
            }
        }

        impl $crate::Key for $name {
            const MAX_SLOTS: u32 = <$raw as $crate::Key>::MAX_SLOTS;
            const MAX_TYPE_ID: u16 = <$raw as $crate::Key>::MAX_TYPE_ID;
            #[inline]
            fn from_parts(index: u32, generation: ::core::num::NonZeroU16, type_id: u16) -> Self {
                $name(<$raw as $crate::Key>::from_parts(index, generation, type_id))
            }
            #[inline]
            fn index(self) -> u32 {
                $crate::Key::index(self.0)
            }
            #[inline]
            fn generation(self) -> u16 {
                $crate::Key::generation(self.0)
            }
            #[inline]
            fn type_id(self) -> u16 {
                $crate::Key::type_id(self.0)
            }
            #[inline]
            fn tag(self) -> u32 {
                $crate::Key::tag(self.0)
            }
            #[inline]
            fn from_index_tag(index: u32, tag: u32) -> Self {
                $name(<$raw as $crate::Key>::from_index_tag(index, tag))
            }
        }

        $crate::__handle_serde!($name, $raw);
        $crate::__handle_bytemuck!($name, $raw);

        $crate::new_handle_type!($($rest)*);
    };
    ($(#[$meta:meta])* $vis:vis struct $name:ident ; $($rest:tt)*) => {
        $crate::new_handle_type!($(#[$meta])* $vis struct $name : $crate::Handle ; $($rest)*);
    };
}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::{Handle, Handle32};
    use serde::de::{Deserialize, Deserializer, Error};
    use serde::ser::{Serialize, Serializer};

    impl Serialize for Handle {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_u64(self.to_bits())
        }
    }

    impl<'de> Deserialize<'de> for Handle {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let bits = u64::deserialize(d)?;
            Handle::from_bits(bits)
                .ok_or_else(|| D::Error::custom(format_args!("invalid handle bits {bits:#x}")))
        }
    }

    impl Serialize for Handle32 {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_u32(self.to_bits())
        }
    }

    impl<'de> Deserialize<'de> for Handle32 {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let bits = u32::deserialize(d)?;
            Handle32::from_bits(bits)
                .ok_or_else(|| D::Error::custom(format_args!("invalid handle bits {bits:#x}")))
        }
    }
}

#[cfg(feature = "serde")]
#[doc(hidden)]
#[macro_export]
macro_rules! __handle_serde {
    ($name:ident, $raw:ty) => {
        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                s: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                $crate::__private::serde::Serialize::serialize(&self.0, s)
            }
        }
        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                d: D,
            ) -> ::core::result::Result<Self, D::Error> {
                <$raw as $crate::__private::serde::Deserialize<'de>>::deserialize(d).map($name)
            }
        }
    };
}

#[cfg(not(feature = "serde"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __handle_serde {
    ($name:ident, $raw:ty) => {};
}

#[cfg(feature = "bytemuck")]
#[allow(unsafe_code)]
mod bytemuck_impls {
    //! `Option<Handle>` is plain old data (0 is `None`), so buffers of optional handles can go
    //! to the GPU or across FFI as they are; a `Handle` itself is checked on the way back in.
    use super::{Handle, Handle32};
    use bytemuck::{CheckedBitPattern, NoUninit, PodInOption, ZeroableInOption};

    // SAFETY: `Handle` is `repr(transparent)` over `NonZeroU64`, so `Option<Handle>` has the
    // layout of `u64` with `None` as the all-zero pattern.
    unsafe impl ZeroableInOption for Handle {}
    // SAFETY: as above; every non-zero `u64` is a valid `NonZeroU64`, and `Handle` has no
    // padding and no interior mutability, so `Option<Handle>` is `Pod` like `u64`.
    unsafe impl PodInOption for Handle {}
    // SAFETY: a `Handle` is 8 initialized bytes with no padding.
    unsafe impl NoUninit for Handle {}
    // SAFETY: `Bits` is `u64`, of the same size and layout; a bit pattern is accepted only if
    // `from_bits` accepts it, which implies it is non-zero.
    unsafe impl CheckedBitPattern for Handle {
        type Bits = u64;
        fn is_valid_bit_pattern(bits: &u64) -> bool {
            Handle::from_bits(*bits).is_some()
        }
    }

    // SAFETY: `Handle32` is `repr(transparent)` over `NonZeroU32`; `None` is all zeros.
    unsafe impl ZeroableInOption for Handle32 {}
    // SAFETY: every non-zero `u32` is a valid `NonZeroU32`; no padding, no interior mutability.
    unsafe impl PodInOption for Handle32 {}
    // SAFETY: a `Handle32` is 4 initialized bytes with no padding.
    unsafe impl NoUninit for Handle32 {}
    // SAFETY: same size and layout as `u32`; only patterns `from_bits` accepts (non-zero) pass.
    unsafe impl CheckedBitPattern for Handle32 {
        type Bits = u32;
        fn is_valid_bit_pattern(bits: &u32) -> bool {
            Handle32::from_bits(*bits).is_some()
        }
    }
}

#[cfg(feature = "bytemuck")]
#[doc(hidden)]
#[macro_export]
macro_rules! __handle_bytemuck {
    ($name:ident, $raw:ty) => {
        // SAFETY: `$name` is `repr(transparent)` over `$raw`, which is `ZeroableInOption`.
        #[allow(unsafe_code)]
        unsafe impl $crate::__private::bytemuck::ZeroableInOption for $name {}
        // SAFETY: `$name` is `repr(transparent)` over `$raw`, which is `PodInOption`.
        #[allow(unsafe_code)]
        unsafe impl $crate::__private::bytemuck::PodInOption for $name {}
        // SAFETY: `$name` is `repr(transparent)` over `$raw`, which is `NoUninit`.
        #[allow(unsafe_code)]
        unsafe impl $crate::__private::bytemuck::NoUninit for $name {}
        // SAFETY: same layout as `$raw`; its bit-pattern check is reused unchanged.
        #[allow(unsafe_code)]
        unsafe impl $crate::__private::bytemuck::CheckedBitPattern for $name {
            type Bits = <$raw as $crate::__private::bytemuck::CheckedBitPattern>::Bits;
            fn is_valid_bit_pattern(bits: &Self::Bits) -> bool {
                <$raw as $crate::__private::bytemuck::CheckedBitPattern>::is_valid_bit_pattern(bits)
            }
        }
    };
}

#[cfg(not(feature = "bytemuck"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __handle_bytemuck {
    ($name:ident, $raw:ty) => {};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(core::mem::size_of::<Option<Handle>>(), 8);
        assert_eq!(core::mem::size_of::<Option<Handle32>>(), 4);
    }

    #[test]
    fn handle_fields_round_trip() {
        for &(i, g, t) in &[
            (0u32, 1u16, 0u16),
            (u32::MAX - 1, u16::MAX, Handle::MAX_TYPE_ID),
            (12345, 77, 3),
        ] {
            let h = Handle::new(i, g, t).unwrap();
            assert_eq!((h.index(), h.generation(), h.type_id()), (i, g, t));
            let k = <Handle as Key>::from_parts(i, NonZeroU16::new(g).unwrap(), t);
            assert_eq!(h, k);
            assert_eq!(<Handle as Key>::from_index_tag(i, Key::tag(h)), h);
            assert_eq!(Key::tag(h), u32::from(g) | u32::from(t) << 16);
            assert_eq!(Handle::from_bits(h.to_bits()), Some(h));
        }
    }

    #[test]
    fn handle_rejects_impossible_bits() {
        assert_eq!(Handle::from_bits(0), None);
        assert_eq!(Handle::from_bits(5), None, "generation 0");
        assert_eq!(Handle::from_bits(1 << 63 | 1 << 32), None, "reserved bit");
        assert_eq!(
            Handle::from_bits(1 << 32 | 0xFFFF_FFFF),
            None,
            "index u32::MAX"
        );
        assert_eq!(Handle::new(0, 1, 0x8000), None);
    }

    #[test]
    fn handle32_fields_round_trip() {
        let h = Handle32::new(0xFFFE, 0xFFFF).unwrap();
        assert_eq!((h.index(), h.generation()), (0xFFFE, 0xFFFF));
        assert_eq!(Key::tag(h), 0xFFFF);
        assert_eq!(<Handle32 as Key>::from_index_tag(0xFFFE, 0xFFFF), h);
        assert_eq!(Handle32::from_bits(h.to_bits()), Some(h));
        assert_eq!(Handle32::from_bits(0x0001_0000 | 0xFFFF), None);
        assert_eq!(Handle32::from_bits(7), None);
    }

    #[cfg(feature = "bytemuck")]
    #[test]
    fn optional_handles_are_plain_old_data() {
        let hs = [Handle::new(1, 2, 3), None, Handle::new(7, 1, 0)];
        let bytes: &[u8] = bytemuck::cast_slice(&hs);
        assert_eq!(bytes.len(), 24);
        assert_eq!(&bytes[8..16], &[0; 8], "None is all zeros");
        let back: &[Option<Handle>] = bytemuck::cast_slice(bytes);
        assert_eq!(back, &hs);
        let words: &[u64] = bytemuck::cast_slice(&hs);
        assert_eq!(words[0], hs[0].unwrap().to_bits());
        // A `Handle` itself is checked on the way in.
        assert_eq!(
            bytemuck::checked::try_cast::<u64, Handle>(words[0]),
            Ok(hs[0].unwrap())
        );
        assert!(bytemuck::checked::try_cast::<u64, Handle>(0).is_err());
        assert!(bytemuck::checked::try_cast::<u64, Handle>(1 << 63 | 1 << 32).is_err());
        // Pod admits every bit pattern, reserved bit included: containers answer None.
        let forged: Option<Handle> = bytemuck::cast(1u64 << 63 | 1 << 32);
        let mut map = crate::HandleMap::new();
        let hs = map.insert_many(['a', 'b', 'c', 'd']);
        map.remove(hs[0]);
        map.remove(hs[1]);
        assert_eq!(map.get(forged.unwrap()), None);
        assert_eq!(map.remove(forged.unwrap()), None);
        map.assert_invariants();
        let h32: [Option<Handle32>; 2] = [Handle32::new(1, 1), None];
        assert_eq!(bytemuck::cast::<_, [u32; 2]>(h32), [1 << 16 | 1, 0]);
    }

    #[test]
    fn debug_shows_fields() {
        let h = Handle::new(4, 2, 1).unwrap();
        assert_eq!(
            alloc::format!("{h:?}"),
            "Handle { index: 4, generation: 2, type_id: 1 }"
        );
    }
}
