//! afl-fuzz harness of the `request` target: see [`lingxi_wasm_fuzz::request`].

fn main() {
    afl::fuzz!(|data: &[u8]| lingxi_wasm_fuzz::request(data));
}
