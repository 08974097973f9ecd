//! Walking the workspace and counting.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use lingxi_plugin_sdk::{PluginError, PluginResult};
use serde::Serialize;

/// Most files visited in one scan, so a huge tree answers within the deadline.
const MAX_FILES: usize = 50_000;
/// Files larger than this are counted but their lines are not.
const MAX_LINE_COUNT_BYTES: u64 = 8 * 1024 * 1024;
/// Folder names never entered: build output and dependencies.
const SKIPPED_DIRS: [&str; 3] = ["target", "node_modules", "build"];

/// What a scan found.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The scanned path, relative to the workspace root (`.` for the root).
    pub path: String,
    pub files: usize,
    pub lines: u64,
    /// Per language, most lines first.
    pub languages: Vec<Language>,
    /// The largest files, largest first.
    pub largest: Vec<FileSize>,
    /// Whether the scan stopped at its file limit.
    pub truncated: bool,
}

#[derive(Debug, Serialize)]
pub struct Language {
    pub language: &'static str,
    pub files: usize,
    pub lines: u64,
}

#[derive(Debug, Serialize)]
pub struct FileSize {
    pub path: String,
    pub bytes: u64,
}

/// Scans `sub` (relative to `root`, or absolute inside it) of the workspace.
pub fn scan(root: &str, sub: Option<&str>, top: usize) -> PluginResult<Summary> {
    let root = PathBuf::from(root);
    let rel = relative_inside(&root, sub.unwrap_or("."))?;
    let start = root.join(&rel);
    let meta = std::fs::metadata(&start)
        .map_err(|e| PluginError::new(format!("cannot read {}: {e}", start.display())))?;
    let mut walk = Walk::default();
    if meta.is_dir() {
        walk.dir(&start, &root)?;
    } else {
        walk.file(&start, &root, meta.len());
    }
    let mut languages: Vec<Language> = walk
        .per_language
        .into_iter()
        .map(|(language, (files, lines))| Language {
            language,
            files,
            lines,
        })
        .collect();
    languages.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.language.cmp(b.language)));
    walk.sizes
        .sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.path.cmp(&b.path)));
    walk.sizes.truncate(top);
    Ok(Summary {
        path: if rel.as_os_str().is_empty() {
            ".".into()
        } else {
            rel.display().to_string()
        },
        files: walk.files,
        lines: languages.iter().map(|l| l.lines).sum(),
        languages,
        largest: walk.sizes,
        truncated: walk.truncated,
    })
}

/// The path relative to the root, refusing anything that leaves it.
fn relative_inside(root: &Path, sub: &str) -> PluginResult<PathBuf> {
    let outside = || {
        PluginError::new(format!(
            "path '{sub}' is outside the workspace {}; give a path inside it",
            root.display()
        ))
    };
    let sub_path = Path::new(sub);
    let rel = if sub_path.is_absolute() {
        sub_path.strip_prefix(root).map_err(|_| outside())?
    } else {
        sub_path
    };
    let mut clean = PathBuf::new();
    for part in rel.components() {
        match part {
            Component::Normal(p) => clean.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(outside());
            }
        }
    }
    Ok(clean)
}

#[derive(Default)]
struct Walk {
    files: usize,
    per_language: BTreeMap<&'static str, (usize, u64)>,
    sizes: Vec<FileSize>,
    truncated: bool,
}

impl Walk {
    fn dir(&mut self, dir: &Path, root: &Path) -> PluginResult<()> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| PluginError::new(format!("cannot list {}: {e}", dir.display())))?;
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if self.truncated {
                return Ok(());
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() && !SKIPPED_DIRS.contains(&name.as_ref()) {
                // Unreadable sub-folders are skipped, not fatal.
                let _ = self.dir(&path, root);
            } else if kind.is_file() {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                self.file(&path, root, size);
            }
        }
        Ok(())
    }

    fn file(&mut self, path: &Path, root: &Path, size: u64) {
        if self.files >= MAX_FILES {
            self.truncated = true;
            return;
        }
        self.files += 1;
        let language = language_of(path);
        let lines = if size <= MAX_LINE_COUNT_BYTES {
            std::fs::read(path)
                .map(|b| {
                    if b.contains(&0) {
                        0
                    } else {
                        b.iter().filter(|c| **c == b'\n').count() as u64
                    }
                })
                .unwrap_or(0)
        } else {
            0
        };
        let entry = self.per_language.entry(language).or_default();
        entry.0 += 1;
        entry.1 += lines;
        let shown = path.strip_prefix(root).unwrap_or(path);
        self.sizes.push(FileSize {
            path: shown.display().to_string(),
            bytes: size,
        });
    }
}

fn language_of(path: &Path) -> &'static str {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "rs" => "Rust",
        "wit" => "WIT",
        "toml" => "TOML",
        "md" => "Markdown",
        "json" | "jsonl" => "JSON",
        "sh" | "bash" => "Shell",
        "py" => "Python",
        "js" | "mjs" | "cjs" => "JavaScript",
        "ts" | "tsx" => "TypeScript",
        "swift" => "Swift",
        "go" => "Go",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" => "C++",
        "java" => "Java",
        "yml" | "yaml" => "YAML",
        "html" | "htm" => "HTML",
        "css" => "CSS",
        "txt" => "Text",
        "lock" => "Lockfile",
        "" => match path.file_name().and_then(|n| n.to_str()) {
            Some("Makefile") => "Makefile",
            Some("Dockerfile") => "Dockerfile",
            _ => "Other",
        },
        _ => "Other",
    }
}
