//! Tools that attack the sandbox. Each takes its target in the arguments
//! text, so the tests choose paths, addresses and sizes.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::Mutex;

use lingxi_plugin_sdk::{PluginError, PluginResult};

type ToolFn = fn(&str) -> PluginResult<String>;

/// (name, function) of every attack tool.
pub const TOOLS: [(&str, ToolFn); 38] = [
    ("listen", listen),
    ("print-escapes", print_escapes),
    ("fill-then-panic", fill_then_panic),
    ("sleep", sleep),
    ("poll-far", poll_far),
    ("log-tiny", log_tiny),
    ("print-empty-lines", print_empty_lines),
    ("fail-big", fail_big),
    ("kv-set", kv_set),
    ("kv-get", kv_get),
    ("kv-keys", |_| Ok(storage().keys()?.join(","))),
    ("fill-data", fill_data),
    ("hold-open", hold_open),
    ("write-held", write_held),
    ("touch-many", touch_many),
    ("len", |args| Ok(args.len().to_string())),
    ("mem-append", mem_append),
    ("sleep-ms", |args| {
        let ms: u64 = number(args, "sleep-ms")?;
        std::thread::sleep(std::time::Duration::from_millis(ms));
        Ok(format!("slept {ms} ms"))
    }),
    ("mem-get", |_| Ok(memory().clone())),
    ("read-file", read_file),
    ("getenv", |name| {
        std::env::var(name).map_err(|e| fail(name, e))
    }),
    ("write-file", write_file),
    ("list-dir", list_dir),
    ("refuse-many", refuse_many),
    ("hard-link", hard_link),
    ("rename", rename),
    ("tcp", tcp),
    ("dns", dns),
    ("udp", udp),
    ("spin", spin),
    ("alloc-mib", alloc_mib),
    ("recurse", recurse),
    ("big-result", big_result),
    ("log-flood", log_flood),
    ("panic", |_| panic!("deliberate panic")),
    ("abort", |_| std::process::abort()),
    ("unreachable", |_| unreachable_trap()),
    ("exit", |_| std::process::exit(3)),
];

fn fail(what: &str, e: impl std::fmt::Display) -> PluginError {
    PluginError::new(format!("{what}: {e}"))
}

/// The arguments of tool `tool`, read as a number.
fn number<N: std::str::FromStr<Err = std::num::ParseIntError>>(
    args: &str,
    tool: &str,
) -> PluginResult<N> {
    args.trim()
        .parse()
        .map_err(|e| fail(&format!("{tool} takes a number"), e))
}

fn read_file(path: &str) -> PluginResult<String> {
    std::fs::read_to_string(path).map_err(|e| fail(path, e))
}

/// `path` — writes "written by plugin" there.
fn write_file(path: &str) -> PluginResult<String> {
    std::fs::write(path, "written by plugin").map_err(|e| fail(path, e))?;
    Ok("written".into())
}

/// `n` — reads /etc/passwd `n` times (each refused), then fails.
fn refuse_many(args: &str) -> PluginResult<String> {
    let n: u32 = number(args, "refuse-many")?;
    let mut last = String::new();
    for _ in 0..n {
        if let Err(e) = std::fs::read("/etc/passwd") {
            last = e.to_string();
        }
    }
    Err(PluginError::new(format!("/etc/passwd: {last}")))
}

fn list_dir(path: &str) -> PluginResult<String> {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .map_err(|e| fail(path, e))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    Ok(names.join(","))
}

/// `from\nto` — hard-links `from` to `to`.
fn hard_link(args: &str) -> PluginResult<String> {
    let (from, to) = args
        .split_once('\n')
        .ok_or_else(|| PluginError::new("from\\nto"))?;
    std::fs::hard_link(from, to).map_err(|e| fail(args, e))?;
    Ok("linked".into())
}

/// `from\nto` — renames `from` to `to`.
fn rename(args: &str) -> PluginResult<String> {
    let (from, to) = args
        .split_once('\n')
        .ok_or_else(|| PluginError::new("from\\nto"))?;
    std::fs::rename(from, to).map_err(|e| fail(args, e))?;
    Ok("renamed".into())
}

/// `host:port` — connects, sends `ping\n`, returns the reply line.
fn tcp(addr: &str) -> PluginResult<String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| fail(addr, e))?;
    stream.write_all(b"ping\n").map_err(|e| fail(addr, e))?;
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .map_err(|e| fail(addr, e))?;
    Ok(line.trim_end().to_owned())
}

/// `name` — resolves it.
fn dns(name: &str) -> PluginResult<String> {
    let addrs = (name, 0).to_socket_addrs().map_err(|e| fail(name, e))?;
    Ok(addrs
        .map(|a| a.ip().to_string())
        .collect::<Vec<_>>()
        .join(","))
}

/// `host:port` — sends one datagram.
fn udp(addr: &str) -> PluginResult<String> {
    let socket = UdpSocket::bind("0.0.0.0:0").map_err(|e| fail("bind", e))?;
    socket.send_to(b"ping", addr).map_err(|e| fail(addr, e))?;
    Ok("sent".into())
}

fn spin(_: &str) -> PluginResult<String> {
    #[allow(clippy::empty_loop)]
    loop {}
}

/// `n` — allocates and touches n MiB.
fn alloc_mib(args: &str) -> PluginResult<String> {
    let mib: usize = number(args, "alloc-mib")?;
    let block = vec![1u8; mib * 1024 * 1024];
    let total: usize = block.iter().map(|b| usize::from(*b)).sum();
    Ok(format!("allocated {} MiB", total >> 20))
}

/// Recurses until the stack overflows.
fn recurse(args: &str) -> PluginResult<String> {
    #[inline(never)]
    #[allow(unconditional_recursion)]
    fn deeper(n: u64, pad: &mut [u8; 256]) -> u64 {
        pad[(n % 256) as usize] = n as u8;
        let mut next = [0u8; 256];
        next.copy_from_slice(pad);
        deeper(n + 1, &mut next) + u64::from(next[0])
    }
    let mut pad = [0u8; 256];
    Ok(format!("{}{}", args, deeper(0, &mut pad)))
}

/// `n` — returns n MiB of text.
fn big_result(args: &str) -> PluginResult<String> {
    let mib: usize = number(args, "big-result")?;
    Ok("x".repeat(mib * 1024 * 1024))
}

/// `n` — writes n log lines of 1 KiB.
fn log_flood(args: &str) -> PluginResult<String> {
    let n: usize = number(args, "log-flood")?;
    let logger = lingxi_plugin_sdk::Logger::default();
    let line = "y".repeat(1024);
    for _ in 0..n {
        logger.info(&line);
    }
    Ok(format!("logged {n}"))
}

/// `n` — sleeps n seconds (`std::thread::sleep`: a WASI clock pollable).
fn sleep(args: &str) -> PluginResult<String> {
    let secs: u64 = number(args, "sleep")?;
    std::thread::sleep(std::time::Duration::from_secs(secs));
    Ok(format!("slept {secs} s"))
}

/// Polls a `wasi:clocks` pollable for an instant at the end of time.
fn poll_far(_: &str) -> PluginResult<String> {
    #[cfg(target_arch = "wasm32")]
    {
        let pollable = wasip2::clocks::monotonic_clock::subscribe_instant(u64::MAX);
        let ready = wasip2::io::poll::poll(&[&pollable]);
        Ok(format!("poll returned {ready:?}"))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        loop {
            std::thread::park();
        }
    }
}

/// `n` — writes n log lines of one byte each.
fn log_tiny(args: &str) -> PluginResult<String> {
    let n: usize = number(args, "log-tiny")?;
    let logger = lingxi_plugin_sdk::Logger::default();
    for _ in 0..n {
        logger.info("y");
    }
    Ok(format!("logged {n}"))
}

/// `n` — prints n empty lines to stdout, in writes of 64 KiB.
fn print_empty_lines(args: &str) -> PluginResult<String> {
    let n: usize = number(args, "print-empty-lines")?;
    let block = vec![b'\n'; 64 * 1024];
    let mut out = std::io::stdout();
    let mut left = n;
    while left > 0 {
        let chunk = left.min(block.len());
        out.write_all(&block[..chunk])?;
        left -= chunk;
    }
    out.flush()?;
    Ok(format!("printed {n}"))
}

/// Listens on an ephemeral port (a server, which a plugin may not be).
fn listen(_: &str) -> PluginResult<String> {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").map_err(|e| fail("listen", e))?;
    Ok(format!("listening on {}", listener.local_addr()?))
}

/// `n` — writes n escape bytes (0x1b) to stderr, 1000 to a line.
fn print_escapes(args: &str) -> PluginResult<String> {
    let n: usize = number(args, "print-escapes")?;
    let mut line = vec![0x1b; 1000];
    line.push(b'\n');
    let mut err = std::io::stderr();
    for _ in 0..n / 1000 {
        err.write_all(&line)?;
    }
    Ok(format!("printed {n}"))
}

/// `n` — fails with an error text of n MiB.
fn fail_big(args: &str) -> PluginResult<String> {
    let mib: usize = number(args, "fail-big")?;
    Err(PluginError::new("e".repeat(mib * 1024 * 1024)))
}

fn unreachable_trap() -> PluginResult<String> {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    unreachable!()
}

fn storage() -> lingxi_plugin_sdk::Storage {
    lingxi_plugin_sdk::Storage::default()
}

/// `key=value` — stores value under key.
fn kv_set(args: &str) -> PluginResult<String> {
    let (key, value) = args
        .split_once('=')
        .ok_or_else(|| PluginError::new("key=value"))?;
    storage().set(key, value)?;
    Ok("stored".into())
}

fn kv_get(key: &str) -> PluginResult<String> {
    Ok(storage()
        .get_string(key)?
        .unwrap_or_else(|| "<none>".into()))
}

/// `n` — writes an n MiB raw file into the data directory.
fn fill_data(args: &str) -> PluginResult<String> {
    let mib: usize = number(args, "fill-data")?;
    let path = storage().dir()?.join("blob.bin");
    std::fs::write(&path, vec![7u8; mib * 1024 * 1024]).map_err(|e| fail("fill-data", e))?;
    Ok(format!("wrote {mib} MiB"))
}

/// `n` — tries to write n MiB into the data directory, then crashes.
fn fill_then_panic(args: &str) -> PluginResult<String> {
    let _ = fill_data(args);
    panic!("crashing after filling the data directory")
}

/// A file kept open across calls by `hold-open`.
static HELD: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Opens `held.bin` in the data directory for appending and keeps it open
/// (writing nothing) so that a later call can write through it.
fn hold_open(_: &str) -> PluginResult<String> {
    let path = storage().dir()?.join("held.bin");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| fail("hold-open", e))?;
    // One byte now, so the stream exists; the bulk comes in a later call.
    file.write_all(b"h").map_err(|e| fail("hold-open", e))?;
    *HELD.lock().map_err(|e| fail("hold-open", e))? = Some(file);
    Ok("held".into())
}

/// `n` — writes n MiB through the file `hold-open` kept open.
fn write_held(args: &str) -> PluginResult<String> {
    let mib: usize = number(args, "write-held")?;
    let mut held = HELD.lock().map_err(|e| fail("write-held", e))?;
    let file = held
        .as_mut()
        .ok_or_else(|| PluginError::new("write-held: call hold-open first"))?;
    file.write_all(&vec![7u8; mib * 1024 * 1024])
        .map_err(|e| fail("write-held", e))?;
    Ok(format!("wrote {mib} MiB"))
}

/// `n` — creates n empty files in the data directory.
fn touch_many(args: &str) -> PluginResult<String> {
    let n: usize = number(args, "touch-many")?;
    let dir = storage().dir()?.join("many");
    std::fs::create_dir_all(&dir).map_err(|e| fail("touch-many", e))?;
    for i in 0..n {
        std::fs::File::create(dir.join(i.to_string())).map_err(|e| fail("touch-many", e))?;
    }
    Ok(format!("created {n} files"))
}

/// Text kept in this instance's linear memory only (never on disk), for
/// the isolation tests of sessions.
fn memory() -> std::sync::MutexGuard<'static, String> {
    static MEMORY: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    MEMORY.lock().unwrap_or_else(|e| e.into_inner())
}

/// `text` — appends `text` and a comma to this instance's memory.
fn mem_append(text: &str) -> PluginResult<String> {
    let mut memory = memory();
    memory.push_str(text);
    memory.push(',');
    Ok(memory.clone())
}
