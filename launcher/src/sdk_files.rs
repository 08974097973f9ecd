//! The helper libraries `new` copies into Python and JavaScript projects,
//! embedded from `sdk/python/lingxi_plugin/` and `sdk/js/` (a unit test
//! checks that no file of either is missing).

/// `(path in the project, text)` of each file of the Python helper package.
pub const PYTHON: &[(&str, &str)] = &[
    (
        "lingxi_plugin/__init__.py",
        include_str!("../../sdk/python/lingxi_plugin/__init__.py"),
    ),
    (
        "lingxi_plugin/_host.py",
        include_str!("../../sdk/python/lingxi_plugin/_host.py"),
    ),
    (
        "lingxi_plugin/context.py",
        include_str!("../../sdk/python/lingxi_plugin/context.py"),
    ),
    (
        "lingxi_plugin/info.py",
        include_str!("../../sdk/python/lingxi_plugin/info.py"),
    ),
    (
        "lingxi_plugin/model.py",
        include_str!("../../sdk/python/lingxi_plugin/model.py"),
    ),
    (
        "lingxi_plugin/runtime.py",
        include_str!("../../sdk/python/lingxi_plugin/runtime.py"),
    ),
    (
        "lingxi_plugin/schema.py",
        include_str!("../../sdk/python/lingxi_plugin/schema.py"),
    ),
    (
        "lingxi_plugin/storage.py",
        include_str!("../../sdk/python/lingxi_plugin/storage.py"),
    ),
];

/// `(path in the project, text)` of each file of the JavaScript helper library.
pub const JS: &[(&str, &str)] = &[
    (
        "lingxi-plugin/build.mjs",
        include_str!("../../sdk/js/build.mjs"),
    ),
    (
        "lingxi-plugin/context.js",
        include_str!("../../sdk/js/context.js"),
    ),
    ("lingxi-plugin/fs.js", include_str!("../../sdk/js/fs.js")),
    (
        "lingxi-plugin/info.js",
        include_str!("../../sdk/js/info.js"),
    ),
    (
        "lingxi-plugin/lingxi-plugin.d.ts",
        include_str!("../../sdk/js/lingxi-plugin.d.ts"),
    ),
    (
        "lingxi-plugin/lingxi-plugin.js",
        include_str!("../../sdk/js/lingxi-plugin.js"),
    ),
    (
        "lingxi-plugin/runtime.js",
        include_str!("../../sdk/js/runtime.js"),
    ),
    (
        "lingxi-plugin/schema.js",
        include_str!("../../sdk/js/schema.js"),
    ),
    (
        "lingxi-plugin/storage.js",
        include_str!("../../sdk/js/storage.js"),
    ),
    (
        "lingxi-plugin/types.js",
        include_str!("../../sdk/js/types.js"),
    ),
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every file of `dir` with extension `ext` is in `files` under `prefix`.
    fn all_embedded(dir: &str, exts: &[&str], prefix: &str, files: &[(&str, &str)]) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if path.is_file() && exts.iter().any(|e| name.ends_with(e)) {
                let wanted = format!("{prefix}{name}");
                assert!(
                    files.iter().any(|(p, _)| *p == wanted),
                    "{} is not embedded in launcher/src/sdk_files.rs",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn every_helper_file_is_embedded() {
        all_embedded(
            "sdk/python/lingxi_plugin",
            &[".py"],
            "lingxi_plugin/",
            super::PYTHON,
        );
        all_embedded(
            "sdk/js",
            &[".js", ".mjs", ".d.ts"],
            "lingxi-plugin/",
            super::JS,
        );
    }
}
