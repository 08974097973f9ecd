//! Where a plugin's data directory is: its default root on the host, where
//! it appears inside the guest, and which plugin ids may name one (the
//! host's `storage` opens it and keeps its quota).

use std::path::PathBuf;

/// Where the data directory appears inside the guest.
pub const DATA_GUEST_PATH: &str = "/lingxi/data";

/// The default data root, LingXi's: `~/.lingxiagent/plugin-data` (see
/// [`crate::places::lingxi_home`]).
pub fn default_root() -> Option<PathBuf> {
    crate::places::lingxi_home().map(|home| home.join("plugin-data"))
}

/// Plugin ids that are safe as one path component: 1–64 characters of
/// `[a-z0-9.-]`, alphanumeric at both ends, no `..` and no `--`.
pub fn is_safe_id(id: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=64).contains(&id.len())
        && id.chars().all(|c| alnum(c) || c == '.' || c == '-')
        && id.starts_with(alnum)
        && id.ends_with(alnum)
        && !id.contains("..")
        && !id.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_safe_names() {
        for ok in ["com.lingxi.test-probe", "a", "x1.y-2"] {
            assert!(is_safe_id(ok), "{ok}");
        }
        for bad in [
            "",
            "..",
            "a/b",
            "A",
            "-a",
            "a.",
            "a..b",
            "a--b",
            "a b",
            &"a".repeat(65),
        ] {
            assert!(!is_safe_id(bad), "{bad}");
        }
    }
}
