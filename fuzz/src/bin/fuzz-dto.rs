//! afl-fuzz harness of the `dto` target: see [`lingxi_wasm_fuzz::dto`].

fn main() {
    afl::fuzz!(|data: &[u8]| lingxi_wasm_fuzz::dto(data));
}
