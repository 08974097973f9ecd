//! Not a plugin: a WASI command (it exports `wasi:cli/run`).

fn main() {
    println!("I am a command, not a plugin");
}
