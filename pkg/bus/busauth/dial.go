package busauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nats-io/nats.go"
)

// Dial are the connection options of identity name from the credentials
// directory dir: its JWT credentials (<name>.creds) or its nkey seed
// (<name>.nk), its own inbox prefix, and its name.
func Dial(dir, name string) ([]nats.Option, error) {
	opts := []nats.Option{nats.Name("inplace-" + name), nats.CustomInboxPrefix(InboxPrefix(name))}
	creds := CredsFile(dir, name)
	if _, err := os.Stat(creds); err == nil {
		return append(opts, nats.UserCredentials(creds)), nil
	}
	seed := SeedFile(dir, name)
	if _, err := os.Stat(seed); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("nats credentials: %s has neither %s.creds nor %s.nk", dir, name, name)
	}
	o, err := nats.NkeyOptionFromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("nats credentials %s: %w", seed, err)
	}
	return append(opts, o), nil
}
