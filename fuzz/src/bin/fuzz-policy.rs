//! afl-fuzz harness of the `policy` target: see [`lingxi_wasm_fuzz::policy`].

fn main() {
    afl::fuzz!(|data: &[u8]| lingxi_wasm_fuzz::policy(data));
}
