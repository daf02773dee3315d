#!/usr/bin/env bash
# Builds plumb's render engines from Go modules into dist/engines/ (gitignored):
#
#   scripts/build-engines.sh [TARGET...]    build what is missing or stale (default: all)
#   scripts/build-engines.sh --force [TARGET...]
#   scripts/build-engines.sh --test         run the engines' Go tests (go test in each module)
#
# Targets:
#   kustomize       dist/engines/plumb-kustomize: krusty (sigs.k8s.io/kustomize/api) as a native
#                   helper process for Node (src/engines/node.ts starts it once per process)
#   helm            dist/engines/plumb-helm: Helm v3's loader, chartutil and engine, the same way
#   kustomize-wasm  dist/engines/kustomize.wasm + wasm_exec.js: krusty for GOOS=js GOARCH=wasm,
#                   run in workerd by the render Worker (wrangler.render.toml builds it)
#
# Sources: src/engines/<engine>/ (own go.mod/go.sum) and src/engines/protocol/ (the helper
# protocol both use). A target is rebuilt when the hash of its sources, this script or
# `go version` differs from the one recorded beside the output. Every 30 s a build says how far
# it is: downloading modules (the download cache's size) or compiling (packages compiled so far,
# of the packages the engine needs). Concurrent builds wait on a lock. Needs Go >= 1.26
# (GOTOOLCHAIN is honoured).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/src/engines"
OUT="${PLUMB_ENGINES_DIR:-$ROOT/dist/engines}"
ALL=(kustomize helm kustomize-wasm)
# Go flags shared by the builds and the tests, so `--test` reuses the compiled packages.
export CGO_ENABLED=0
FLAGS=(-trimpath -buildvcs=false)

die() { echo "build-engines: $*" >&2; exit 1; }
log() { echo "build-engines: $*" >&2; }

force="" test=""
targets=()
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    --test) test=1 ;;
    kustomize|helm|kustomize-wasm) targets+=("$a") ;;
    *) die "unknown target $a (targets: ${ALL[*]})" ;;
  esac
done
((${#targets[@]})) || targets=("${ALL[@]}")

command -v go >/dev/null 2>&1 || die "go not found in PATH (Go >= 1.26 builds the Kustomize and Helm engines)"

if [[ -n "$test" ]]; then
  for m in protocol kustomize helm; do
    log "go test in src/engines/$m"
    (cd "$SRC/$m" && go test "${FLAGS[@]}" ./...) || die "the Go tests of src/engines/$m failed"
  done
  exit 0
fi

mkdir -p "$OUT"
exec 9>"$OUT/.build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

# stamp MODULE: what an output was built from (the module, the shared protocol, this script, Go)
stamp() {
  {
    go version
    sha256sum <"${BASH_SOURCE[0]}"
    for d in "$1" protocol; do
      (cd "$SRC/$d" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) \
        ! -name '*_test.go' -print0 | sort -z | xargs -0 sha256sum)
    done
  } | sha256sum | cut -d' ' -f1
}

# progress LABEL STATE VLOG: every 30 s, what LABEL's build is doing (the stage in file STATE;
# while compiling, the packages `go build -v` has listed in VLOG so far). Run in the background.
progress() {
  local label="$1" state="$2" vlog="$3" t0=$SECONDS cache
  cache="$(go env GOMODCACHE 2>/dev/null || true)/cache/download"
  while sleep 30; do
    local stage total done size=""
    read -r stage total <"$state" || true
    if [[ "$stage" == compiling ]]; then
      done=$(grep -cv '^#' "$vlog" 2>/dev/null || true)
      log "$label: still compiling ($((SECONDS - t0))s so far): ${done:-0} packages compiled, of at most ${total:-?} (the rest are cached)"
    else
      [[ -d "$cache" ]] && size=", Go module downloads $(du -sh "$cache" 2>/dev/null | cut -f1)"
      log "$label: still downloading modules ($((SECONDS - t0))s so far$size)"
    fi
  done
}

# gobuild MODULE OUTPUT GOOS GOARCH
gobuild() {
  local module="$1" out="$2" label="$1 ($3/$4)" tmp="$2.tmp.$$" t0=$SECONDS
  local state="$OUT/.$module-$3.state" vlog="$OUT/.$module-$3.build.log" ticker total
  log "building $label (a first build downloads Go modules and compiles them: minutes)"
  echo "downloading" >"$state"
  : >"$vlog"
  progress "$label" "$state" "$vlog" &
  ticker=$!
  # go list resolves and downloads what the build needs; its count bounds what is compiled.
  if ! total=$(cd "$SRC/$module" && GOOS="$3" GOARCH="$4" go list -deps . | wc -l); then
    kill "$ticker" 2>/dev/null || true
    die "resolving the modules of $label failed (see above)"
  fi
  echo "compiling $total" >"$state"
  if ! (cd "$SRC/$module" && GOOS="$3" GOARCH="$4" \
        go build -v "${FLAGS[@]}" -ldflags="-s -w" -o "$tmp" . 2>"$vlog"); then
    kill "$ticker" 2>/dev/null || true
    grep -v '^[a-zA-Z0-9._/-]*$' "$vlog" >&2 || true
    rm -f "$tmp" "$state"
    die "go build of $label failed"
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  mv -f "$tmp" "$out"
  log "built $out in $((SECONDS - t0))s ($(du -h "$out" | cut -f1); $(grep -cv '^#' "$vlog" || true) packages compiled, $((total)) needed)"
  rm -f "$state" "$vlog"
}

host_os="$(go env GOHOSTOS)" host_arch="$(go env GOHOSTARCH)"
for t in "${targets[@]}"; do
  case "$t" in
    kustomize|helm)
      want="$(stamp "$t")"
      have="$(cat "$OUT/$t.stamp" 2>/dev/null || true)"
      if [[ -n "$force" || "$want" != "$have" || ! -x "$OUT/plumb-$t" ]]; then
        gobuild "$t" "$OUT/plumb-$t" "$host_os" "$host_arch"
        echo "$want" >"$OUT/$t.stamp"
      fi ;;
    kustomize-wasm)
      want="$(stamp kustomize)"
      have="$(cat "$OUT/$t.stamp" 2>/dev/null || true)"
      if [[ -n "$force" || "$want" != "$have" || ! -f "$OUT/kustomize.wasm" || ! -f "$OUT/wasm_exec.js" ]]; then
        gobuild kustomize "$OUT/kustomize.wasm" js wasm
        # wasm_exec.js must come from the Go that compiled the module.
        cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$OUT/wasm_exec.js.tmp.$$"
        mv -f "$OUT/wasm_exec.js.tmp.$$" "$OUT/wasm_exec.js"
        echo "$want" >"$OUT/$t.stamp"
      fi ;;
  esac
done
