use std::collections::HashSet;

use super::shared::{SessionTasks, new_id};
use super::*;

#[test]
fn ids_are_random_hex_and_never_taken() {
    let mut seen = HashSet::new();
    for _ in 0..1000 {
        let id = new_id(|id| seen.contains(id));
        let hex = id.strip_prefix("t-").expect("t- prefix");
        assert_eq!(hex.len(), 16, "{id}");
        assert!(hex.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert!(seen.insert(id.to_string()), "{id} drawn twice");
    }
    // A taken id is drawn again.
    let asked = std::cell::Cell::new(0);
    let other = new_id(|_| {
        asked.set(asked.get() + 1);
        asked.get() == 1
    });
    assert_eq!(asked.get(), 2, "the taken draw was redrawn");
    assert!(other.starts_with("t-"));
}

#[test]
fn a_session_cap_counts_places_across_its_boards() {
    let cap = SessionTasks::new(2);
    assert!(cap.take());
    assert!(cap.take());
    assert!(!cap.take(), "a third place");
    cap.give_back();
    assert!(cap.take());
    assert!(!SessionTasks::new(0).take(), "0 runs none");
}

#[test]
fn refusals_name_what_would_allow_the_task() {
    let too_many = TaskError::TooMany {
        plugin: "p".into(),
        limit: 4,
    }
    .to_string();
    assert!(
        too_many.contains("already runs 4 background tasks"),
        "{too_many}"
    );
    assert!(too_many.contains("max-tasks"), "{too_many}");
    let off = TaskError::TooMany {
        plugin: "p".into(),
        limit: 0,
    }
    .to_string();
    assert!(off.contains("may run no background tasks"), "{off}");
    let one = TaskError::TooMany {
        plugin: "p".into(),
        limit: 1,
    }
    .to_string();
    assert!(one.contains("already runs 1 background task,"), "{one}");
    let nested = TaskError::FromTask.to_string();
    assert!(nested.contains("from a tool or command call"), "{nested}");
    assert!(is_running(&TaskState::Running(None)));
    assert!(!is_running(&TaskState::Cancelled));
}
