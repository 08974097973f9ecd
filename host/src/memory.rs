//! The memory cap of one instance, as wasmtime's `ResourceLimiter` (the
//! numbers are in [`limits`](crate::limits)).

use crate::limits::{MAX_STORE_ITEMS, TABLE_ELEMENT_BYTES};

/// The memory cap of one instance, enforced by the store's limiter over
/// everything the guest can grow: all its linear memories together (a
/// component may have several) and its tables (charged [`TABLE_ELEMENT_BYTES`]
/// per element). Growing past it traps with [`MemoryLimit`], a typed error
/// the host classifies (never by matching message text).
pub(crate) struct MemoryCap {
    limit: usize,
    /// Bytes of memories and tables granted so far (they never shrink).
    used: usize,
}

/// A plugin tried to grow its memory past [`Limits::max_memory_bytes`].
#[derive(Debug, thiserror::Error)]
#[error(
    "the plugin tried to grow its memory and tables to {desired} bytes in all, past the limit of {limit}"
)]
pub struct MemoryLimit {
    /// The total size asked for.
    pub desired: usize,
    /// The limit in force.
    pub limit: usize,
}

impl MemoryCap {
    /// A cap of `limit` bytes of memories and tables together.
    pub(crate) fn new(limit: usize) -> Self {
        MemoryCap { limit, used: 0 }
    }

    /// Bytes of memories and tables granted so far.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// Charges growing from `current` to `desired` units of `unit` bytes.
    fn grow(&mut self, current: usize, desired: usize, unit: usize) -> wasmtime::Result<bool> {
        let more = desired.saturating_sub(current).saturating_mul(unit);
        let total = self.used.saturating_add(more);
        if total > self.limit {
            return Err(MemoryLimit {
                desired: total,
                limit: self.limit,
            }
            .into());
        }
        self.used = total;
        Ok(true)
    }
}

impl wasmtime::ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.grow(current, desired, 1)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.grow(current, desired, TABLE_ELEMENT_BYTES)
    }

    fn instances(&self) -> usize {
        MAX_STORE_ITEMS
    }

    fn tables(&self) -> usize {
        MAX_STORE_ITEMS
    }

    fn memories(&self) -> usize {
        MAX_STORE_ITEMS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
