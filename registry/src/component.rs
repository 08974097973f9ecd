//! What a component's artifact says of it without an engine: whether bytes
//! are a component at all, and the names it imports and exports at its top
//! level (the Wasm config's `component` field, which wkg shows).

use wasmparser::{Parser, Payload};

use crate::layout::ComponentWorld;

/// The preamble of a WebAssembly component (magic, version 0x0d, layer 1).
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// Whether `bytes` start as a component does (a core module, or anything
/// else, does not).
pub fn looks_like_component(bytes: &[u8]) -> bool {
    bytes.starts_with(&COMPONENT_PREAMBLE)
}

/// The top-level imports and exports of the component `bytes`.
pub fn world_of(bytes: &[u8]) -> Result<ComponentWorld, String> {
    if !looks_like_component(bytes) {
        return Err("it is not a WebAssembly component".into());
    }
    let mut world = ComponentWorld::default();
    // Nested modules and components have sections of their own; only the
    // outermost component's count.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| format!("it is not a valid component ({e})"))?;
        match payload {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(imports) if depth == 0 => {
                for import in imports {
                    let import = import.map_err(|e| format!("its imports do not read ({e})"))?;
                    world.imports.push(import.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(exports) if depth == 0 => {
                for export in exports {
                    let export = export.map_err(|e| format!("its exports do not read ({e})"))?;
                    world.exports.push(export.name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    Ok(world)
}

#[cfg(test)]
mod tests {
    use super::{looks_like_component, world_of};

    #[test]
    fn a_core_module_or_text_is_not_a_component() {
        assert!(!looks_like_component(b"\0asm\x01\0\0\0"));
        assert!(!looks_like_component(b"hello"));
        assert!(world_of(b"\0asm\x01\0\0\0").is_err());
    }

    #[test]
    fn an_empty_component_has_no_names() {
        let world = world_of(&super::COMPONENT_PREAMBLE).unwrap();
        assert!(world.imports.is_empty() && world.exports.is_empty());
    }
}
