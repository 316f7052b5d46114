package image

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Commit is what the images are built from, as git says it.
type Commit struct {
	// Revision is the commit's hash; "unknown" outside a git checkout.
	Revision string
	// Time is the commit's time; the Unix epoch outside a checkout.
	Time time.Time
	// Describe is `git describe --tags --always --dirty`; "dev" outside.
	Describe string
}

// GitCommit reads the commit checked out in dir.
func GitCommit(ctx context.Context, dir string) Commit {
	c := Commit{Revision: "unknown", Time: time.Unix(0, 0).UTC(), Describe: "dev"}
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if rev := git("rev-parse", "HEAD"); rev != "" {
		c.Revision = rev
	}
	if sec, err := strconv.ParseInt(git("log", "-1", "--format=%ct"), 10, 64); err == nil {
		c.Time = time.Unix(sec, 0).UTC()
	}
	if d := git("describe", "--tags", "--always", "--dirty"); d != "" {
		c.Describe = d
	}
	return c
}
