package kubelet

import "context"

// Image is what a node's pull of an image reference yields: the digest the
// reference resolved to (the repo digest reported as the container's
// imageID), the total compressed size a pull downloads, and whether the
// image is marked to crash when started, and what programs it holds.
type Image struct {
	// Digest is the manifest (or index) digest, "sha256:<hex>".
	Digest string
	// Size is the total compressed size in bytes a pull downloads.
	Size int64
	// Crash reports that a container started from this image crashes.
	Crash bool
	// Programs are the absolute paths of the executables the image holds
	// (a test-world image: its entrypoint's program, nothing else, no
	// shell, no /bin/true). A container whose command names another
	// program, outside the container's volume mounts, fails to start, as
	// runc fails it. Nil: not known, every command starts.
	Programs []string
}

// ImageResolver resolves an image reference (repo:tag or repo@digest) the way
// a node's image pull does. An error for a reference the registry does not
// hold says "not found" in its message.
type ImageResolver interface {
	Resolve(ctx context.Context, ref string) (Image, error)
}
