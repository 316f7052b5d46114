#!/usr/bin/env bash
# Builds the real control-plane binaries of the test world (etcd,
# kube-apiserver, kube-controller-manager) from their Go modules into bin/,
# once: a binary newer than this module's go.sum is reused.
set -euo pipefail
cd "$(dirname "$0")"
out="$(cd ../.. && pwd)/bin"
mkdir -p "$out"
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$k8s" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
for b in etcd kube-apiserver kube-controller-manager; do
	if [ -x "$out/$b" ] && [ "$out/$b" -nt go.sum ]; then
		echo "bin/$b is up to date"
		continue
	fi
	echo "building bin/$b ($k8s) from its Go module; the first build takes several minutes..."
	start=$(date +%s)
	go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "./$b"
	mv "$out/$b.tmp" "$out/$b"
	echo "  bin/$b built in $(( $(date +%s) - start ))s"
done
