//! A key type that misbehaves, for the containers' tests: user code a container must
//! survive without undefined behaviour, a lost slot or a value under the wrong key.

use core::num::NonZeroU16;

use crate::Key;

/// A key type whose `from_parts` panics while [`PANIC_ON_MAKE`] is set, and whose `index()`
/// answers `self.0` and `self.1` by turns (starting from [`FLIP`]'s state).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Hostile(pub u32, pub u32, pub NonZeroU16);

std::thread_local! {
    /// While set, `Hostile::from_parts` panics.
    pub(crate) static PANIC_ON_MAKE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// Which of its two indices `Hostile::index` answers next (`false`: the first).
    pub(crate) static FLIP: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

impl Key for Hostile {
    const MAX_SLOTS: u32 = 1_000;
    const MAX_TYPE_ID: u16 = 0;
    fn from_parts(index: u32, generation: NonZeroU16, _: u16) -> Self {
        if PANIC_ON_MAKE.with(|p| p.get()) {
            panic!("the key type refuses to make a key");
        }
        Hostile(index, index, generation)
    }
    fn index(self) -> u32 {
        let flip = FLIP.with(|f| f.replace(!f.get()));
        if flip {
            self.1
        } else {
            self.0
        }
    }
    fn generation(self) -> u16 {
        self.2.get()
    }
    fn type_id(self) -> u16 {
        0
    }
}

/// Runs `f` while `Hostile::from_parts` panics, and catches what `f` panics with.
pub(crate) fn refusing_keys<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    PANIC_ON_MAKE.with(|p| p.set(true));
    let r = std::panic::catch_unwind(core::panic::AssertUnwindSafe(f));
    PANIC_ON_MAKE.with(|p| p.set(false));
    r
}
