// Package image builds the project's container images without Docker,
// with go-containerregistry: each program is compiled by `go build` for
// every platform asked (linux/amd64 and linux/arm64 by default), put as
// one layer on a small base made here (passwd and group with root and
// nonroot, /tmp, /home/nonroot, the build machine's CA bundle), given a
// config that runs it as nonroot (65532), and pushed as one OCI index per
// image. Nothing is pulled: the build needs no base image from a
// registry. Layers and configs carry the commit's time, so one commit
// builds the same bytes.
//
// It builds inplace (./cmd/inplace, entrypoint /inplace) and nats-server
// (the module go.mod requires, entrypoint /usr/local/bin/nats-server, for
// config/nats). `make image` runs it through cmd/inplace-image; tests call
// Build with a test registry.
package image
