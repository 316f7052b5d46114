package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/inplace-dev/inplace/test/world"
)

// options are the benchmark's flags; each has an INPLACE_BENCH_* variable.
type options struct {
	out            string
	markdown       string
	parts          map[string]bool
	deployPods     int
	stsPods        int
	scalePods      int
	scaleRounds    int // rounds of the scale run, each: every replica count, then the floor
	replicas       []int
	latencySamples int
	memoryPods     []int
	realPods       int
	realOnly       []string // the real-node scenarios to run; empty: all
	timelines      string   // a directory for every moment of each real-node run
	bin            string   // the inplace binary, built at start
}

// allParts are what the benchmark can run.
const allParts = "rollouts,real,scale,latency,memory"

// sizes are the defaults of the size flags.
type sizes struct {
	deployPods, stsPods, scalePods, scaleRounds, replicas, latencySamples, memoryPods, realPods string
}

var (
	// defaults are the sizes the targets are stated for.
	defaults = sizes{deployPods: "12", stsPods: "4", scalePods: "1000", scaleRounds: "3", replicas: "1,3", latencySamples: "20", memoryPods: "1000,10000", realPods: "4"}
	// quickDefaults (BENCH_QUICK=1) are small enough to try a change in a
	// few minutes; their figures are not comparable with the targets.
	quickDefaults = sizes{deployPods: "4", stsPods: "2", scalePods: "100", scaleRounds: "1", replicas: "1", latencySamples: "5", memoryPods: "1000", realPods: "4"}
)

// quick reports BENCH_QUICK (or INPLACE_BENCH_QUICK) set to a true value.
func quick() bool {
	for _, k := range []string{"BENCH_QUICK", "INPLACE_BENCH_QUICK"} {
		if b, err := strconv.ParseBool(os.Getenv(k)); err == nil && b {
			return true
		}
	}
	return false
}

func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	env := func(name, def string) string {
		if v, ok := os.LookupEnv("INPLACE_BENCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
			return v
		}
		return def
	}
	d := defaults
	if quick() {
		d = quickDefaults
	}
	out := fs.String("out", env("out", "bench.json"), "where to write the JSON report (env INPLACE_BENCH_OUT)")
	md := fs.String("markdown", "", "print the report a run wrote to this JSON file as Markdown (the tables of docs/performance.md) and run nothing")
	parts := fs.String("parts", env("parts", allParts), "what to run: "+allParts+" (env INPLACE_BENCH_PARTS)")
	deploy := fs.String("deploy-pods", env("deploy-pods", d.deployPods), "pods of each Deployment scenario (env INPLACE_BENCH_DEPLOY_PODS)")
	sts := fs.String("sts-pods", env("sts-pods", d.stsPods), "pods of the StatefulSet scenario (env INPLACE_BENCH_STS_PODS)")
	scale := fs.String("scale-pods", env("scale-pods", d.scalePods), "pods of the scale run (env INPLACE_BENCH_SCALE_PODS)")
	rounds := fs.String("scale-rounds", env("scale-rounds", d.scaleRounds), "rounds of the scale run, each every replica count then the floor; the goals take the median (env INPLACE_BENCH_SCALE_ROUNDS)")
	replicas := fs.String("replicas", env("replicas", d.replicas), "replicas per function in the scale runs (env INPLACE_BENCH_REPLICAS)")
	samples := fs.String("latency-samples", env("latency-samples", d.latencySamples), "webhook → first patch samples (env INPLACE_BENCH_LATENCY_SAMPLES)")
	realPods := fs.String("real-pods", env("real-pods", d.realPods), "pods of each real-node scenario (env INPLACE_BENCH_REAL_PODS)")
	realOnly := fs.String("real-scenarios", env("real-scenarios", ""), "a comma-separated list of the real-node scenarios to run (real-app, ...); empty: all (env INPLACE_BENCH_REAL_SCENARIOS)")
	timelines := fs.String("timelines", env("timelines", ""), "a directory to write every moment of each real-node run to, one file a run (env INPLACE_BENCH_TIMELINES)")
	memory := fs.String("memory-pods", env("memory-pods", d.memoryPods), "pod counts at which to read the memory of inplace run (env INPLACE_BENCH_MEMORY_PODS)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	o := options{out: *out, markdown: *md, parts: map[string]bool{}, timelines: *timelines}
	var err error
	for _, p := range strings.Split(*parts, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !strings.Contains(","+allParts+",", ","+p+",") {
			return o, fmt.Errorf("-parts: %q is not one of %s", p, allParts)
		}
		o.parts[p] = true
	}
	if o.realOnly, err = realNames(*realOnly); err != nil {
		return o, err
	}
	for _, f := range []struct {
		name, v string
		dst     *int
	}{{"-deploy-pods", *deploy, &o.deployPods}, {"-sts-pods", *sts, &o.stsPods}, {"-scale-pods", *scale, &o.scalePods}, {"-scale-rounds", *rounds, &o.scaleRounds},
		{"-latency-samples", *samples, &o.latencySamples}, {"-real-pods", *realPods, &o.realPods}} {
		if *f.dst, err = strconv.Atoi(f.v); err != nil || *f.dst <= 0 {
			return o, fmt.Errorf("%s: %q is not a positive number", f.name, f.v)
		}
	}
	if o.replicas, err = ints("-replicas", *replicas); err != nil {
		return o, err
	}
	o.memoryPods, err = ints("-memory-pods", *memory)
	return o, err
}

func ints(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a list of positive numbers", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if o.markdown != "" {
		if err := markdownFrom(o.markdown, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rep, err := run(ctx, o, log)
	if rep != nil {
		rep.print(os.Stdout)
		if werr := rep.write(o.out); werr != nil {
			fmt.Fprintln(os.Stderr, "bench:", werr)
		} else {
			fmt.Printf("\nJSON: %s\n", o.out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run builds the project and runs the parts asked for, each on a world of
// its own.
func run(ctx context.Context, o options, log *slog.Logger) (*report, error) {
	mode, err := world.ModeFromEnv()
	if err != nil {
		return nil, err
	}
	rep := &report{Command: strings.Join(append([]string{"go run ./test/bench"}, os.Args[1:]...), " "),
		Started: time.Now(), Machine: describeMachine(), Nodes: string(mode), Sources: sources}
	defer func() {
		rep.Machine.LoadEnd, rep.Minutes = loadAverage(), time.Since(rep.Started).Minutes()
		rep.realLast()
		rep.Targets = rep.targets()
	}()
	tmp, err := os.MkdirTemp("", "inplace-bench-bin-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(tmp)
	log.Info("building inplace")
	if o.bin, err = buildProject(ctx, ".", tmp); err != nil {
		return rep, err
	}
	// The real nodes first: what they cost shows early in the log.
	if o.parts["real"] {
		if err := runReal(ctx, o, rep, log); err != nil {
			rep.Errors = append(rep.Errors, "real: "+err.Error())
		}
	}
	if ctx.Err() == nil && o.parts["rollouts"] {
		if err := runRollouts(ctx, o, rep, log); err != nil {
			rep.Errors = append(rep.Errors, "rollouts: "+err.Error())
		}
	}
	if ctx.Err() == nil && (o.parts["scale"] || o.parts["latency"] || o.parts["memory"]) {
		if err := runScale(ctx, o, rep, log); err != nil {
			rep.Errors = append(rep.Errors, "scale: "+err.Error())
		}
	}
	return rep, ctx.Err()
}

// runRollouts prepares every run of every scenario on one world of the
// realistic profile, then measures them one after the other.
func runRollouts(ctx context.Context, o options, rep *report, log *slog.Logger) error {
	prof := realistic()
	scs := scenarios(o)
	rep.Profiles, rep.Scenarios = append(rep.Profiles, prof), append(rep.Scenarios, scs...)
	log.Info("starting the world", "profile", prof.Name)
	p, err := startPart(ctx, o, prof, 3, 110, log)
	if err != nil {
		return err
	}
	defer p.stop()
	if err := p.runProject(ctx, filepath.Join(p.dir, "project"), 1); err != nil {
		return err
	}
	return p.runScenarios(ctx, rep, scs, log)
}

// runScenarios prepares every run of the scenarios, waits until all are
// Ready, then measures them one after the other.
func (p *part) runScenarios(ctx context.Context, rep *report, scs []scenario, log *slog.Logger) error {
	var runs []*prepared
	for _, sc := range scs {
		for i, k := range sc.kinds() {
			log.Info("preparing", "scenario", sc.Name, "run", k)
			r, err := p.prepare(ctx, sc, k, i)
			if err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s, %s: %v", sc.Name, k, err))
				continue
			}
			runs = append(runs, r)
		}
	}
	for _, r := range runs {
		if err := p.waitReady(ctx, r); err != nil {
			return err
		}
	}
	for _, r := range runs {
		log.Info("measuring", "scenario", r.sc.Name, "run", r.kind)
		x := p.measure(ctx, r)
		log.Info("measured", "scenario", r.sc.Name, "run", r.kind, "seconds", x.Seconds, "error", x.Error)
		rep.Rollouts = append(rep.Rollouts, x)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}
