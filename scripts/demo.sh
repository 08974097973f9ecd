#!/usr/bin/env bash
# Builds the quickstart plugin as a WebAssembly component, starts it under
# lingxi-wasm-run, and drives it through a short scripted exchange the way
# LingXi does (doc dialect, so the JSON stays readable). Every request is
# printed with '>' and every response with '<'; the launcher's log (stderr)
# shows what the plugin logged.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

# One line per phase, with how long it took: the first build compiles
# wasmtime (the figures are measured on the 2-core development VM, see the
# README's Quick start).
phase() {
  echo "== $1" >&2
  phase_start=$SECONDS
}
done_in() { echo "   done in $((SECONDS - phase_start)) s" >&2; }

phase "building lingxi-wasm-run (debug; from a cold clone ~4 min on 2 cores, then seconds)"
cargo build -p lingxi-wasm-run
done_in
phase "building the quickstart component (from a cold clone ~20 s)"
cargo build --profile guest --target wasm32-wasip2 -p quickstart --target-dir target/guests
done_in
component=target/guests/wasm32-wasip2/guest/quickstart.wasm
launcher=target/debug/lingxi-wasm-run
ls -l "$component" >&2

workspace=$(pwd)
branch=$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo main)
requests=(
  '{"id":"1","method":"host.snapshot","params":{"observedAt":"2027-01-15T08:00:00Z","ipcVersion":1,"workspace":{"rootPath":"'"$workspace"'","isGitRepository":true,"currentGitBranch":"'"$branch"'","coreVersion":"1.1.0"}}}'
  '{"id":"2","method":"plugin.initialize","params":{"hostIPCVersion":1,"coreVersion":"1.1.0"}}'
  '{"id":"3","method":"hook.emit","params":{"event":"sessionStart","subjectID":"sess-1","metadata":{"sessionID":"sess-1"}}}'
  '{"id":"4","method":"tool.execute","params":{"toolName":"echo","arguments":"{\"text\":\"hello from the sandbox\"}","sessionID":"sess-1","toolCallID":"call-1"}}'
  '{"id":"5","method":"command.execute","params":{"commandName":"status","arguments":[],"sessionID":"sess-1"}}'
  '{"id":"6","method":"tool.call"}'
)

echo "== talking JSONL to: $launcher $component" >&2
coproc LAUNCHER { "$launcher" "$component"; }
for request in "${requests[@]}"; do
  echo "> $request"
  echo "$request" >&"${LAUNCHER[1]}"
  IFS= read -r response <&"${LAUNCHER[0]}"
  echo "< $response"
done
exec {LAUNCHER[1]}>&-   # EOF: the plugin is deactivated and the launcher exits
wait "$LAUNCHER_PID"
echo "== launcher exited with status $?" >&2
