#!/usr/bin/env bash
# Builds Knative Eventing's components for the test world's Knative node into
# bin/knative/, once: they are reused while this module's go.mod, go.sum and
# Go files are unchanged (a content hash kept in bin/knative/.stamp). Four
# are knative.dev/eventing's own mains (the tool lines of go.mod), three are
# this module's (see doc.go). It also copies the module's config/ (CRDs,
# ConfigMaps, roles) there, so the tests install the manifests of the very
# version the binaries were built from.
set -euo pipefail
cd "$(dirname "$0")"
out="$(cd ../.. && pwd)/bin/knative"
mkdir -p "$out"
version=$(go list -m -f '{{.Version}}' knative.dev/eventing)
pkgs=$(awk '/^tool \(/{on=1; next} on && /^\)/{on=0} on{print $1}' go.mod)
pkgs="$pkgs ./eventing-controller ./mtchannel-broker ./imc-controller"
# One content stamp for all: they are built by one go build from one module.
stamp=$(cat go.mod go.sum $(find . -name '*.go' | sort) | sha256sum | cut -d' ' -f1)
stale=()
for pkg in $pkgs; do
	b="$out/$(basename "$pkg")"
	if [ -x "$b" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
		echo "bin/knative/$(basename "$pkg") is up to date"
	else
		stale+=("$pkg")
	fi
done
if [ ${#stale[@]} -gt 0 ]; then
	echo "building ${#stale[@]} Knative Eventing $version components into bin/knative (go build in test/knative-tools):"
	printf '  %s\n' "${stale[@]}"
	echo "  the first build compiles knative.dev/eventing and its dependencies: a few minutes on 2 cores..."
	start=$(date +%s)
	tmp=$(mktemp -d "$out/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	go build -trimpath -ldflags "-s -w" -o "$tmp/" "${stale[@]}"
	mv "$tmp"/* "$out/"
	echo "$stamp" > "$out/.stamp"
	echo "  built in $(( $(date +%s) - start ))s"
fi
src=$(go list -m -f '{{.Dir}}' knative.dev/eventing)
if [ "$(cat "$out/VERSION" 2>/dev/null)" != "$version" ]; then
	echo "copying knative.dev/eventing $version config/ (CRDs, ConfigMaps) into bin/knative/config"
	rm -rf "$out/config"
	mkdir -p "$out/config"
	cp -r "$src/config/core" "$src/config/channels" "$src/config/brokers" "$out/config/"
	chmod -R u+w "$out/config"
	# its placeholder.go files would make them packages of this module (go test ./... lists them)
	find "$out/config" -name "*.go" -delete
	echo "$version" > "$out/VERSION"
fi
