//! afl-fuzz harness of the `pack` target: see [`lingxi_wasm_fuzz::pack`].

fn main() {
    afl::fuzz!(|data: &[u8]| lingxi_wasm_fuzz::pack(data));
}
