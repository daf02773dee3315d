#!/usr/bin/env bash
# Builds plumb's render engines from Go modules (issue 13) into dist/engines/ (gitignored):
#
#   scripts/build-engines.sh [TARGET...]    build what is missing or stale (default: all)
#   scripts/build-engines.sh --force [TARGET...]
#
# Targets:
#   kustomize   dist/engines/kustomize.wasm + wasm_exec.js: krusty (sigs.k8s.io/kustomize/api)
#               for GOOS=js GOARCH=wasm, run on Node (worker thread) and in workerd (the
#               render Worker, wrangler.render.toml)
#   helm        dist/engines/plumb-helm: Helm v3's loader, chartutil and engine as a native
#               helper process for Node (Helm does not fit a Worker; see README)
#
# Sources: src/render/engines/<engine>/ (own go.mod/go.sum). A target is rebuilt when the hash
# of its sources, this script or `go version` differs from the one recorded beside the
# output. Concurrent builds wait on a lock. Needs Go >= 1.26 (GOTOOLCHAIN is honoured).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/src/render/engines"
OUT="${PLUMB_ENGINES_DIR:-$ROOT/dist/engines}"
ALL=(kustomize helm)

die() { echo "build-engines: $*" >&2; exit 1; }
log() { echo "build-engines: $*" >&2; }

force=""
targets=()
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    kustomize|helm) targets+=("$a") ;;
    *) die "unknown target $a (targets: ${ALL[*]})" ;;
  esac
done
((${#targets[@]})) || targets=("${ALL[@]}")

command -v go >/dev/null 2>&1 || die "go not found in PATH (Go >= 1.26 builds the Kustomize and Helm engines)"
mkdir -p "$OUT"
exec 9>"$OUT/.build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

# stamp ENGINE: what the output was built from
stamp() {
  {
    go version
    sha256sum <"${BASH_SOURCE[0]}"
    (cd "$SRC/$1" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 \
      | sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -d' ' -f1
}

# build ENGINE OUTPUT GOOS GOARCH
gobuild() {
  local engine="$1" out="$2" tmp="$2.tmp.$$" t0=$SECONDS
  log "building $engine for $3/$4 (the first build downloads Go modules)"
  # Say every 30 s that it is still going (a first build is minutes of silence otherwise).
  (while sleep 30; do log "still building $engine ($((SECONDS - t0))s so far)"; done) &
  local ticker=$!
  if ! (cd "$SRC/$engine" && GOOS="$3" GOARCH="$4" CGO_ENABLED=0 \
        go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$tmp" .); then
    kill "$ticker" 2>/dev/null || true
    rm -f "$tmp"
    die "go build of $engine failed"
  fi
  kill "$ticker" 2>/dev/null || true
  mv -f "$tmp" "$out"
  log "built $out in $((SECONDS - t0))s ($(du -h "$out" | cut -f1))"
}

for t in "${targets[@]}"; do
  want="$(stamp "$t")"
  have="$(cat "$OUT/$t.stamp" 2>/dev/null || true)"
  case "$t" in
    kustomize)
      if [[ -n "$force" || "$want" != "$have" || ! -f "$OUT/kustomize.wasm" || ! -f "$OUT/wasm_exec.js" ]]; then
        gobuild kustomize "$OUT/kustomize.wasm" js wasm
        # wasm_exec.js must come from the Go that compiled the module.
        cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$OUT/wasm_exec.js.tmp.$$"
        mv -f "$OUT/wasm_exec.js.tmp.$$" "$OUT/wasm_exec.js"
        echo "$want" >"$OUT/$t.stamp"
      fi ;;
    helm)
      if [[ -n "$force" || "$want" != "$have" || ! -x "$OUT/plumb-helm" ]]; then
        gobuild helm "$OUT/plumb-helm" "$(go env GOHOSTOS)" "$(go env GOHOSTARCH)"
        echo "$want" >"$OUT/$t.stamp"
      fi ;;
  esac
done
