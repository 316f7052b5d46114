package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names the environment variable that points at the directory
// holding etcd, kube-apiserver and kube-controller-manager.
const BinDirEnv = "INPLACE_BIN_DIR"

// binaries the control plane needs, each looked up in the bin directory.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager"}

// FindBinDir returns the directory holding the control-plane binaries:
// $INPLACE_BIN_DIR when set, else the bin/ directory next to the go.mod
// found by walking up from the working directory. It fails, telling the
// user to run `make bin`, when a binary is missing.
func FindBinDir() (string, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", fmt.Errorf("find bin dir: %w (set %s or run from the module)", err, BinDirEnv)
		}
		dir = filepath.Join(root, "bin")
	}
	for _, b := range binaries {
		p := filepath.Join(dir, b)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("find bin dir: %s is missing or not executable: run `make bin` "+
				"at the module root to build the control-plane binaries (or set %s)", p, BinDirEnv)
		}
	}
	return dir, nil
}

// moduleRoot walks up from the working directory to the first directory
// holding a go.mod and a bin/ directory (the main module; test/tools has a
// go.mod of its own but no bin/).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working dir: %w", err)
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) && isDir(filepath.Join(dir, "bin")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no directory with go.mod and bin/ above the working directory")
		}
		dir = parent
	}
}

func isFile(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
