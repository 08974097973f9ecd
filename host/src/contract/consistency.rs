//! Whether a handshake is consistent, as LingXi resolves names: tool names
//! unique, command names and aliases unique without regard to case (and no
//! alias naming another command), IPC version 1, hooks listed once each in
//! ascending order (spec §5).

use std::collections::HashMap;

use super::{Problem, ProblemKind, Severity};
use crate::bindings::lingxi::plugin::types as wit;

/// Every inconsistency of `handshake`, each with what to fix.
pub(crate) fn problems(handshake: &wit::Handshake) -> Vec<Problem> {
    let mut problems: Vec<String> = Vec::new();
    if handshake.ipc_version != 1 {
        problems.push(format!(
            "ipcVersion is {}; LingXi speaks IPC version 1 only: report 1 (build with a current SDK)",
            handshake.ipc_version
        ));
    }
    let mut tools = HashMap::new();
    for tool in &handshake.tools {
        let seen = tools.entry(tool.name.as_str()).or_insert(0usize);
        *seen += 1;
        if *seen == 2 {
            problems.push(format!(
                "tool '{}' is registered more than once; give each tool its own name",
                tool.name
            ));
        }
    }
    // Lower-cased name or alias → (the command that has it, whether it is its name).
    let mut commands: HashMap<String, (usize, bool)> = HashMap::new();
    for (index, command) in handshake.commands.iter().enumerate() {
        let names = std::iter::once((&command.name, true))
            .chain(command.aliases.iter().map(|a| (a, false)));
        for (name, is_name) in names {
            let Some(&(owner, owner_is_name)) = commands.get(&name.to_lowercase()) else {
                commands.insert(name.to_lowercase(), (index, is_name));
                continue;
            };
            let other = &handshake.commands[owner].name;
            let this = &command.name;
            problems.push(match (owner == index, is_name, owner_is_name) {
                (true, _, _) => format!(
                    "command '{this}' lists '{name}' twice among its name and aliases (they match without regard to case); remove one"
                ),
                (false, true, true) => format!(
                    "command '{name}' is registered more than once (names match without regard to case); give each command its own name"
                ),
                (false, false, true) => format!(
                    "alias '{name}' of command '{this}' is the name of command '{other}' (names match without regard to case); rename one"
                ),
                (false, true, false) => format!(
                    "command '{name}' has the name of an alias of command '{other}' (names match without regard to case); rename one"
                ),
                (false, false, false) => format!(
                    "alias '{name}' of command '{this}' is also an alias of command '{other}' (names match without regard to case); rename one"
                ),
            });
        }
    }
    let hooks = &handshake.supported_hooks;
    for (i, hook) in hooks.iter().enumerate() {
        if hooks[..i].contains(hook) {
            problems.push(format!(
                "supportedHooks lists {} more than once; list each event once",
                hook.wire_name()
            ));
        }
    }
    let names: Vec<&str> = hooks.iter().map(|h| h.wire_name()).collect();
    let mut problems: Vec<Problem> = problems.into_iter().map(Problem::handshake).collect();
    if names.windows(2).any(|w| w[0] > w[1]) {
        problems.push(Problem {
            severity: Severity::Warning,
            kind: ProblemKind::Handshake,
            tool: None,
            message: format!(
                "supportedHooks is not sorted ascending ({}); the protocol lists them sorted",
                names.join(", ")
            ),
        });
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshake(commands: &[(&str, &[&str])]) -> wit::Handshake {
        crate::contract::tests::handshake_of(&[], commands)
    }

    #[test]
    fn every_way_command_names_collide_is_told_apart() {
        type Commands<'a> = &'a [(&'a str, &'a [&'a str])];
        let cases: [(Commands, &str); 5] = [
            (&[("run", &["Run"])], "command 'run' lists 'Run' twice"),
            (
                &[("run", &[]), ("RUN", &[])],
                "command 'RUN' is registered more than once",
            ),
            (
                &[("run", &[]), ("stop", &["run"])],
                "alias 'run' of command 'stop' is the name of command 'run'",
            ),
            (
                &[("run", &["go"]), ("go", &[])],
                "command 'go' has the name of an alias of command 'run'",
            ),
            (
                &[("run", &["go"]), ("walk", &["GO"])],
                "alias 'GO' of command 'walk' is also an alias of command 'run'",
            ),
        ];
        for (commands, expected) in cases {
            let found = problems(&handshake(commands));
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].message.starts_with(expected),
                "{}",
                found[0].message
            );
        }
        assert!(problems(&handshake(&[("run", &["go"]), ("stop", &[])])).is_empty());
    }
}
