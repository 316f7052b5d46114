// Command init is an init container: it sleeps INIT_SLEEP (default 1s),
// then exits with INIT_EXIT_CODE (default 0). SIGTERM or SIGINT ends the
// sleep early with exit code 143 or 130, as a shell would.
package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/inplace-dev/inplace/test/images/settings"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := settings.ParseInit(os.LookupEnv, settings.DefaultInit)
	if err != nil {
		log.Error("bad settings", "err", err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	log.Info("initialising", "sleep", cfg.Sleep, "exitCode", cfg.ExitCode)
	select {
	case <-time.After(cfg.Sleep):
		log.Info("done", "exitCode", cfg.ExitCode)
		os.Exit(cfg.ExitCode)
	case s := <-sigs:
		log.Info("stopped", "signal", s)
		os.Exit(128 + int(s.(syscall.Signal)))
	}
}
