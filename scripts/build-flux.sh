#!/usr/bin/env bash
# Builds Flux's kustomize-controller from its Go module, for `npm run bench` only (the side by
# side with plumb's no-op CLI runs, bench/flux.ts); never needed by `npm test`.
#
#   scripts/build-flux.sh            build into dist/flux/ (gitignored) unless already built
#   scripts/build-flux.sh --force    rebuild
#   scripts/build-flux.sh --crds     only the CRDs (a binary of the same version is at hand)
#
# Output (PLUMB_FLUX_DIR, default dist/flux/):
#   kustomize-controller   github.com/fluxcd/kustomize-controller v1.9.6, built with `go build`
#   crds/*.yaml            the Kustomization CRD (kustomize-controller's config/crd/bases/) and
#                          the source kinds it watches, GitRepository, OCIRepository and Bucket
#                          (github.com/fluxcd/source-controller v1.9.6, config/crd/bases/)
#   VERSION                what was built, from where, with which Go
#
# Source: the Go module proxy (GOPROXY, default proxy.golang.org) through `go mod download`,
# no release download. `go install module@version` refuses a module whose go.mod has replace
# directives, so the module is copied to a build directory and built there. Its go.mod points
# the api sub-module at ./api, which the module zip does not contain: that replace line is
# dropped and the published github.com/fluxcd/kustomize-controller/api v1.9.6 that go.mod
# requires is used instead (the same code: the api directory of the same tag). The other
# replace directives (go-digest, kustomize pins) stay. v1.9.6 builds with Go 1.26; v1.10.x
# needs Go 1.27. A first build downloads and compiles a few hundred modules: minutes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${PLUMB_FLUX_DIR:-$ROOT/dist/flux}"
KC_MODULE="github.com/fluxcd/kustomize-controller"
KC_VERSION="v1.9.6"
SC_MODULE="github.com/fluxcd/source-controller"
SC_VERSION="v1.9.6"
export CGO_ENABLED=0

die() { echo "build-flux: $*" >&2; exit 1; }
log() { echo "build-flux: $*" >&2; }

force="" crds_only=""
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    --crds) crds_only=1 ;;
    *) die "unknown argument $a (--force rebuilds, --crds places only the CRDs)" ;;
  esac
done
command -v go >/dev/null 2>&1 || die "go not found in PATH (Go >= 1.26 builds kustomize-controller $KC_VERSION)"

mkdir -p "$OUT"
exec 9>"$OUT/.build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

want="$KC_MODULE@$KC_VERSION $SC_MODULE@$SC_VERSION $(go version)"
if [[ -z "$force" && -z "$crds_only" && -x "$OUT/kustomize-controller" && -f "$OUT/VERSION" ]] &&
  [[ "$(head -1 "$OUT/VERSION")" == "$want" ]]; then
  log "kustomize-controller $KC_VERSION already built in $OUT"
  exit 0
fi

# moddir MODULE@VERSION: the module's directory in the module cache (downloaded if missing).
moddir() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'
}

log "downloading $KC_MODULE@$KC_VERSION and $SC_MODULE@$SC_VERSION through the Go module proxy"
kc="$(moddir "$KC_MODULE@$KC_VERSION")"
sc="$(moddir "$SC_MODULE@$SC_VERSION")"
[[ -d "$kc" ]] || die "go mod download $KC_MODULE@$KC_VERSION gave no directory"
[[ -d "$sc" ]] || die "go mod download $SC_MODULE@$SC_VERSION gave no directory"

# The Kustomization CRD, and the source kinds the controller watches (it waits for their
# informers at start-up, so all three must be served even though only GitRepository is used).
rm -rf "$OUT/crds"
mkdir -p "$OUT/crds"
cp "$kc/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml" "$OUT/crds/"
for kind in gitrepositories ocirepositories buckets; do
  cp "$sc/config/crd/bases/source.toolkit.fluxcd.io_$kind.yaml" "$OUT/crds/"
done
chmod u+w "$OUT"/crds/*.yaml
if [[ -n "$crds_only" ]]; then
  log "CRDs of $KC_VERSION in $OUT/crds"
  exit 0
fi

build="$(mktemp -d "${TMPDIR:-/tmp}/plumb-flux-build.XXXXXX")"
trap 'chmod -R u+w "$build" 2>/dev/null; rm -rf "$build"' EXIT
cp -R "$kc/." "$build/"
chmod -R u+w "$build"
grep -q '^replace github.com/fluxcd/kustomize-controller/api => ./api$' "$build/go.mod" ||
  die "$KC_VERSION's go.mod has no './api' replace line: the build recipe needs a look"
sed -i '\#^replace github.com/fluxcd/kustomize-controller/api => ./api$#d' "$build/go.mod"

log "compiling kustomize-controller $KC_VERSION (a first build takes minutes)"
(cd "$build" && GOFLAGS=-mod=mod go build -o "$OUT/kustomize-controller.tmp" .) ||
  die "go build of $KC_MODULE@$KC_VERSION failed"
mv "$OUT/kustomize-controller.tmp" "$OUT/kustomize-controller"
{
  echo "$want"
  echo "kustomize-controller: $KC_MODULE@$KC_VERSION (go mod download; go.mod's ./api replace dropped)"
  echo "CRDs: $KC_MODULE@$KC_VERSION config/crd/bases, $SC_MODULE@$SC_VERSION config/crd/bases"
} >"$OUT/VERSION"
log "built $OUT/kustomize-controller"
