//! # lingxi-plugin-sdk-files
//!
//! The Python and JavaScript SDKs' helper libraries as text (embedded from
//! `python/lingxi_plugin/` and `js/` beside this crate, the one source of
//! them), and the toolchain locks their projects build with: what
//! `lingxi-wasm-run new` copies into a new Python or JavaScript plugin
//! project. A unit test checks that no file of either library is missing.
//!
//! ```
//! let (path, text) = lingxi_plugin_sdk_files::PYTHON[0];
//! assert!(path.starts_with("lingxi_plugin/") && !text.is_empty());
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

/// `(path in the project, text)` of each file of the Python helper package.
pub const PYTHON: &[(&str, &str)] = &[
    (
        "lingxi_plugin/__init__.py",
        include_str!("../python/lingxi_plugin/__init__.py"),
    ),
    (
        "lingxi_plugin/_host.py",
        include_str!("../python/lingxi_plugin/_host.py"),
    ),
    (
        "lingxi_plugin/context.py",
        include_str!("../python/lingxi_plugin/context.py"),
    ),
    (
        "lingxi_plugin/info.py",
        include_str!("../python/lingxi_plugin/info.py"),
    ),
    (
        "lingxi_plugin/model.py",
        include_str!("../python/lingxi_plugin/model.py"),
    ),
    (
        "lingxi_plugin/runtime.py",
        include_str!("../python/lingxi_plugin/runtime.py"),
    ),
    (
        "lingxi_plugin/schema.py",
        include_str!("../python/lingxi_plugin/schema.py"),
    ),
    (
        "lingxi_plugin/secrets.py",
        include_str!("../python/lingxi_plugin/secrets.py"),
    ),
    (
        "lingxi_plugin/storage.py",
        include_str!("../python/lingxi_plugin/storage.py"),
    ),
    (
        "lingxi_plugin/tasks.py",
        include_str!("../python/lingxi_plugin/tasks.py"),
    ),
];

/// `(path in the project, text)` of each file of the JavaScript helper library.
pub const JS: &[(&str, &str)] = &[
    ("lingxi-plugin/build.mjs", include_str!("../js/build.mjs")),
    ("lingxi-plugin/context.js", include_str!("../js/context.js")),
    ("lingxi-plugin/fs.js", include_str!("../js/fs.js")),
    ("lingxi-plugin/info.js", include_str!("../js/info.js")),
    (
        "lingxi-plugin/lingxi-plugin.d.ts",
        include_str!("../js/lingxi-plugin.d.ts"),
    ),
    (
        "lingxi-plugin/lingxi-plugin.js",
        include_str!("../js/lingxi-plugin.js"),
    ),
    ("lingxi-plugin/runtime.js", include_str!("../js/runtime.js")),
    ("lingxi-plugin/schema.js", include_str!("../js/schema.js")),
    ("lingxi-plugin/secrets.js", include_str!("../js/secrets.js")),
    ("lingxi-plugin/storage.js", include_str!("../js/storage.js")),
    ("lingxi-plugin/tasks.js", include_str!("../js/tasks.js")),
    ("lingxi-plugin/types.js", include_str!("../js/types.js")),
];

/// The Python toolchain's lock (`python/requirements.lock`): a Python
/// project builds with exactly the versions this repository tests.
pub const PYTHON_LOCK: &str = include_str!("../python/requirements.lock");

/// The JavaScript toolchain's lock (`js/toolchain/package-lock.json`); its
/// package name is [`JS_TOOLCHAIN`], which a project's copy replaces with
/// its own.
pub const JS_LOCK: &str = include_str!("../js/toolchain/package-lock.json");

/// The package name in [`JS_LOCK`] (`js/toolchain/package.json`'s).
pub const JS_TOOLCHAIN: &str = "lingxi-plugin-js-toolchain";

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every file of `dir` with extension `ext` is in `files` under `prefix`.
    fn all_embedded(dir: &str, exts: &[&str], prefix: &str, files: &[(&str, &str)]) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if path.is_file() && exts.iter().any(|e| name.ends_with(e)) {
                let wanted = format!("{prefix}{name}");
                assert!(
                    files.iter().any(|(p, _)| *p == wanted),
                    "{} is not embedded in sdk/src/lib.rs",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn every_helper_file_is_embedded() {
        all_embedded(
            "python/lingxi_plugin",
            &[".py"],
            "lingxi_plugin/",
            super::PYTHON,
        );
        all_embedded("js", &[".js", ".mjs", ".d.ts"], "lingxi-plugin/", super::JS);
    }
}
