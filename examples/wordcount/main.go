// Command wordcount runs a real word count with a top-k on the regionsched
// scheduler: its tasks are goroutines, its pipelined edges bounded
// channels and its blocking edges files, on N local slots the scheduler
// hands out region by region (package internal/engine explains how).
//
//	go run ./examples/wordcount --slots 2 --mode pointwise-pipelined-only --fail counter#1
//
// The graph is examples/jobs/wordcount.json (text-source -rescale->
// tokenizer -hash-> counter -forward-> top-k -rebalance-> result-sink);
// --job runs another graph of the same operators. The input is the text
// in testdata (built into the program).
//
// Standard output: the result, one "count word" line per word, by count
// (largest first) then word. Standard error: one line per region attempt
// (region, attempt, deploy and end time, outcome, slots, tasks), then a
// summary. Exit status 0 when the job finished, 1 when it failed (too few
// slots: the scheduler's verdict), 2 on bad usage or input.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regionsched/regionsched/examples/wordcount/internal/engine"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

//go:embed testdata/*.txt
var testdata embed.FS

// defaultJobs are where the default graph is looked for: from the
// repository root, and from this directory (go test).
var defaultJobs = []string{"examples/jobs/wordcount.json", "../jobs/wordcount.json"}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it parses args, runs the job and prints; it returns
// the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "wordcount:", err)
		return 2
	}
	res, err := engine.Run(ctx, cfg)
	if res != nil {
		printTimeline(stderr, cfg, res)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wordcount:", err)
		var re *scheduler.RegionError
		if errors.As(err, &re) || res != nil {
			return 1
		}
		return 2
	}
	for _, wc := range res.Counts {
		fmt.Fprintf(stdout, "%d %s\n", wc.Count, wc.Word)
	}
	return 0
}

// parseArgs turns the command line into a run's configuration.
func parseArgs(args []string, stderr io.Writer) (engine.Config, error) {
	fset := flag.NewFlagSet("wordcount", flag.ContinueOnError)
	fset.SetOutput(stderr)
	slots := fset.Int("slots", 2, "number of local slots")
	modeName := fset.String("mode", "all-blocking", "global data exchange mode: "+strings.Join(exchange.ModeNames(), ", "))
	jobFile := fset.String("job", "", "job graph file (default examples/jobs/wordcount.json)")
	top := fset.Int("top", 10, "print the K most frequent words (0: all)")
	failAfter := fset.Int("fail-after", engine.DefaultFailAfter, "records a --fail attempt processes before it fails")
	var fail []string
	fset.Func("fail", "make the first attempt of subtask ID#i fail midway (repeatable)", func(s string) error {
		fail = append(fail, s)
		return nil
	})
	if err := fset.Parse(args); err != nil {
		return engine.Config{}, err
	}
	if fset.NArg() > 0 {
		return engine.Config{}, fmt.Errorf("unexpected argument %q (the graph is given with --job)", fset.Arg(0))
	}
	mode, err := exchange.ParseMode(*modeName)
	if err != nil {
		return engine.Config{}, err
	}
	job, err := loadJob(*jobFile)
	if err != nil {
		return engine.Config{}, err
	}
	text, err := loadText()
	if err != nil {
		return engine.Config{}, err
	}
	if *top < 0 || *failAfter < 1 {
		return engine.Config{}, errors.New("--top must be at least 0 and --fail-after at least 1")
	}
	return engine.Config{Job: job, Mode: mode, Slots: *slots, Text: text, TopK: *top, Fail: fail, FailAfter: *failAfter}, nil
}

// loadJob decodes the job file, or the default graph.
func loadJob(path string) (*topology.JobGraph, error) {
	if path == "" {
		for _, p := range defaultJobs {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return nil, errors.New("examples/jobs/wordcount.json not found: run from the repository root, or give --job FILE")
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	job, err := topology.DecodeBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return job, nil
}

// loadText returns the lines of the built-in text, file by file in name
// order.
func loadText() ([]string, error) {
	files, err := fs.Glob(testdata, "testdata/*.txt")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, f := range files {
		data, err := testdata.ReadFile(f)
		if err != nil {
			return nil, err
		}
		lines = append(lines, strings.Split(strings.TrimRight(string(data), "\n"), "\n")...)
	}
	return lines, nil
}

// printTimeline writes one line per region attempt and a summary.
func printTimeline(w io.Writer, cfg engine.Config, res *engine.Result) {
	fmt.Fprintf(w, "%s in %s mode: %d regions, at least %d slots; %d slots\n",
		cfg.Job.Name(), cfg.Mode, res.Regions, res.MinimumSlots, cfg.Slots)
	if len(res.Timeline) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "region\tattempt\tdeploy\tend\toutcome\tslots\ttasks")
	for _, r := range res.Timeline {
		end, outcome := ms(r.Ended), r.Outcome
		if outcome == "" {
			end, outcome = "-", "running"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%v\t%s\n", r.Region, r.Attempt, ms(r.Deployed), end, outcome, r.Slots, strings.Join(r.Tasks, " "))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d region deployments, %d failovers, %d region restarts, at most %d slots in use, %d blocking partitions released\n",
		res.Stats.RegionsDeployed, res.Stats.Failovers, res.Stats.RegionRestarts, res.PeakSlots, res.PartitionsReleased)
}

// ms formats a time since the start of the run in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
