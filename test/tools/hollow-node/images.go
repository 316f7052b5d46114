package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// crashLabel marks an image whose containers exit 1 (test/registry's CrashLabel).
const crashLabel = "dev.inplace.test/crash"

// storedImage is an image in the node's store.
type storedImage struct {
	id     string // host/repo@sha256:<digest>: the containers' imageID
	digest string
	tags   []string // host/repo:tag
	size   int64
	crash  bool
}

// imageService is the node's image store: pulls resolve through the
// registry (a missing tag fails as containerd's pull does), take the
// configured time, and are remembered by digest and tag.
type imageService struct {
	reg     *registryClient
	timings timings

	mu     sync.Mutex
	byID   map[string]*storedImage // by id
	byName map[string]string       // host/repo:tag and host/repo@digest -> id
}

func newImageService(reg *registryClient, t timings) *imageService {
	return &imageService{reg: reg, timings: t, byID: map[string]*storedImage{}, byName: map[string]string{}}
}

// lookup finds the stored image a spec names; nil when absent.
func (s *imageService) lookup(spec string) *storedImage {
	if img, ok := s.byID[spec]; ok {
		return img
	}
	ref, err := parseReference(spec)
	if err != nil {
		return nil
	}
	key := ref.Name() + ":" + ref.Tag
	if ref.Digest != "" {
		key = ref.Name() + "@" + ref.Digest
	}
	return s.byID[s.byName[key]]
}

// crashes reports whether the image with this id is marked to crash.
func (s *imageService) crashes(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.lookup(id)
	return img != nil && img.crash
}

func (s *imageService) toAPI(img *storedImage) *runtimeapi.Image {
	return &runtimeapi.Image{
		Id:          img.id,
		RepoTags:    slices.Clone(img.tags),
		RepoDigests: []string{img.id},
		Size:        uint64(img.size),
		Spec:        &runtimeapi.ImageSpec{Image: img.id},
	}
}

// ListImages implements internalapi.ImageManagerService.
func (s *imageService) ListImages(_ context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.Image
	for _, img := range s.byID {
		if filter != nil && filter.Image != nil && filter.Image.Image != "" && s.lookup(filter.Image.Image) != img {
			continue
		}
		out = append(out, s.toAPI(img))
	}
	return out, nil
}

// ImageStatus implements internalapi.ImageManagerService: no image (and no
// error) when the node does not have it.
func (s *imageService) ImageStatus(_ context.Context, spec *runtimeapi.ImageSpec, _ bool) (*runtimeapi.ImageStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if img := s.lookup(spec.GetImage()); img != nil {
		return &runtimeapi.ImageStatusResponse{Image: s.toAPI(img)}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

// PullImage implements internalapi.ImageManagerService: the reference is
// resolved through the registry; the layers cost time only when the node
// does not have the digest yet.
func (s *imageService) PullImage(ctx context.Context, spec *runtimeapi.ImageSpec, _ *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	name := spec.GetImage()
	ref, err := parseReference(name)
	if err != nil {
		return "", err
	}
	if err := sleep(ctx, s.timings.PullFixed); err != nil {
		return "", err
	}
	res, err := s.reg.resolve(ctx, ref)
	if err != nil {
		if errors.Is(err, errNotFound) {
			return "", fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: %w", name, name, err)
		}
		return "", fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: %v", name, name, err)
	}
	id := ref.Name() + "@" + res.Digest
	s.mu.Lock()
	_, have := s.byID[id]
	s.mu.Unlock()
	if !have {
		if err := sleep(ctx, time.Duration(float64(s.timings.PullPerMiB)*float64(res.Size)/(1<<20))); err != nil {
			return "", err
		}
	}
	s.store(ref, id, res)
	return id, nil
}

func (s *imageService) store(ref reference, id string, res resolved) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img, ok := s.byID[id]
	if !ok {
		img = &storedImage{id: id, digest: res.Digest, size: res.Size, crash: res.Labels[crashLabel] == "true"}
		s.byID[id] = img
	}
	s.byName[ref.Name()+"@"+res.Digest] = id
	if ref.Tag != "" && ref.Digest == "" {
		tag := ref.Name() + ":" + ref.Tag
		if old, ok := s.byID[s.byName[tag]]; ok && old != img {
			old.tags = slices.DeleteFunc(old.tags, func(t string) bool { return t == tag })
		}
		s.byName[tag] = id
		if !slices.Contains(img.tags, tag) {
			img.tags = append(img.tags, tag)
		}
	}
}

// RemoveImage implements internalapi.ImageManagerService.
func (s *imageService) RemoveImage(_ context.Context, spec *runtimeapi.ImageSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.lookup(spec.GetImage())
	if img == nil {
		return nil
	}
	delete(s.byID, img.id)
	for k, v := range s.byName {
		if v == img.id {
			delete(s.byName, k)
		}
	}
	return nil
}

// ImageFsInfo implements internalapi.ImageManagerService.
func (s *imageService) ImageFsInfo(context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	now := time.Now().UnixNano()
	fs := func() []*runtimeapi.FilesystemUsage {
		return []*runtimeapi.FilesystemUsage{{
			Timestamp:  now,
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd"},
			UsedBytes:  &runtimeapi.UInt64Value{Value: 1 << 30},
			InodesUsed: &runtimeapi.UInt64Value{Value: 1000},
		}}
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: fs(), ContainerFilesystems: fs()}, nil
}

// Close implements internalapi.ImageManagerService.
func (s *imageService) Close() error { return nil }

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
