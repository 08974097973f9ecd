//! The tools the side-by-side bench calls, written as an Extism plug-in:
//! the same work as the probe's `probe.echo` and the testbed's `spin`,
//! `alloc-mib` and `sleep-ms`, so that both hosts run the same guest code;
//! and a call that blocks in a host function of the bench's.

use extism_pdk::{FnResult, host_fn, plugin_fn};

#[host_fn]
extern "ExtismHost" {
    /// Blocks in the host for the milliseconds given (the host's own
    /// function: a plug-in on wasm32-unknown-unknown has no clock).
    fn sleep_ms(ms: String) -> String;
}

/// `echo`: answers `echo:<arguments>`, as `probe.echo` does.
#[plugin_fn]
pub fn echo(arguments: String) -> FnResult<String> {
    Ok(format!("echo:{arguments}"))
}

/// `spin`: never returns, as the testbed's `spin`.
#[plugin_fn]
pub fn spin(_: String) -> FnResult<String> {
    #[allow(clippy::empty_loop)]
    loop {}
}

/// `alloc_mib`: allocates and touches the MiB given.
#[plugin_fn]
pub fn alloc_mib(mib: String) -> FnResult<String> {
    let mib: usize = mib.trim().parse()?;
    let block = vec![1u8; mib * 1024 * 1024];
    let total: usize = block.iter().map(|b| usize::from(*b)).sum();
    Ok(format!("allocated {} MiB", total >> 20))
}

/// `wasi_sleep`: sleeps the milliseconds given through WASI's clock (built
/// for `wasm32-wasip1`, as the testbed's `sleep-ms` sleeps through
/// wasi:clocks).
#[plugin_fn]
pub fn wasi_sleep(ms: String) -> FnResult<String> {
    let ms: u64 = ms.trim().parse()?;
    std::thread::sleep(std::time::Duration::from_millis(ms));
    Ok(format!("slept {ms} ms"))
}

/// `sleep`: blocks in the host's `sleep_ms` for the milliseconds given.
#[plugin_fn]
pub fn sleep(ms: String) -> FnResult<String> {
    // SAFETY: the import is the bench host's own function, of this signature.
    Ok(unsafe { sleep_ms(ms) }?)
}
