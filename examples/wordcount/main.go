// Command wordcount runs a real word count with a top-k on the regionsched
// scheduler: its tasks are goroutines, its pipelined edges bounded
// channels, its blocking edges files and its hybrid edges logs read while
// they grow, on N local slots the scheduler hands out region by region
// (package internal/engine explains how). Every mode counts the same.
//
//	go run ./examples/wordcount --slots 2 --mode pointwise-pipelined-only --fail counter#1@5
//	go run ./examples/wordcount --slots 15 --mode ALL_EXCHANGES_HYBRID_FULL
//	go run ./examples/wordcount --input book.txt --top 20
//	cat *.txt | go run ./examples/wordcount --input -
//
// The graph is examples/jobs/wordcount.json (text-source -rescale->
// tokenizer -hash-> counter -forward-> top-k -rebalance-> result-sink);
// --job runs another graph of the same operators. The input is --input
// FILE (- for standard input), one line of text per line, or by default
// the text in testdata (built into the program).
//
// --fail ID#i@MS (repeatable) makes the first attempt of subtask ID#i
// fail once it has run MS ms, as regionsched simulate --fail does: at the
// first record it handles from then on, or at the end of its input if
// that comes first. --fail ID#i fails it after --fail-after records
// instead.
//
// --speculation turns the scheduler's speculative execution on (Flink's
// defaults, but --speculation-baseline-lower-bound and
// --speculation-check-interval, whose defaults of a minute and a second
// are long for tasks of milliseconds); --slow ID#i@DURATION (repeatable)
// makes the first attempt of subtask ID#i a straggler, held back that
// long once its work is done. A slow task then gets a second attempt; the
// first to finish wins, the other is canceled, and the output is that of
// a run without either:
//
//	go run ./examples/wordcount --slots 4 --speculation --speculation-baseline-lower-bound 100ms --speculation-check-interval 10ms --slow counter#1@1m
//
// In all-hybrid-full mode every task is a region of its own and may be
// speculated, those with hybrid outputs too: each attempt writes its own
// hybrid logs, and the consumers read the slow task's results from the
// winning attempt once it finished:
//
//	go run ./examples/wordcount --slots 40 --mode all-hybrid-full --speculation --speculation-baseline-lower-bound 100ms --speculation-check-interval 10ms --slow counter#1@1m
//
// Standard output: the result, one "count word" line per word, by count
// (largest first) then word. Standard error: one line per region attempt
// (region, attempt, deploy and end time, outcome, slots, tasks), then a
// summary. Exit status 0 when the job finished, 1 when it failed (too few
// slots: the scheduler's verdict), 2 on bad usage or input.
//
// # Several jobs
//
// --jobs N with N > 1 runs N copies of the job at once, named wc-1 ...
// wc-N, on the same --slots slots: they are submitted together to one
// multijob.Driver, whose admission hands the slots out among them by
// --queue-policy (fifo, priority, fairshare or stateaware), each job's
// priority given by --priorities (one per job, comma-separated, 1 ...
// 10000; 5000 each by default). --fail then names the job as well:
// --fail wc-2:counter#1@5.
//
//	go run ./examples/wordcount --jobs 3 --slots 2 --queue-policy priority --priorities 1000,5000,9000
//
// Standard output with N > 1: for each job that finished, in job order, a
// header line "== wc-1 ==" and then its result, exactly what the job
// alone prints. Standard error: a line naming the jobs, the mode, the
// slots and the policy; one line per region attempt, led by the job's
// name, in deployment order; one summary line per job (priority, when it
// was submitted, first deployed and ended, its outcome, deployments,
// failovers, region restarts and most slots held); then the slots in use
// at most and the blocking (and hybrid) partitions released. Exit status 0 when every
// job finished, 1 when one did not (its error follows the summary), 2 on
// bad usage or input.
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
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/examples/wordcount/internal/engine"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

//go:embed testdata/*.txt
var testdata embed.FS

// defaultJobs are where the default graph is looked for: from the
// repository root, and from this directory (go test).
var defaultJobs = []string{"examples/jobs/wordcount.json", "../jobs/wordcount.json"}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the program: it parses args, runs the job (or jobs) and prints;
// it returns the exit status. stdin is what --input - reads.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseArgs(args, stdin, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "wordcount:", err)
		return 2
	}
	if opts.jobs > 1 {
		return runJobs(ctx, opts, stdout, stderr)
	}
	cfg := opts.Config
	cfg.Fail = opts.fail[jobName(1)]
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
	printCounts(stdout, res.Counts)
	return 0
}

// printCounts writes a result, one "count word" line per word.
func printCounts(w io.Writer, counts []engine.WordCount) {
	for _, wc := range counts {
		fmt.Fprintf(w, "%d %s\n", wc.Count, wc.Word)
	}
}

// options is the command line: the run's configuration (its Fail unset)
// and the jobs.
type options struct {
	engine.Config
	// jobs is how many jobs run at once, named jobName(1) ... .
	jobs int
	// policy orders the jobs' grants; priorities holds each job's
	// priority (nil: the default for all).
	policy     admission.Policy
	priorities []int
	// fail holds the --fail subtasks by job name.
	fail map[string][]string
}

// jobName names the i-th job (from 1).
func jobName(i int) string { return fmt.Sprintf("wc-%d", i) }

// parseArgs turns the command line into a run's configuration; stdin is
// what --input - reads.
func parseArgs(args []string, stdin io.Reader, stderr io.Writer) (options, error) {
	fset := flag.NewFlagSet("wordcount", flag.ContinueOnError)
	fset.SetOutput(stderr)
	slots := fset.Int("slots", 2, "number of local slots")
	modeName := fset.String("mode", "all-blocking", "global data exchange mode: "+strings.Join(exchange.ModeNames(), ", "))
	jobFile := fset.String("job", "", "job graph file (default examples/jobs/wordcount.json)")
	input := fset.String("input", "", "the text to count: a `FILE`, or - for standard input (default: the built-in text of testdata)")
	top := fset.Int("top", 10, "print the K most frequent words (0: all)")
	failAfter := fset.Int("fail-after", engine.DefaultFailAfter, "records a --fail attempt processes before it fails")
	jobs := fset.Int("jobs", 1, "number of jobs to run at once on the slots, named wc-1 ... wc-N")
	policyName := fset.String("queue-policy", "fifo", "with --jobs > 1, how the jobs' queue hands out the slots: "+strings.Join(policyNames, ", "))
	prioList := fset.String("priorities", "", "with --jobs > 1, each job's priority, comma-separated, one per job, "+
		fmt.Sprintf("%d ... %d (default %d each)", admission.MinPriority, admission.MaxPriority, admission.DefaultPriority))
	speculation := fset.Bool("speculation", false, "speculative execution of slow tasks, with Flink's defaults but for the two below")
	lowerBound := fset.Duration("speculation-baseline-lower-bound", time.Minute, "with --speculation, the least time a task runs before it can be found slow")
	checkEvery := fset.Duration("speculation-check-interval", time.Second, "with --speculation, how often the slow-task detector looks")
	var slow []string
	fset.Func("slow", "make the first attempt of subtask ID#i a straggler: `ID#i@DURATION` holds it back that long once its work is done (repeatable; one job only)", func(s string) error {
		slow = append(slow, s)
		return nil
	})
	var fail []string
	fset.Func("fail", "make the first attempt of subtask ID#i fail once it has run MS ms: `ID#i@MS`, as regionsched simulate --fail (or at the end of its input, if sooner); "+
		"ID#i alone fails it after --fail-after records; repeatable; with --jobs > 1 name the job: wc-2:counter#1@5", func(s string) error {
		fail = append(fail, s)
		return nil
	})
	if err := fset.Parse(args); err != nil {
		return options{}, err
	}
	if fset.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q (the graph is given with --job)", fset.Arg(0))
	}
	mode, err := exchange.ParseMode(*modeName)
	if err != nil {
		return options{}, err
	}
	if *jobs < 1 {
		return options{}, fmt.Errorf("--jobs %d: must be at least 1", *jobs)
	}
	policy, err := admission.ParsePolicy(*policyName)
	if err != nil {
		return options{}, fmt.Errorf("--queue-policy %q: unknown policy (valid: %s)", *policyName, strings.Join(policyNames, ", "))
	}
	priorities, err := parsePriorities(*prioList, *jobs)
	if err != nil {
		return options{}, err
	}
	failByJob, err := parseFail(fail, *jobs)
	if err != nil {
		return options{}, err
	}
	job, err := loadJob(*jobFile)
	if err != nil {
		return options{}, err
	}
	text, err := loadInput(*input, stdin)
	if err != nil {
		return options{}, err
	}
	if *top < 0 || *failAfter < 1 {
		return options{}, errors.New("--top must be at least 0 and --fail-after at least 1")
	}
	spec, err := speculationOf(*speculation, *lowerBound, *checkEvery, *jobs, len(slow))
	if err != nil {
		return options{}, err
	}
	return options{
		Config: engine.Config{Job: job, Mode: mode, Slots: *slots, Text: text, TopK: *top, FailAfter: *failAfter, Slow: slow, Speculation: spec},
		jobs:   *jobs, policy: policy, priorities: priorities, fail: failByJob,
	}, nil
}

// policyNames are the valid --queue-policy values.
var policyNames = []string{
	admission.FIFO.String(), admission.Priority.String(), admission.FairShare.String(), admission.StateAware.String(),
}

// parsePriorities reads --priorities: one priority per job, or none.
func parsePriorities(list string, jobs int) ([]int, error) {
	if list == "" {
		return nil, nil
	}
	fields := strings.Split(list, ",")
	if len(fields) != jobs {
		return nil, fmt.Errorf("--priorities %q: %d values for %d jobs (give one per job)", list, len(fields), jobs)
	}
	out := make([]int, jobs)
	for i, f := range fields {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < admission.MinPriority || p > admission.MaxPriority {
			return nil, fmt.Errorf("--priorities: %q for %s is not a priority (%d ... %d)",
				f, jobName(i+1), admission.MinPriority, admission.MaxPriority)
		}
		out[i] = p
	}
	return out, nil
}

// parseFail sorts the --fail values by job: "JOB:ID#i@MS" (or
// "JOB:ID#i"), or "ID#i@MS" (or "ID#i") when there is one job; the
// engine checks the subtask and the time.
func parseFail(values []string, jobs int) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range values {
		job, task, named := strings.Cut(v, ":")
		if !named {
			if jobs > 1 {
				return nil, fmt.Errorf("--fail %q: with --jobs %d, name the job as in %s:%s", v, jobs, jobName(1), v)
			}
			job, task = jobName(1), v
		}
		if !slices.Contains(jobNames(jobs), job) {
			return nil, fmt.Errorf("--fail %q: no job %q (the jobs are %s ... %s)", v, job, jobName(1), jobName(jobs))
		}
		out[job] = append(out[job], task)
	}
	return out, nil
}

// jobNames names n jobs.
func jobNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = jobName(i + 1)
	}
	return out
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

// loadInput returns the lines to count: of the file path, of stdin for
// "-", or of the built-in text for "".
func loadInput(path string, stdin io.Reader) ([]string, error) {
	var data []byte
	var err error
	switch path {
	case "":
		return loadText()
	case "-":
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("--input -: reading standard input: %w", err)
		}
	default:
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
	}
	return splitLines(string(data)), nil
}

// splitLines splits text into its lines, without their ends ("\n" or
// "\r\n"); a last line without an end counts, an empty text has none.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
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
	fmt.Fprintf(w, "%s in %s mode: %s, at least %s; %s\n",
		cfg.Job.Name(), cfg.Mode, plural.Count(res.Regions, "region"), plural.Count(res.MinimumSlots, "slot"), plural.Count(cfg.Slots, "slot"))
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
	deployed := plural.Count(res.Stats.RegionsDeployed, "region deployment")
	if n := res.Stats.RegionsShared; n > 0 {
		deployed += fmt.Sprintf(" (%d into their hybrid producers' slots)", n)
	}
	fmt.Fprintf(w, "%s, %s, %s, at most %s in use, %s released\n",
		deployed, plural.Count(res.Stats.Failovers, "failover"),
		plural.Count(res.Stats.RegionRestarts, "region restart"), plural.Count(res.PeakSlots, "slot"),
		plural.Count(res.PartitionsReleased, partitionNoun(cfg.Job, cfg.Mode)))
}

// partitionNoun names the partitions a run releases: "blocking partition",
// or "blocking or hybrid partition" for a job with hybrid edges.
func partitionNoun(job *topology.JobGraph, mode exchange.Mode) string {
	if job.HybridEdges(mode) > 0 {
		return "blocking or hybrid partition"
	}
	return "blocking partition"
}

// ms formats a time since the start of the run in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
