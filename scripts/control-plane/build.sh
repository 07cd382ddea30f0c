#!/usr/bin/env bash
# Builds (or reuses) the real Kubernetes control plane used by the real-API-server test tier:
# etcd, kube-apiserver and kube-controller-manager, from their Go modules, with the ordinary `go`
# client, into a git-ignored cache keyed by version. Nothing here is committed but this script.
#
#   scripts/control-plane/build.sh            # build or reuse; prints the bin folder last
#   scripts/control-plane/build.sh --locate   # prints the bin folder if built (exit 0), else exit 1
#   CONTROL_PLANE_DIR=/some/dir scripts/...   # another cache folder
#
# Why wrapper modules: `go install …@version` refuses a module whose go.mod has replace
# directives, and both k8s.io/kubernetes (staging modules) and etcd's server module have them.
# A tiny module of our own that requires the real one (and, for Kubernetes, replaces every
# staging module with its published v0.X.Y, generated from that version's own go.mod) builds
# the very same packages.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${CONTROL_PLANE_DIR:-$ROOT/.cache/control-plane}"
KEY="kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}"
OUT="$CACHE/$KEY"
BIN="$OUT/bin"
STAMP="$OUT/stamp"
BINARIES=(etcd kube-apiserver kube-controller-manager)

say() { printf '[control-plane %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

built() {
  [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "$KEY" ]] || return 1
  for b in "${BINARIES[@]}"; do [[ -x "$BIN/$b" ]] || return 1; done
}
if [[ "${1:-}" == "--locate" ]]; then
  if built; then echo "$BIN"; exit 0; fi
  echo "not built: $KEY (run scripts/control-plane/build.sh)" >&2
  exit 1
fi

if ! command -v go >/dev/null 2>&1; then
  say "go is not on PATH: install Go ≥ 1.24 (this project's machines have Go 1.26), then run this again"
  exit 3
fi

if built; then
  say "reusing $KEY (stamp $STAMP)"
  echo "$BIN"
  exit 0
fi
started=$(date +%s)
mkdir -p "$BIN" "$OUT/src/kubernetes" "$OUT/src/etcd"
rm -f "$STAMP"
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

# --- etcd --------------------------------------------------------------------------------------
if [[ ! -x "$BIN/etcd" ]]; then
  say "etcd $ETCD_VERSION: resolving go.etcd.io/etcd/server/v3"
  cd "$OUT/src/etcd"
  cat > go.mod <<GOMOD
module endpoint-binder.local/control-plane/etcd

go 1.24

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
  rm -f go.sum
  go mod download go.etcd.io/etcd/server/v3
  say "etcd $ETCD_VERSION: building (go build)"
  go build -trimpath -o "$BIN/etcd.tmp" \
    -ldflags "-s -w" go.etcd.io/etcd/server/v3
  mv "$BIN/etcd.tmp" "$BIN/etcd"
  say "etcd: built in $(( $(date +%s) - started )) s"
fi

# --- Kubernetes --------------------------------------------------------------------------------
cd "$OUT/src/kubernetes"
say "kubernetes $KUBE_VERSION: reading its go.mod for the staging modules"
kube_gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
if [[ -z "$kube_gomod" || ! -f "$kube_gomod" ]]; then
  say "could not download k8s.io/kubernetes@$KUBE_VERSION's go.mod (is the Go module proxy reachable?)"
  exit 4
fi
staging_version="v0.${KUBE_VERSION#v1.}"
{
  echo "module endpoint-binder.local/control-plane/kubernetes"
  echo
  echo "go 1.24"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  # Every `k8s.io/X => ./staging/src/k8s.io/X` replace of that go.mod becomes `=> k8s.io/X v0.N.P`.
  grep -oE 'k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$kube_gomod" \
    | awk -v v="$staging_version" '{ print "replace " $1 " => " $1 " " v }'
} > go.mod
n_replace=$(grep -c '^replace ' go.mod)
if [[ $n_replace -lt 20 ]]; then
  say "only $n_replace staging replaces found in $kube_gomod: its layout changed, look at it"
  exit 5
fi
say "kubernetes $KUBE_VERSION: $n_replace staging modules replaced with $staging_version"
rm -f go.sum

minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done

for b in kube-apiserver kube-controller-manager; do
  [[ -x "$BIN/$b" ]] && continue
  t0=$(date +%s)
  say "$b $KUBE_VERSION: building (go build; the first one downloads the modules)"
  go build -trimpath -o "$BIN/$b.tmp" -ldflags "$ldflags" "k8s.io/kubernetes/cmd/$b"
  mv "$BIN/$b.tmp" "$BIN/$b"
  say "$b: built in $(( $(date +%s) - t0 )) s"
done

echo "$KEY" > "$STAMP"
say "done in $(( $(date +%s) - started )) s; $(du -sh "$BIN" | cut -f1) of binaries in $BIN"
echo "$BIN"
