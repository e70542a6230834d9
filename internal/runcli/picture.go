package runcli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/timeline"
)

// colorByValues are the values of --color-by, in the order the help and
// the errors list them.
var colorByValues = []string{"auto", "region", "vertex", "job", "queue"}

// colorByModes are the timeline's modes of colorByValues but auto.
var colorByModes = map[string]timeline.ColorBy{"region": timeline.ColorByRegion, "vertex": timeline.ColorByVertex,
	"job": timeline.ColorByJob, "queue": timeline.ColorByQueue}

// ColorByHelp is the help of --color-by.
const ColorByHelp = "what the colours of the --svg picture stand for: auto (one job: region, or job vertex when regions do not tell its tasks apart; several jobs: job), " +
	"region, vertex (job vertex), job, or queue (the queue each job was submitted to: one colour per queue); case-insensitive"

// ColorByError is the error of a --color-by value that names no
// colouring.
type ColorByError struct {
	// Value is the value given; Valid are the values --color-by takes.
	Value string
	Valid []string
}

// Error names the flag, the value given and the valid ones.
func (e *ColorByError) Error() string {
	return fmt.Sprintf("--color-by: unknown colouring %q (valid: %s)", e.Value, strings.Join(e.Valid, ", "))
}

// ColorBy is a value of --color-by: what the colours of a picture stand
// for, or the command's own choice (auto).
type ColorBy struct {
	mode timeline.ColorBy
	auto bool
}

// ParseColorBy parses a value of --color-by, ignoring case and
// surrounding space. A value that names no colouring is bad input (a
// *ColorByError listing the valid values).
func ParseColorBy(s string) (ColorBy, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "auto" {
		return ColorBy{auto: true}, nil
	}
	if m, ok := colorByModes[v]; ok {
		return ColorBy{mode: m}, nil
	}
	return ColorBy{}, BadInput(&ColorByError{Value: s, Valid: colorByValues})
}

// ByJob reports whether the colours stand for jobs or their queues:
// the picture of a run of one job then needs its job named in the events
// (NameJob).
func (c ColorBy) ByJob() bool {
	return !c.auto && (c.mode == timeline.ColorByJob || c.mode == timeline.ColorByQueue)
}

// NameJob returns a function that hands next the events of a run of one
// job, whose events name no job, with the job named: job. A picture
// coloured by job or queue draws them as it draws a run of several jobs.
func NameJob(job string, next func(runfile.Event)) func(runfile.Event) {
	return func(e runfile.Event) {
		if e.Job == "" {
			e.Job = job
		}
		next(e)
	}
}

// Apply sets what the colours of tl stand for, the picture of a run of
// jobs: unless auto, the colouring asked, with the queues of jobs
// (JobQueues) when coloured by queue; auto leaves tl.ColorBy, the
// command's default.
func (c ColorBy) Apply(tl *timeline.Timeline, jobs []runfile.Job) {
	if c.auto {
		return
	}
	tl.ColorBy = c.mode
	if c.mode == timeline.ColorByQueue {
		tl.JobQueues = JobQueues(jobs)
	}
}

// DefaultQueue is the queue of a job that names none.
const DefaultQueue = summary.DefaultQueue

// JobQueues maps every job to the queue it is submitted to (its job
// file's "queue", DefaultQueue when it names none).
func JobQueues(jobs []runfile.Job) map[string]string {
	out := make(map[string]string, len(jobs))
	for _, j := range jobs {
		q := j.Job.Submission().Queue
		if q == "" {
			q = DefaultQueue
		}
		out[j.Name] = q
	}
	return out
}

// runPicture is the --svg picture of a run on a cluster, drawn from its
// trace events as they come (at most a few thousand are kept, then the
// picture aggregates: timeline.Recorder).
type runPicture struct {
	rec   *timeline.Recorder
	color ColorBy
	last  time.Duration         // the time of the last event
	take  func(e runfile.Event) // hands an event to rec (naming the job of a run of one job coloured by job or queue)
}

// newRunPicture returns the picture of a run of jobs coloured as color
// says.
func newRunPicture(color ColorBy, jobs []runfile.Job) *runPicture {
	p := &runPicture{rec: timeline.NewRecorder(), color: color}
	p.take = p.rec.Event
	if len(jobs) == 1 && color.ByJob() {
		p.take = NameJob(jobs[0].Name, p.take)
	}
	return p
}

// event takes the next trace event of the run.
func (p *runPicture) event(e runfile.Event) {
	p.last = max(p.last, e.At)
	p.take(e)
}

// write draws the run to path (StdoutPath: standard output), coloured by
// job (by region for one job) unless --color-by says otherwise, titled with the backend and the
// jobs, its verdict line (the summary's, sum) under the title, and removes the recorder's
// temporary file.
func (p *runPicture) write(c *cobra.Command, path, backend string, jobs []runfile.Job, sum *runSummary) error {
	defer p.rec.Close()
	verdict := runfile.Finished
	if !sum.ok {
		verdict = runfile.Failed
	}
	title := Count(len(jobs), "job")
	if backend != "" {
		title += " on " + backend
	}
	tl := timeline.Timeline{Title: title, Subtitle: "real time since the start of the run; " + outcomesText(sum.per),
		Slots: p.rec.Slots(), Makespan: p.last, Verdict: verdict, Reason: sum.verdict,
		ColorBy: timeline.ColorByJob, Jobs: JobNames(jobs)}
	if len(jobs) == 1 {
		tl.ColorBy = timeline.ColorAuto
	}
	p.color.Apply(&tl, jobs)
	if err := WriteOutput(c, path, func(w io.Writer) error { return p.rec.WriteSVG(w, tl) }); err != nil {
		return err
	}
	return p.rec.Close()
}

// outcomesText says how each job ended and when, for the picture's
// subtitle (only the count beyond 12 jobs).
func outcomesText(jobs []summary.Job) string {
	if len(jobs) > 12 {
		return Count(len(jobs), "job")
	}
	parts := make([]string, len(jobs))
	for i, j := range jobs {
		parts[i] = fmt.Sprintf("%s %s at %s", j.Name, j.Verdict, summary.Millis(j.Finished))
		if j.Finished < 0 {
			parts[i] = fmt.Sprintf("%s %s", j.Name, summary.JobOutcome(j))
		}
	}
	return strings.Join(parts, "; ")
}
