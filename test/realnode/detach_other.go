//go:build !linux

package realnode

import "errors"

func detach(string) error { return errors.New("unmount: real nodes run on Linux only") }
