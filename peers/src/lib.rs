//! Nothing: this package holds the bench that measures the project beside
//! its peers (`benches/extism`: `cargo bench -p lingxi-wasm-peers`).
