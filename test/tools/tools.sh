#!/usr/bin/env bash
# The programs plumb's tests need besides Node and the control plane, obtained on demand:
#
#   test/tools/tools.sh promtool     print the path of promtool, building it first if needed
#   test/tools/tools.sh chromium     print the path of Chromium, installing it first if needed
#   test/tools/tools.sh all          both, one path a line
#
# promtool (`promtool check metrics` checks /metrics) is built from Go modules
# (github.com/prometheus/prometheus/cmd/promtool, pinned by test/tools/go.mod and go.sum) into
# test/tools/bin/ (gitignored), and rebuilt when go.mod, go.sum, this script or `go version`
# change; the Go caches make later builds a relink. Without the service-discovery plugins
# (build tag remove_all_sd): `check metrics` does not use them.
#
# Chromium (the web page's browser test, driven by playwright-core, which downloads no
# browser) is Debian's package: found on PATH, else installed with apt-get when this runs as
# root, else the run fails with the command that installs it.
#
# Overrides: PLUMB_PROMTOOL, PLUMB_CHROMIUM (a path to use as is). Long steps say every 30 s
# that they are still going. Paths go to stdout, progress and errors to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$HERE/bin"

die() { echo "tools.sh: $*" >&2; exit 1; }
log() { echo "tools.sh: $*" >&2; }

# ticker WHAT: in the background, say every 30 s that WHAT is still going. Kill it when done;
# it takes its sleep with it, so no stray process holds the caller's output open.
ticker() {
  local t0=$SECONDS s=""
  trap '[[ -z "$s" ]] || kill "$s" 2>/dev/null; exit 0' TERM
  while :; do
    sleep 30 >/dev/null 2>&1 &
    s=$!
    wait "$s" || true
    log "still $1 ($((SECONDS - t0))s so far)"
  done
}

executable() { [[ -f "$1" && -x "$1" ]]; }

# --- promtool -----------------------------------------------------------------

promtool_stamp() {
  {
    go version
    sha256sum <"${BASH_SOURCE[0]}"
    sha256sum <"$HERE/go.mod"
    sha256sum <"$HERE/go.sum"
  } | sha256sum | cut -d' ' -f1
}

obtain_promtool() {
  if [[ -n "${PLUMB_PROMTOOL:-}" ]]; then
    executable "$PLUMB_PROMTOOL" || die "PLUMB_PROMTOOL=$PLUMB_PROMTOOL is not an executable file"
    echo "$PLUMB_PROMTOOL"
    return
  fi
  command -v go >/dev/null 2>&1 ||
    die "go not found in PATH: Go >= 1.26 builds promtool (as it builds the control plane)"
  local out="$BIN/promtool" want have
  mkdir -p "$BIN"
  exec 8>"$BIN/.promtool.lock"
  if command -v flock >/dev/null 2>&1; then flock 8; fi
  want="$(promtool_stamp)"
  have="$(cat "$out.stamp" 2>/dev/null || true)"
  if [[ "$want" != "$have" ]] || ! executable "$out"; then
    local version t0=$SECONDS tmp="$out.tmp.$$" tick
    version="$(awk '$1 == "github.com/prometheus/prometheus" { print $2; exit }' "$HERE/go.mod")"
    log "building promtool $version from Go modules into $out (into empty Go caches: about" \
      "900 MB of modules, many shared with the control plane, and 4 min on 2 busy cores)"
    ticker "building promtool" >&2 </dev/null &
    tick=$!
    if ! (cd "$HERE" && CGO_ENABLED=0 go build -tags remove_all_sd -trimpath -buildvcs=false \
          -ldflags="-s -w" -o "$tmp" github.com/prometheus/prometheus/cmd/promtool); then
      kill "$tick" 2>/dev/null || true
      rm -f "$tmp"
      die "building promtool failed (see above). To use another promtool instead, e.g. Debian's" \
        "(apt-get install prometheus), run: PLUMB_PROMTOOL=/usr/bin/promtool npm test"
    fi
    kill "$tick" 2>/dev/null || true
    mv -f "$tmp" "$out"
    echo "$want" >"$out.stamp"
    log "built promtool in $((SECONDS - t0))s"
  fi
  exec 8>&-
  echo "$out"
}

# --- chromium -----------------------------------------------------------------

find_chromium() {
  local c p
  for c in chromium chromium-browser; do
    # command -v also names a file that is not executable, when that is all it finds.
    p="$(command -v "$c" 2>/dev/null)" && [[ "$p" == /* ]] && executable "$p" && { echo "$p"; return 0; }
  done
  # Installed but not on this PATH (a minimal PATH, a CI runner's): the package names its own
  # launcher, so an installed package is used as it is and never installed again.
  if command -v dpkg-query >/dev/null 2>&1; then
    for c in chromium chromium-browser; do
      while IFS= read -r p; do
        [[ "$p" == */bin/"$c" ]] && executable "$p" && { echo "$p"; return 0; }
      done < <(dpkg-query -L "$c" 2>/dev/null)
    done
  fi
  return 1
}

obtain_chromium() {
  if [[ -n "${PLUMB_CHROMIUM:-}" ]]; then
    executable "$PLUMB_CHROMIUM" || die "PLUMB_CHROMIUM=$PLUMB_CHROMIUM is not an executable file"
    echo "$PLUMB_CHROMIUM"
    return
  fi
  local found
  if found="$(find_chromium)"; then echo "$found"; return; fi
  # Who may install: root, or a user whose sudo needs no password.
  local as=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as=(sudo -n); else as=(none); fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    die "Chromium is missing (the web page's browser test needs it) and there is no apt-get here:" \
      "install Chromium with the system's package manager, or set PLUMB_CHROMIUM to its path"
  fi
  if [[ "${as[*]}" == none ]]; then
    die "Chromium is missing (the web page's browser test needs it). Run:" \
      "sudo apt-get install -y chromium"
  fi
  log "installing Debian's chromium package (apt-get; a minute or more)"
  local t0=$SECONDS tick
  ticker "installing chromium" >&2 </dev/null &
  tick=$!
  # Wait for another apt run's lock instead of failing at once.
  if ! { "${as[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq &&
         "${as[@]}" env DEBIAN_FRONTEND=noninteractive \
           apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium; } >&2 </dev/null
  then
    kill "$tick" 2>/dev/null || true
    die "apt-get could not install chromium (see above). Run: ${as[*]:+sudo }apt-get install -y chromium"
  fi
  kill "$tick" 2>/dev/null || true
  found="$(find_chromium)" || die "apt-get installed chromium, but neither PATH nor its package names a chromium to run"
  log "installed chromium in $((SECONDS - t0))s: $found"
  echo "$found"
}

case "${1:-}" in
  promtool) obtain_promtool ;;
  chromium) obtain_chromium ;;
  all) obtain_promtool; obtain_chromium ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
