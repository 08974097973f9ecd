//! `lingxi-wasm-run new <DIR> --lang rust|python|js`: a plugin project that
//! builds, passes `check`, and has a test replaying one exchange. The
//! templates live in `launcher/templates/<lang>/`; Python and JavaScript
//! projects get their own copy of the WIT and of the language's helper
//! library (from `sdk/`), so they build outside this repository.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

/// The language of a new project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust with `lingxi-plugin-sdk` (cargo, target wasm32-wasip2).
    Rust,
    /// Python with the `lingxi_plugin` helper (componentize-py).
    Python,
    /// JavaScript with the `lingxi-plugin` helper (componentize-js).
    Js,
}

/// The name of `sdk/js/toolchain/package.json`, replaced by the project's
/// in the lock a JavaScript project gets.
const JS_TOOLCHAIN: &str = lingxi_plugin_sdk_files::JS_TOOLCHAIN;

/// The WIT every component implements.
const WIT: &str = lingxi_plugin_wit::WIT;

/// One file of a template: where it goes, and its text with `__KEY__`
/// placeholders.
type Template = (&'static str, &'static str);

const RUST: &[Template] = &[
    // Not named Cargo.toml in the package: cargo would take the folder for
    // a package of its own and leave it out.
    (
        "Cargo.toml",
        include_str!("../templates/rust/Cargo.toml.tmpl"),
    ),
    ("src/lib.rs", include_str!("../templates/rust/lib.rs")),
    (
        "tests/exchange.rs",
        include_str!("../templates/rust/exchange.rs"),
    ),
    ("README.md", include_str!("../templates/rust/README.md")),
    (".gitignore", include_str!("../templates/rust/gitignore")),
];

const PYTHON: &[Template] = &[
    ("app.py", include_str!("../templates/python/app.py")),
    (
        "test_exchange.py",
        include_str!("../templates/python/test_exchange.py"),
    ),
    ("build.sh", include_str!("../templates/python/build.sh")),
    ("README.md", include_str!("../templates/python/README.md")),
    (".gitignore", include_str!("../templates/python/gitignore")),
    ("requirements.lock", lingxi_plugin_sdk_files::PYTHON_LOCK),
    ("wit/lingxi-plugin.wit", WIT),
];

const JS: &[Template] = &[
    ("app.js", include_str!("../templates/js/app.js")),
    (
        "test/exchange.test.mjs",
        include_str!("../templates/js/exchange.test.mjs"),
    ),
    ("package.json", include_str!("../templates/js/package.json")),
    // The toolchain's own lock: the project builds with exactly the
    // versions this repository tests (its name is the project's, see below).
    ("package-lock.json", lingxi_plugin_sdk_files::JS_LOCK),
    ("README.md", include_str!("../templates/js/README.md")),
    (".gitignore", include_str!("../templates/js/gitignore")),
    ("wit/lingxi-plugin.wit", WIT),
];

/// What the user chose, checked.
pub struct NewArgs {
    pub dir: PathBuf,
    pub lang: Lang,
    pub id: Option<String>,
    pub name: Option<String>,
    pub sdk: Option<PathBuf>,
}

/// Creates the project and prints what to do next.
pub fn new(args: NewArgs) -> Result<()> {
    let dir = &args.dir;
    if dir.exists() && std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_some()) {
        bail!(
            "{} exists and is not an empty folder; choose a new folder",
            dir.display()
        );
    }
    let base = dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(slug)
        .filter(|s| !s.is_empty())
        .context("the folder name must contain a letter or digit, e.g. `new my-plugin`")?;
    let id = args.id.unwrap_or_else(|| format!("com.example.{base}"));
    check_id(&id)?;
    let name = args.name.unwrap_or_else(|| base.clone());
    check_text("--name", &name)?;
    let description = format!("{name}, a sandboxed LingXi plugin");
    let mut values = vec![
        ("ID", id.clone()),
        ("NAME", name),
        ("DESCRIPTION", description),
        ("CRATE", base.clone()),
        ("CRATE_FILE", base.replace('-', "_")),
    ];
    let (templates, helper): (&[Template], &[Template]) = match args.lang {
        Lang::Rust => {
            values.push(("SDK", rust_sdk(args.sdk.as_deref())?));
            (RUST, &[])
        }
        Lang::Python => (PYTHON, lingxi_plugin_sdk_files::PYTHON),
        Lang::Js => (JS, lingxi_plugin_sdk_files::JS),
    };
    for (path, text) in templates.iter().chain(helper) {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let mut text = (*text).to_owned();
        for (key, value) in &values {
            text = text.replace(&format!("__{key}__"), value);
        }
        if *path == "package-lock.json" {
            text = text.replace(&format!("\"{JS_TOOLCHAIN}\""), &format!("\"{base}\""));
        }
        std::fs::write(&target, text)
            .with_context(|| format!("cannot write {}", target.display()))?;
        if path.ends_with(".sh") {
            make_executable(&target)?;
        }
    }
    println!("created {} ({id})", dir.display());
    let shown = shell_quoted(&dir.display().to_string());
    match args.lang {
        Lang::Rust => println!(
            "next: cd {shown} && cargo build --target wasm32-wasip2 --release && cargo test"
        ),
        Lang::Python => {
            println!("next: cd {shown} && ./build.sh && python3 -m unittest test_exchange")
        }
        Lang::Js => println!("next: cd {shown} && npm ci && npm run build && npm test"),
    }
    Ok(())
}

/// `text` as one word for a POSIX shell: as is when it is plain, else in
/// single quotes (so a pasted hint never runs `$(…)` of a folder name).
fn shell_quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-+=:@%,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Lower-case letters, digits and single dashes of `name`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// A reverse-DNS id of at least two labels of `[a-z0-9-]`.
fn check_id(id: &str) -> Result<()> {
    let labels: Vec<&str> = id.split('.').collect();
    let good = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        });
    if !good {
        bail!("--id {id:?}: use a reverse-DNS id of lower-case labels, e.g. com.example.my-plugin");
    }
    Ok(())
}

/// Text that goes into string literals of the templates unescaped.
fn check_text(flag: &str, text: &str) -> Result<()> {
    if text.is_empty()
        || text.len() > 100
        || text
            .chars()
            .any(|c| c.is_control() || matches!(c, '"' | '\\' | '`' | '$' | '\''))
    {
        bail!(
            "{flag} {text:?}: use 1 to 100 characters without quotes, backslashes, `$` or control characters"
        );
    }
    Ok(())
}

/// Where the generated Cargo.toml finds `lingxi-plugin-sdk`: `--sdk`, else
/// the SDK of the source tree this launcher was built from, if it is still
/// there.
fn rust_sdk(given: Option<&Path>) -> Result<String> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/rust");
    let sdk = given.unwrap_or(&built_from);
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "the Rust SDK is not at {}: pass --sdk <path to lingxi-wasm/sdk/rust>",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        bail!(
            "{} has no Cargo.toml: pass --sdk <path to lingxi-wasm/sdk/rust>",
            sdk.display()
        );
    }
    let text = sdk.to_str().context("the SDK path is not UTF-8")?;
    check_text("--sdk", text)
        .or_else(|_| bail!("the SDK path {text:?} cannot go into Cargo.toml"))?;
    Ok(text.to_owned())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_ids() {
        assert_eq!(slug("My Plugin!"), "my-plugin");
        assert_eq!(slug("--x__y--"), "x-y");
        assert!(check_id("com.example.x-1").is_ok());
        for bad in ["x", "Com.example", "com..x", "com.ex ample"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
        assert!(check_text("--name", "Nice name").is_ok());
        assert_eq!(shell_quoted("/tmp/my-plugin"), "/tmp/my-plugin");
        assert_eq!(shell_quoted("/tmp/p$(id)"), "'/tmp/p$(id)'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        for bad in ["", "a\"b", "a\\b", "a\nb", "$(x)"] {
            assert!(check_text("--name", bad).is_err(), "{bad}");
        }
    }
}
