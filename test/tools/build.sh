#!/usr/bin/env bash
# Builds the real Kubernetes binaries of the test world from their Go modules
# into bin/: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
# hollow-node (the kubelet's code over a fake runtime). Each is built once and
# reused while it is newer than this module's go.mod/go.sum and its own sources.
set -euo pipefail
cd "$(dirname "$0")"
out="$(cd ../.. && pwd)/bin"
mkdir -p "$out"
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$k8s" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

stale() {
	local b=$1
	[ ! -x "$out/$b" ] || [ go.sum -nt "$out/$b" ] || [ go.mod -nt "$out/$b" ] ||
		[ -n "$(find "./$b" -name '*.go' -newer "$out/$b" -print -quit)" ]
}

for b in etcd kube-apiserver kube-controller-manager kube-scheduler hollow-node; do
	if ! stale "$b"; then
		echo "bin/$b is up to date"
		continue
	fi
	echo "building bin/$b ($k8s) from its Go module; the first build takes several minutes..."
	start=$(date +%s)
	go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "./$b"
	mv "$out/$b.tmp" "$out/$b"
	echo "  bin/$b built in $(( $(date +%s) - start ))s"
done
