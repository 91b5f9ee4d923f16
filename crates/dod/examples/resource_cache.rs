//! A resource cache, as the handle_map article suggests: the resources themselves stay put
//! (each behind an `Arc`), and the `HandleMap` holds the `Arc`s, which it may move around as it
//! likes. Code refers to resources by handle; an unloaded resource's handle is detected as stale,
//! while anyone who cloned the `Arc` keeps a valid resource.
//!
//! `cargo run --release --example resource_cache [-- --quick]`

use std::sync::Arc;

use dod::{new_handle_type, HandleMap};

new_handle_type! {
    /// A handle to a loaded texture.
    pub struct TextureId;
}

struct Texture {
    name: String,
    pixels: Vec<u8>,
}

struct Cache {
    textures: HandleMap<Arc<Texture>, TextureId>,
}

impl Cache {
    fn load(&mut self, name: &str, size: usize) -> TextureId {
        let tex = Texture {
            name: name.to_string(),
            pixels: vec![name.len() as u8; size],
        };
        self.textures.insert(Arc::new(tex))
    }

    fn get(&self, id: TextureId) -> Option<&Arc<Texture>> {
        self.textures.get(id)
    }

    fn unload(&mut self, id: TextureId) -> bool {
        self.textures.remove(id).is_some()
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let count = if quick { 200 } else { 5_000 };
    let mut cache = Cache {
        textures: HandleMap::with_key().with_type_id(7),
    };
    let ids: Vec<TextureId> = (0..count)
        .map(|i| cache.load(&format!("tex{i}"), 256))
        .collect();
    // Where each texture lives: it must not move while the map shuffles its Arcs.
    let addresses: Vec<*const Texture> = ids
        .iter()
        .map(|&id| Arc::as_ptr(&cache.textures[id]))
        .collect();

    // A renderer holds on to one texture beyond its unloading.
    let kept = Arc::clone(cache.get(ids[0]).unwrap());

    // Unload every third texture; the map swaps the last Arc into each hole.
    let mut unloaded = 0;
    for &id in ids.iter().step_by(3) {
        assert!(cache.unload(id));
        unloaded += 1;
    }
    assert!(!cache.unload(ids[0]), "unloading twice is refused");

    let mut stale = 0;
    for (i, &id) in ids.iter().enumerate() {
        match cache.get(id) {
            Some(tex) => {
                assert_eq!(Arc::as_ptr(tex), addresses[i], "a resource stays put");
                assert_eq!(tex.name, format!("tex{i}"));
            }
            None => {
                assert_eq!(i % 3, 0, "only unloaded textures are stale");
                stale += 1;
            }
        }
    }
    assert_eq!(stale, unloaded);
    assert_eq!(
        kept.name, "tex0",
        "a clone of an unloaded Arc is still valid"
    );
    assert_eq!(kept.pixels.len(), 256);

    // Reloading reuses slots, but never resurrects an old handle.
    let reloaded: Vec<TextureId> = (0..unloaded)
        .map(|i| cache.load(&format!("new{i}"), 16))
        .collect();
    assert!(ids.iter().step_by(3).all(|&old| cache.get(old).is_none()));
    assert!(reloaded.iter().all(|&id| cache.get(id).is_some()));

    println!(
        "{count} textures loaded, {unloaded} unloaded: {stale} stale handles detected, \
         every loaded texture at its original address, {} reloaded",
        reloaded.len()
    );
    println!(
        "cache holds {} textures; a clone of unloaded {:?} is still usable",
        cache.textures.len(),
        kept.name
    );
}
