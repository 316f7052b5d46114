// Command etcd is the real etcd server, built from go.etcd.io/etcd/server/v3
// for the test world.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
