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
    let mut commands: HashMap<String, (&str, bool)> = HashMap::new();
    for command in &handshake.commands {
        let names = std::iter::once((&command.name, true))
            .chain(command.aliases.iter().map(|a| (a, false)));
        for (name, is_name) in names {
            let key = name.to_lowercase();
            match commands.get(&key) {
                None => {
                    commands.insert(key, (&command.name, is_name));
                }
                Some(&(owner, _)) if owner == command.name => problems.push(format!(
                    "command '{}' lists '{name}' twice among its name and aliases (they match without regard to case); remove one",
                    command.name
                )),
                Some(&(owner, true)) => problems.push(format!(
                    "{} '{name}' of command '{}' is the name of command '{owner}' (names match without regard to case); rename one",
                    if is_name { "the name" } else { "alias" },
                    command.name
                )),
                Some(&(owner, _)) => problems.push(format!(
                    "{} '{name}' of command '{}' is also an alias of command '{owner}' (names match without regard to case); rename one",
                    if is_name { "the name" } else { "alias" },
                    command.name
                )),
            }
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
