package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Tag points dstTag at the manifest srcTag points at (as crane tag does: the
// same manifest PUT again by the new tag, so Distribution sends a push event
// for dstTag) and returns its digest.
func (r *Registry) Tag(ctx context.Context, repo, srcTag, dstTag string) (string, error) {
	src, err := name.NewTag(r.host + "/" + repo + ":" + srcTag)
	if err != nil {
		return "", fmt.Errorf("tag %s:%s: %w", repo, srcTag, err)
	}
	dst, err := name.NewTag(r.host + "/" + repo + ":" + dstTag)
	if err != nil {
		return "", fmt.Errorf("tag %s:%s: %w", repo, dstTag, err)
	}
	desc, err := remote.Get(src, r.remoteOptions(ctx)...)
	if err != nil {
		return "", wrapNotFound(fmt.Sprintf("tag %s as %s", src, dstTag), err)
	}
	if err := remote.Tag(dst, desc, r.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("tag %s as %s: %w", src, dstTag, err)
	}
	return desc.Digest.String(), nil
}

// Delete removes a tag (repo, "v1") or a manifest and every tag pointing at
// it (repo, "sha256:..."). Distribution sends a delete event either way.
func (r *Registry) Delete(ctx context.Context, repo, tagOrDigest string) error {
	sep := ":"
	if strings.Contains(tagOrDigest, ":") {
		sep = "@"
	}
	ref, err := name.ParseReference(r.host + "/" + repo + sep + tagOrDigest)
	if err != nil {
		return fmt.Errorf("delete %s %s: %w", repo, tagOrDigest, err)
	}
	if err := remote.Delete(ref, r.remoteOptions(ctx)...); err != nil {
		return wrapNotFound("delete "+ref.String(), err)
	}
	return nil
}

// Copy puts the image srcRepo:srcTag into dstRepo, under dstTag, or by
// digest alone when dstTag is empty (no tag: the push event Distribution
// sends names no tag), and returns its digest, the same in both
// repositories. Layers are mounted from srcRepo, not uploaded again, so a
// large image is copied in a few round trips.
func (r *Registry) Copy(ctx context.Context, srcRepo, srcTag, dstRepo, dstTag string) (string, error) {
	src, err := name.NewTag(r.host + "/" + srcRepo + ":" + srcTag)
	if err != nil {
		return "", fmt.Errorf("copy %s:%s: %w", srcRepo, srcTag, err)
	}
	img, err := remote.Image(src, r.remoteOptions(ctx)...)
	if err != nil {
		return "", wrapNotFound("copy "+src.String(), err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	ref := r.host + "/" + dstRepo + "@" + d.String()
	if dstTag != "" {
		ref = r.host + "/" + dstRepo + ":" + dstTag
	}
	dst, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("copy %s to %s: %w", src, ref, err)
	}
	if err := remote.Write(dst, img, r.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return d.String(), nil
}

// Variant puts into dstRepo:dstTag an image of its own made from
// srcRepo:srcTag: the same layers (mounted, not uploaded again) under a
// config with the label key=value, so a new config digest (the image ID a
// node lists it by) and a new manifest digest, which it returns. A node
// lists an image by at most 5 of its names: copies of one image into many
// repositories share one entry, variants have one each.
func (r *Registry) Variant(ctx context.Context, srcRepo, srcTag, dstRepo, dstTag, key, value string) (string, error) {
	src, err := name.NewTag(r.host + "/" + srcRepo + ":" + srcTag)
	if err != nil {
		return "", fmt.Errorf("variant of %s:%s: %w", srcRepo, srcTag, err)
	}
	dst, err := name.NewTag(r.host + "/" + dstRepo + ":" + dstTag)
	if err != nil {
		return "", fmt.Errorf("variant of %s: %w", src, err)
	}
	img, err := remote.Image(src, r.remoteOptions(ctx)...)
	if err != nil {
		return "", wrapNotFound("variant of "+src.String(), err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("variant of %s: %w", src, err)
	}
	cfg := *cf.Config.DeepCopy()
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	cfg.Labels[key] = value
	if img, err = mutate.Config(img, cfg); err != nil {
		return "", fmt.Errorf("variant of %s: %w", src, err)
	}
	if err := remote.Write(dst, img, r.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("variant of %s to %s: %w", src, dst, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("variant of %s: %w", src, err)
	}
	return d.String(), nil
}
