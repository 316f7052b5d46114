// Package cli holds the subcommands of the inplace binary: run, and the
// operator's tools (events, trace, status, plan, upgrade, undo, replay). It
// is a package of its own so tests can run the real commands.
package cli
