package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/simulator"
)

// speculationFlags are simulate's flags of speculative execution and of
// the straggler model (docs/cli.md).
type speculationFlags struct {
	on         bool
	knobs      scheduler.Speculation
	stragglers float64
	factor     float64
}

// The flags of the speculation knobs, by the Speculation field they set.
var speculationKnobFlags = []string{
	"speculation-baseline-ratio", "speculation-baseline-multiplier", "speculation-baseline-lower-bound",
	"speculation-check-interval", "speculation-max-concurrent-executions", "speculation-block-slow-node-duration",
}

func addSpeculationFlags(c *cobra.Command) *speculationFlags {
	f := &speculationFlags{knobs: scheduler.DefaultSpeculation()}
	d := f.knobs
	fs := c.Flags()
	fs.BoolVar(&f.on, "speculation", false, "speculative execution of slow tasks, with Flink's defaults (the --speculation-* flags change them); the summary compares the run with the same run without it (region policy; with several jobs a speculative attempt gets a slot only while no regular request of any job waits for it)")
	fs.Float64Var(&f.knobs.BaselineRatio, "speculation-baseline-ratio", d.BaselineRatio, "share of a vertex's subtasks that must have finished before the detector has a baseline, 0 ... 1")
	fs.Float64Var(&f.knobs.BaselineMultiplier, "speculation-baseline-multiplier", d.BaselineMultiplier, "the baseline is this times the median execution time of the finished subtasks, at least 1")
	fs.DurationVar(&f.knobs.BaselineLowerBound, "speculation-baseline-lower-bound", d.BaselineLowerBound, "the least baseline (a Go duration: 1m, 500ms, 0)")
	fs.DurationVar(&f.knobs.CheckInterval, "speculation-check-interval", d.CheckInterval, "how often the detector looks for slow tasks, more than 0")
	fs.IntVar(&f.knobs.MaxConcurrentExecutions, "speculation-max-concurrent-executions", d.MaxConcurrentExecutions,
		fmt.Sprintf("attempts of one task at once, its first included, 2 ... %d", scheduler.MaxSpeculativeExecutions))
	fs.DurationVar(&f.knobs.BlockSlowNodeDuration, "speculation-block-slow-node-duration", d.BlockSlowNodeDuration, "how long a node found slow gets no speculative attempt (0: never blocked)")
	fs.Float64Var(&f.stragglers, "stragglers", 0, "share of attempts, 0 ... 1, that run --straggler-factor times slower, drawn from --seed")
	fs.Float64Var(&f.factor, "straggler-factor", simulator.DefaultStragglerFactor, fmt.Sprintf("how many times slower a straggler runs, 1 ... %d", simulator.MaxStragglerFactor))
	// What a value that does not parse is told (runcli.FlagError); the
	// ranges are checked after parsing.
	runcli.SetValid(fs, "speculation-baseline-ratio", "a number in 0 ... 1")
	runcli.SetValid(fs, "speculation-baseline-multiplier", "a number in 1 ... 1e9")
	runcli.SetValid(fs, "speculation-baseline-lower-bound", "a duration of 0 or more, such as 1m, 500ms or 0")
	runcli.SetValid(fs, "speculation-check-interval", "a duration of more than 0, such as 1s or 100ms")
	runcli.SetValid(fs, "speculation-max-concurrent-executions", fmt.Sprintf("an integer in 2 ... %d", scheduler.MaxSpeculativeExecutions))
	runcli.SetValid(fs, "speculation-block-slow-node-duration", "a duration of 0 or more, such as 1m or 0")
	runcli.SetValid(fs, "stragglers", "a number in 0 ... 1")
	runcli.SetValid(fs, "straggler-factor", fmt.Sprintf("a number in 1 ... %d", simulator.MaxStragglerFactor))
	return f
}

// apply checks the flags and sets them in cfg.
func (f *speculationFlags) apply(c *cobra.Command, cfg *simulator.Config) error {
	if !f.on {
		for _, name := range speculationKnobFlags {
			if c.Flags().Changed(name) {
				return badInput(fmt.Errorf("--%s: needs --speculation", name))
			}
		}
	}
	if !(f.stragglers >= 0 && f.stragglers <= 1) {
		return badInput(fmt.Errorf("--stragglers %g: a share of attempts, 0 ... 1", f.stragglers))
	}
	if !(f.factor >= 1 && f.factor <= simulator.MaxStragglerFactor) {
		return badInput(fmt.Errorf("--straggler-factor %g: 1 ... %d", f.factor, simulator.MaxStragglerFactor))
	}
	cfg.Stragglers, cfg.StragglerFactor = f.stragglers, f.factor
	if !f.on {
		return nil
	}
	if cfg.Policy == simulator.EagerPolicy {
		return badInput(fmt.Errorf("--speculation: needs --policy region (the eager baseline has no scheduler to speculate)"))
	}
	if err := f.knobs.Validate(); err != nil {
		return badInput(fmt.Errorf("--speculation: %w", err))
	}
	cfg.Speculation = f.knobs
	return nil
}

// run simulates cfg; with speculation, also the same run without it
// (without is nil otherwise).
func (f *speculationFlags) run(cfg simulator.Config) (res, without *simulator.Result, err error) {
	if !cfg.Speculation.Enabled {
		res, err = simulator.Run(cfg)
		return res, nil, err
	}
	return simulator.CompareSpeculation(cfg)
}

// printSpeculation writes the summary lines of stragglers and speculation.
func printSpeculation(out io.Writer, f *speculationFlags, res, without *simulator.Result) {
	sp := res.Speculation
	if f.stragglers > 0 {
		fmt.Fprintf(out, "stragglers:        %s ran %gx slower (--stragglers %g)\n", count(sp.Stragglers, "attempt"), f.factor, f.stragglers)
	}
	if without == nil {
		return
	}
	fmt.Fprintf(out, "speculation:       %s started (%d asked for), %d won; %.0f s of slot time in them\n",
		count(sp.Started, "speculative attempt"), sp.Requested, sp.Won, sp.SlotTime.Seconds())
	saved := without.Makespan - res.Makespan
	fmt.Fprintf(out, "without it:        makespan %d ms: speculation saved %d ms (%s); slot time %s against %s (%s)\n",
		without.Makespan.Milliseconds(), saved.Milliseconds(), strings.TrimPrefix(changePercent(saved, without.Makespan), "+"),
		hours(res.SlotTime), hours(without.SlotTime), changePercent(res.SlotTime-without.SlotTime, without.SlotTime))
}

// changePercent renders part of whole as "+12.5%" or "-3.0%".
func changePercent(part, whole time.Duration) string {
	if whole <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(part)/float64(whole))
}

// hours renders a slot time in hours: "6.95 slot-hours".
func hours(d time.Duration) string { return fmt.Sprintf("%.2f slot-hours", d.Hours()) }

// slotNodes lists the node of each slot of a cluster file, in the order
// the simulator numbers the slots (nil without a file or nodes).
func slotNodes(cf *runfile.Cluster) []string {
	if cf == nil {
		return nil
	}
	return cf.SlotNodes()
}
