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
fn output_budget_trips_past_its_limit_and_resets() {
    let budget = OutputBudget::new(10);
    assert!(budget.spend(6).is_ok());
    assert!(budget.spend(4).is_ok());
    assert!(budget.spend(1).is_err());
    budget.reset();
    assert!(budget.spend(10).is_ok());
}
