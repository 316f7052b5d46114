// Package tools is the layer of the operator's tools: history (the stream
// read back: tail, export, import, trace, status) and replay (events through
// the functions again, live or as a server-side dry run).
//
// Like the composition root, its packages may import every layer below them
// (pkg/core, pkg/bus, pkg/kube, pkg/inputs, pkg/config) and the events
// contract; never functions or cmd, and only cmd imports them.
// pkg/layers_test.go keeps this true.
package tools
