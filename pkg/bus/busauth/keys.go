package busauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"
)

// SeedFile is the file of an identity's nkey seed in a credentials
// directory; CredsFile its JWT credentials (an operator-mode cluster).
func SeedFile(dir, name string) string  { return filepath.Join(dir, name+".nk") }
func CredsFile(dir, name string) string { return filepath.Join(dir, name+".creds") }

// Ensure makes dir hold an nkey seed for every role (keeping the seeds it
// already holds, so a restart keeps its identities) and returns each
// identity's public key.
func Ensure(dir string) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats credentials %s: %w", dir, err)
	}
	keys := map[string]string{}
	for _, r := range Roles() {
		pub, err := PublicKey(dir, r.Name)
		if errors.Is(err, fs.ErrNotExist) {
			pub, err = create(dir, r.Name)
		}
		if err != nil {
			return nil, err
		}
		keys[r.Name] = pub
	}
	return keys, nil
}

// PublicKey reads an identity's seed and returns its public key.
func PublicKey(dir, name string) (string, error) {
	path := SeedFile(dir, name)
	seed, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		return "", fmt.Errorf("nats credentials %s: %w", path, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("nats credentials %s: %w", path, err)
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		return "", fmt.Errorf("nats credentials %s: not a user seed", path)
	}
	return pub, nil
}

func create(dir, name string) (string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("nats credentials: new key for %s: %w", name, err)
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", err
	}
	path := SeedFile(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("nats credentials: %w", err)
	}
	if _, err := f.Write(append(seed, '\n')); err != nil {
		f.Close()
		return "", fmt.Errorf("nats credentials %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("nats credentials %s: %w", path, err)
	}
	return kp.PublicKey()
}
