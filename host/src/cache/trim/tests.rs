use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{Trimmed, Usage, touch, trim};

/// A file of `len` bytes whose modification time is `age_secs` ago.
fn file(path: &Path, len: usize, age_secs: u64) {
    std::fs::write(path, vec![0u8; len]).unwrap();
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
        .unwrap();
}

fn function(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

#[test]
fn under_the_bound_nothing_goes() {
    let dir = tempfile::tempdir().unwrap();
    file(&dir.path().join("ab-cd.cwasm"), 400, 100);
    let done = trim(dir.path(), &Usage::default(), 1000);
    assert_eq!(
        done,
        Trimmed {
            held: 400,
            files: 0,
            bytes: 0
        }
    );
    assert!(dir.path().join("ab-cd.cwasm").exists());
}

#[test]
fn over_the_bound_the_least_recently_used_go_until_three_quarters() {
    let dir = tempfile::tempdir().unwrap();
    let functions = dir.path().join("functions");
    std::fs::create_dir(&functions).unwrap();
    // Oldest first: a component, three functions, a newer component.
    file(&dir.path().join("01-aa.cwasm"), 300, 500);
    file(&functions.join(function(1)), 200, 400);
    file(&functions.join(function(2)), 200, 300);
    file(&functions.join(function(3)), 200, 200);
    file(&dir.path().join("02-aa.cwasm"), 300, 100);
    // 1200 bytes against a bound of 1000: down to 750 or less.
    let done = trim(dir.path(), &Usage::default(), 1000);
    assert_eq!(
        done,
        Trimmed {
            held: 1200,
            files: 2,
            bytes: 500
        }
    );
    assert!(!dir.path().join("01-aa.cwasm").exists());
    assert!(!functions.join(function(1)).exists());
    assert!(functions.join(function(2)).exists());
    assert!(functions.join(function(3)).exists());
    assert!(dir.path().join("02-aa.cwasm").exists());
}

#[test]
fn what_this_process_used_or_wrote_stays_however_old() {
    let dir = tempfile::tempdir().unwrap();
    let functions = dir.path().join("functions");
    std::fs::create_dir(&functions).unwrap();
    file(&functions.join(function(1)), 600, 900);
    file(&dir.path().join("01-aa.cwasm"), 600, 800);
    file(&dir.path().join("02-aa.cwasm"), 600, 10);
    let usage = Usage::default();
    usage.used(&functions.join(function(1)));
    usage.wrote(&dir.path().join("01-aa.cwasm"), 600);
    let done = trim(dir.path(), &usage, 1000);
    assert_eq!((done.files, done.bytes), (1, 600));
    assert!(functions.join(function(1)).exists());
    assert!(dir.path().join("01-aa.cwasm").exists());
    assert!(!dir.path().join("02-aa.cwasm").exists());
}

#[test]
fn only_the_caches_own_files_are_counted_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let functions = dir.path().join("functions");
    std::fs::create_dir(&functions).unwrap();
    for name in ["notes.txt", "ab.cwasm.bak", "x.cwasm", "-"] {
        file(&dir.path().join(name), 5000, 900);
    }
    file(&functions.join("not-a-digest"), 5000, 900);
    std::fs::create_dir(dir.path().join("ab.cwasm")).unwrap();
    file(&dir.path().join("ab-cd.cwasm"), 10, 900);
    let done = trim(dir.path(), &Usage::default(), 5);
    assert_eq!(
        done,
        Trimmed {
            held: 10,
            files: 1,
            bytes: 10
        }
    );
    for name in ["notes.txt", "ab.cwasm.bak", "x.cwasm", "-", "ab.cwasm"] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
    assert!(functions.join("not-a-digest").exists());
}

#[test]
fn an_interrupted_writes_file_goes_once_an_hour_old() {
    let dir = tempfile::tempdir().unwrap();
    file(&dir.path().join(".tmpOLD123"), 50, 7200);
    file(&dir.path().join(".tmpNEW456"), 50, 60);
    let done = trim(dir.path(), &Usage::default(), 1 << 20);
    assert_eq!((done.files, done.bytes), (1, 50));
    assert!(!dir.path().join(".tmpOLD123").exists());
    assert!(dir.path().join(".tmpNEW456").exists());
}

/// An entry that is a link goes as a link: what it points to stays.
#[cfg(unix)]
#[test]
fn a_link_is_removed_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("precious");
    file(&target, 4000, 900);
    std::os::unix::fs::symlink(&target, dir.path().join("ab-cd.cwasm")).unwrap();
    trim(dir.path(), &Usage::default(), 0);
    assert!(!dir.path().join("ab-cd.cwasm").exists());
    assert_eq!(std::fs::read(&target).unwrap().len(), 4000);
}

/// A `functions` folder that is a link is not the cache's: nothing in the
/// folder it points to is counted or removed.
#[cfg(unix)]
#[test]
fn a_functions_folder_that_is_a_link_is_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let precious = outside.path().join(function(1));
    file(&precious, 4000, 900);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("functions")).unwrap();
    let done = trim(dir.path(), &Usage::default(), 0);
    assert_eq!(done, Trimmed::default());
    assert!(precious.exists());
}

/// A load renews a file's time only when it is not recent already.
#[test]
fn touch_renews_an_old_file_and_leaves_a_recent_one() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.cwasm");
    file(&old, 10, 7 * 86_400);
    touch(&old);
    let age = |path: &Path| {
        SystemTime::now()
            .duration_since(std::fs::metadata(path).unwrap().modified().unwrap())
            .unwrap_or_default()
    };
    assert!(age(&old) < Duration::from_secs(60));
    let recent = dir.path().join("recent.cwasm");
    file(&recent, 10, 600);
    touch(&recent);
    assert!(age(&recent) >= Duration::from_secs(590));
}
