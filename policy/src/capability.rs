//! The capabilities a plugin declares and a user grants, by their wire
//! names (`projectRead`, …): the policy's own type, engine-free. The host
//! converts the WIT world's `capability` enum to and from it at its edge.

use std::fmt;

/// One capability of the LingXi plugin protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// Read the project's files (the workspace root, read-only).
    ProjectRead,
    /// Read and write the project's files.
    ProjectWrite,
    /// Start processes: never effective, WASI has no process API.
    ProcessExecution,
    /// Reach the network (each destination still needs an allow rule).
    NetworkAccess,
}

impl Capability {
    /// Every capability, in wire order.
    pub const ALL: [Capability; 4] = [
        Capability::ProjectRead,
        Capability::ProjectWrite,
        Capability::ProcessExecution,
        Capability::NetworkAccess,
    ];

    /// The wire name, e.g. `projectRead`.
    pub fn wire_name(self) -> &'static str {
        match self {
            Capability::ProjectRead => "projectRead",
            Capability::ProjectWrite => "projectWrite",
            Capability::ProcessExecution => "processExecution",
            Capability::NetworkAccess => "networkAccess",
        }
    }

    /// Parses a wire name.
    pub fn from_wire(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.wire_name() == name)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for c in Capability::ALL {
            assert_eq!(Capability::from_wire(c.wire_name()), Some(c));
        }
        assert_eq!(Capability::from_wire("ProjectRead"), None);
    }
}
