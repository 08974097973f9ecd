//! Path parameters in one call's arguments: found along their routes,
//! checked for shape, resolved, and recorded for splicing.

use serde_json::Value;

use super::annotations::{self, PathAccess};
use super::{ContractError, ResolvedPath, Roots, json, paths, schema};

/// Where `resolve_at` is: as a JSON pointer (for messages) and as steps
/// (for splicing).
#[derive(Default)]
pub(super) struct SchemaPosition {
    pointer: String,
    segs: Vec<json::Seg>,
}

/// The path parameters resolved so far, and where their new values go.
#[derive(Default)]
pub(super) struct ResolvedPaths {
    pub(super) paths: Vec<ResolvedPath>,
    pub(super) replaced: Vec<(Vec<json::Seg>, String)>,
}

/// Resolves every path at `route` in `value`, recording each.
pub(super) fn resolve_at(
    value: &mut Value,
    route: &[annotations::Step],
    access: PathAccess,
    roots: &Roots,
    at: &mut SchemaPosition,
    found: &mut ResolvedPaths,
) -> Result<(), ContractError> {
    // A value of another shape than the schema says is refused even when
    // validation is off: a path must never slip through unresolved.
    let kind = crate::protocol::wire::kind(value);
    let misshapen = |what: &str, pointer: &str| ContractError::Path {
        parameter: if pointer.is_empty() {
            "(the arguments)".to_owned()
        } else {
            schema::quoted(pointer, crate::limits::MAX_QUOTED_CONTRACT)
        },
        given: kind.to_owned(),
        rule: format!("is not {what}; a path parameter must be given as one"),
    };
    let Some((step, rest)) = route.split_first() else {
        let given = match value {
            Value::Null => return Ok(()),
            Value::String(given) => given,
            _ => return Err(misshapen("a string", &at.pointer)),
        };
        if given.is_empty() {
            return Ok(());
        }
        let resolved =
            paths::resolve(given, access, roots).map_err(|rule| ContractError::Path {
                parameter: schema::quoted(&at.pointer, crate::limits::MAX_QUOTED_CONTRACT),
                given: schema::quoted(given, crate::limits::MAX_QUOTED_CONTRACT),
                rule,
            })?;
        found.replaced.push((at.segs.clone(), resolved.clone()));
        found.paths.push(ResolvedPath {
            parameter: at.pointer.clone(),
            access,
            given: std::mem::replace(given, resolved.clone()),
            resolved,
        });
        return Ok(());
    };
    let len = at.pointer.len();
    match (step, value) {
        (annotations::Step::Key(key), Value::Object(map)) => {
            if let Some(child) = map.get_mut(key) {
                at.pointer.push('/');
                at.pointer
                    .push_str(&key.replace('~', "~0").replace('/', "~1"));
                at.segs.push(json::Seg::Key(key.clone()));
                resolve_at(child, rest, access, roots, at, found)?;
                at.segs.pop();
            }
        }
        (annotations::Step::Each, Value::Array(items)) => {
            for (i, item) in items.iter_mut().enumerate() {
                at.pointer.truncate(len);
                at.pointer.push_str(&format!("/{i}"));
                at.segs.push(json::Seg::Index(i));
                resolve_at(item, rest, access, roots, at, found)?;
                at.segs.pop();
            }
        }
        (_, Value::Null) => {}
        (annotations::Step::Key(_), _) => return Err(misshapen("an object", &at.pointer)),
        (annotations::Step::Each, _) => return Err(misshapen("an array", &at.pointer)),
    }
    at.pointer.truncate(len);
    Ok(())
}
