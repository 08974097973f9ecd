//! The environment and stdin of the plugin.

use super::{Tree, allowed, attempt, start};

#[test]
fn env_variables_of_the_launcher_are_invisible() {
    let t = Tree::new();
    assert_eq!(allowed(&attempt(&mut start(&t, &[]), "env", "")), "");
}

#[test]
fn env_only_explicitly_passed_keys_are_visible() {
    let t = Tree::new();
    let mut s = start(&t, &["--env", "MODE=fast"]);
    assert_eq!(allowed(&attempt(&mut s, "env", "")), "MODE=fast");
}

#[test]
fn stdin_of_the_plugin_is_not_the_protocol_channel() {
    let t = Tree::new();
    assert_eq!(
        allowed(&attempt(&mut start(&t, &[]), "read-stdin", "")),
        "stdin:"
    );
}
