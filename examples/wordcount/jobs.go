package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/regionsched/regionsched/examples/wordcount/internal/engine"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/multijob"
)

// runJobs runs opts.jobs jobs at once and prints their results; it
// returns the exit status.
func runJobs(ctx context.Context, opts options, stdout, stderr io.Writer) int {
	cfg := engine.JobsConfig{Config: opts.Config, Policy: opts.policy}
	for i, name := range jobNames(opts.jobs) {
		spec := engine.JobSpec{Name: name, Fail: opts.fail[name]}
		if opts.priorities != nil {
			spec.Priority = opts.priorities[i]
		}
		cfg.Jobs = append(cfg.Jobs, spec)
	}
	res, err := engine.RunJobs(ctx, cfg)
	if res == nil {
		fmt.Fprintln(stderr, "wordcount:", err)
		return 2
	}
	printJobsTimeline(stderr, cfg, res)
	code := 0
	for _, jr := range res.Jobs {
		if jr.Outcome != multijob.Finished {
			code = 1
			if jr.Err != nil {
				fmt.Fprintf(stderr, "wordcount: %s: %v\n", jr.Name, jr.Err)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "wordcount:", err)
		return 1
	}
	for _, jr := range res.Jobs {
		if jr.Outcome == multijob.Finished {
			fmt.Fprintf(stdout, "== %s ==\n", jr.Name)
			printCounts(stdout, jr.Counts)
		}
	}
	return code
}

// jobRun is one region attempt of one job.
type jobRun struct {
	job int // index in the run's jobs
	engine.RegionRun
}

// printJobsTimeline writes the region attempts of every job, led by the
// job's name, in deployment order; then a summary line per job and one for
// the run.
func printJobsTimeline(w io.Writer, cfg engine.JobsConfig, res *engine.JobsResult) {
	first := res.Jobs[0]
	fmt.Fprintf(w, "%s of %s in %s mode: %s each, at least %s; %s; queue policy %s\n",
		plural.Count(len(res.Jobs), "job"), cfg.Job.Name(), cfg.Mode, plural.Count(first.Regions, "region"),
		plural.Count(first.MinimumSlots, "slot"), plural.Count(cfg.Slots, "slot"), cfg.Policy)
	var runs []jobRun
	released := 0
	for i, jr := range res.Jobs {
		for _, r := range jr.Timeline {
			runs = append(runs, jobRun{job: i, RegionRun: r})
		}
		released += jr.PartitionsReleased
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Deployed != runs[j].Deployed {
			return runs[i].Deployed < runs[j].Deployed
		}
		return runs[i].job < runs[j].job
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(runs) > 0 {
		fmt.Fprintln(tw, "job\tregion\tattempt\tdeploy\tend\toutcome\tslots\ttasks")
		for _, r := range runs {
			end, outcome := ms(r.Ended), r.Outcome
			if outcome == "" {
				end, outcome = "-", "running"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%v\t%s\n", res.Jobs[r.job].Name, r.Region, r.Attempt, ms(r.Deployed),
				end, outcome, r.Slots, strings.Join(r.Tasks, " "))
		}
		tw.Flush()
	}
	fmt.Fprintln(tw, "job\tpriority\tsubmitted\tfirst deploy\tended\toutcome\tdeployments\tfailovers\trestarts\tpeak slots")
	for _, jr := range res.Jobs {
		deployed := "-"
		if at, ok := jr.FirstDeploy(); ok {
			deployed = ms(at)
		}
		ended, outcome := "-", "stopped"
		if jr.Outcome != 0 {
			ended, outcome = ms(jr.Ended), jr.Outcome.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", jr.Name, jr.Priority, ms(jr.Submitted), deployed, ended, outcome,
			jr.Stats.RegionsDeployed, jr.Stats.Failovers, jr.Stats.RegionRestarts, jr.PeakSlots)
	}
	tw.Flush()
	fmt.Fprintf(w, "at most %s in use, %s released\n", plural.Count(res.PeakSlots, "slot"), plural.Count(released, partitionNoun(cfg.Job, cfg.Mode)))
}
