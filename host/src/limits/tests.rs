use super::*;

#[test]
fn default_deadline_is_under_the_host_watchdog() {
    let limits = Limits::default();
    assert!(limits.call_timeout < HOST_WATCHDOG);
}

#[test]
fn error_texts_are_capped_on_a_char_boundary() {
    assert_eq!(cap_text("abc".into(), 3), "abc");
    let cut = cap_text("ééé".into(), 3);
    assert!(
        cut.starts_with("é… [the plugin's text was 6 bytes"),
        "{cut}"
    );
}

#[test]
fn memory_growth_past_the_cap_is_a_typed_error() {
    use wasmtime::ResourceLimiter;
    let mut cap = MemoryCap::new(100);
    assert!(cap.memory_growing(0, 100, None).unwrap());
    let error = cap.memory_growing(0, 101, None).unwrap_err();
    assert_eq!(
        error.downcast_ref::<MemoryLimit>().map(|m| m.limit),
        Some(100)
    );
}

#[test]
fn output_budget_trips_past_its_limit_and_resets() {
    let budget = OutputBudget::new(10);
    assert!(budget.spend(6).is_ok());
    assert!(budget.spend(4).is_ok());
    assert!(budget.spend(1).is_err());
    budget.reset();
    assert!(budget.spend(10).is_ok());
}

#[test]
fn memories_and_tables_share_one_cap() {
    use wasmtime::ResourceLimiter;
    let mut cap = MemoryCap::new(1000);
    // Two memories of 400 bytes fit; a third does not.
    assert!(cap.memory_growing(0, 400, None).unwrap());
    assert!(cap.memory_growing(0, 400, None).unwrap());
    assert!(cap.memory_growing(0, 400, None).is_err());
    // Nor does a table of 13 elements (208 bytes) in the 200 left.
    assert!(cap.table_growing(0, 13, None).is_err());
    assert!(cap.table_growing(0, 12, None).unwrap());
}
