// Package images builds the test world's container images from programs
// of this module: small static Go programs under test/images/cmd, each
// compiled with CGO_ENABLED=0, -trimpath and -ldflags '-s -w' for
// linux/amd64 and put in a one-layer image with go-containerregistry
// (entrypoint /<program>, platform linux/amd64, Docker or OCI media
// types), so a real node (containerd + runc) can run them.
//
//	img, err := images.Pause(ctx)                          // the sandbox image
//	digest, err := reg.PushImage(ctx, "inplace/pause", "3.10", img) // test/registry
//
// Image builds any program with Options (env and labels in the config, a
// padding layer of incompressible bytes so a pull costs something).
//
// Binaries are built once per hash of their sources (the toolchain, the
// flags, this module's files the program compiles, and the versions of
// its other dependencies): within a process at most once, and across
// processes through a cache in bin/images at the module's root, written to
// a temporary file and renamed, so concurrent test binaries share it
// safely. Building needs the go command on PATH, as go test has.
//
// The package is test support: production code must not import it, and
// it must not push anything itself (the caller pushes, so the registry
// package can build on it).
package images
