//! afl-fuzz harness of the `net` target: see [`lingxi_wasm_fuzz::net`].

fn main() {
    afl::fuzz!(|data: &[u8]| lingxi_wasm_fuzz::net(data));
}
