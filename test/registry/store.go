package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
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
//
// The store is Distribution's own inmemory driver behind batchDriver, which
// only batches writes (see batchWriter).
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
	return batchDriver{d.(*inmemory.Driver)}, nil
}

// openStore makes a new in-memory store and returns its id.
func openStore() string {
	id := rand.Text()
	stores.Store(id, inmemory.New())
	return id
}

// closeStore forgets the store, freeing its contents once no app uses it.
func closeStore(id string) { stores.Delete(id) }

// batchDriver is the inmemory driver with writes batched per writer: the
// inmemory writer reallocates and copies its whole buffer on every Write,
// which is quadratic in the blob size (a 10 MiB layer pushed in 32 KiB
// chunks copies about 1.6 GB).
type batchDriver struct {
	storagedriver.StorageDriver
}

func (d batchDriver) Writer(ctx context.Context, path string, append bool) (storagedriver.FileWriter, error) {
	w, err := d.StorageDriver.Writer(ctx, path, append)
	if err != nil {
		return nil, err
	}
	return &batchWriter{FileWriter: w}, nil
}

// batchWriter collects writes and hands them to the inmemory writer in one
// Write before Close, Commit or Cancel.
type batchWriter struct {
	storagedriver.FileWriter
	buf bytes.Buffer
}

func (w *batchWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *batchWriter) Size() int64 { return w.FileWriter.Size() + int64(w.buf.Len()) }

func (w *batchWriter) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	_, err := w.FileWriter.Write(w.buf.Bytes())
	w.buf.Reset()
	return err
}

func (w *batchWriter) Close() error {
	return errors.Join(w.flush(), w.FileWriter.Close())
}

func (w *batchWriter) Commit(ctx context.Context) error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.FileWriter.Commit(ctx)
}

func (w *batchWriter) Cancel(ctx context.Context) error {
	w.buf.Reset()
	return w.FileWriter.Cancel(ctx)
}
