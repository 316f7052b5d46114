// Package install tests installing inplace as docs/install.md says, on
// real nodes (INPLACE_NODES=real): see TestInstallAsDocumented.
package install
