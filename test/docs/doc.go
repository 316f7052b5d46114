// Package docs holds the tests that keep the documentation true: the
// tables of docs/reference.md are generated from the code (annotations,
// commands and flags, event types) and a test fails when they are stale
// (`make docs` writes them again); README.md stays a front page (at most
// 12 KiB); and every relative link of the Markdown files resolves to a
// file, and every anchor to a heading of it.
package docs
