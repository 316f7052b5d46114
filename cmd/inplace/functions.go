package main

import (
	"context"
	"log/slog"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/runner"
)

// buildFunctions assembles the functions the process runs. Every
// function's consumer is created whatever this process runs, so an event
// published before another process starts is never missed.
func buildFunctions(ctx context.Context, p *config.Process, b *bus.Bus, log *slog.Logger) ([]runner.Function, error) {
	return nil, nil
}
