//! Plugins written in Python and JavaScript against the same WIT, through
//! the same launcher: the conformance transcripts (unpacked, and packed and
//! spawned as LingXi spawns a plugin, in both dialects), the attack rows
//! that apply to any guest, the examples, the helper libraries' own unit
//! tests, and `lingxi-wasm-run new`. Each test runs once per language
//! (`python::…`, `javascript::…`).

use crate::conformance::replay_all;
use crate::packed::{lingxi_spawn, pack_component};
use crate::support::{Session, polyglot};

mod attacks;
mod examples;
mod new;
mod sdk;

/// Defines each test once per language: `python::name` and
/// `javascript::name`, with `$lang` bound to the language.
macro_rules! per_language {
    ($($(#[$meta:meta])* fn $name:ident($lang:ident) $body:block)*) => {
        mod python {
            #[allow(unused_imports)]
            use super::*;
            $($(#[$meta])* #[test] fn $name() { let $lang = crate::support::Lang::Python; $body })*
        }
        mod javascript {
            #[allow(unused_imports)]
            use super::*;
            $($(#[$meta])* #[test] fn $name() { let $lang = crate::support::Lang::JavaScript; $body })*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use per_language;

per_language! {
    fn conformance_transcripts_unpacked(lang) {
        replay_all(|plugin, args| Session::start(&polyglot(lang, plugin), args));
    }

    fn conformance_transcripts_packed_and_spawned_like_lingxi(lang) {
        let dir = tempfile::tempdir().unwrap();
        let packed: Vec<(String, std::path::PathBuf)> = ["probe", "testbed"]
            .iter()
            .map(|name| {
                let exe = pack_component(dir.path(), &polyglot(lang, name), name, &[]);
                (name.to_string(), exe)
            })
            .collect();
        replay_all(|plugin, args| {
            assert!(args.is_empty(), "a packed plugin takes no arguments");
            let (_, exe) = packed
                .iter()
                .find(|(name, _)| name == plugin)
                .unwrap_or_else(|| panic!("no packed {plugin}"));
            Session::spawn(lingxi_spawn(exe, dir.path()))
        });
    }
}
