//! `testbed` as a native JSON-Lines executable (feature `native`): the same
//! plugin without the sandbox, the baseline for benchmarks.

fn main() -> std::io::Result<()> {
    lingxi_plugin_sdk::native::serve::<testbed::Testbed>()
}
