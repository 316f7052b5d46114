package registry

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/distribution/v3/registry/storage/driver/factory"
	"github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// storeDriver names a storage driver that hands out the in-memory store of
// one registry, found by the "store" parameter. Distribution builds its
// driver from configuration; going through this factory lets every app
// SetNotify builds share the registry's store, which Distribution's plain
// "inmemory" driver (a new, empty store per app) cannot. In-memory storage
// also avoids the filesystem driver's fsync per blob, which costs tens of
// milliseconds, sometimes seconds, on a busy machine.
const storeDriver = "inplacetestmemory"

var stores sync.Map // store id → *inmemory.Driver

func init() {
	factory.Register(storeDriver, storeFactory{})
}

type storeFactory struct{}

func (storeFactory) Create(_ context.Context, params map[string]any) (storagedriver.StorageDriver, error) {
	id, _ := params["store"].(string)
	d, ok := stores.Load(id)
	if !ok {
		return nil, fmt.Errorf("in-memory store %q: not open", id)
	}
	return d.(*inmemory.Driver), nil
}

// openStore makes a new in-memory store and returns its id.
func openStore() string {
	id := rand.Text()
	stores.Store(id, inmemory.New())
	return id
}

// closeStore forgets the store, freeing its contents once no app uses it.
func closeStore(id string) { stores.Delete(id) }
