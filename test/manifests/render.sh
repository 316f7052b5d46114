#!/usr/bin/env bash
# Renders every overlay under config/overlays with kustomize (the Go
# library, through test/manifests/render: no kustomize or kubectl binary
# needed) into dist/manifests/<overlay>.yaml, or into the directory given.
#   test/manifests/render.sh [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-dist/manifests}"
overlays=()
for d in config/overlays/*/; do
  overlays+=("${d%/}")
done
exec go run ./test/manifests/render -out "$out" "${overlays[@]}"
