package realnode

import "syscall"

// detach unmounts path lazily (MNT_DETACH).
func detach(path string) error { return syscall.Unmount(path, syscall.MNT_DETACH) }
