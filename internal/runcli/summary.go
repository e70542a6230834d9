package runcli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/summary"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
)

// runSummary is the summary of a run on a cluster, in the lines of
// simulate's (package summary): its figures computed from the run's trace
// events, with the backend's own facts on lines of their own.
type runSummary struct {
	backend string // the cluster's name, "Slurm"
	mode    string
	jobs    []runfile.Job
	res     Result
	per     []summary.Job
	fig     summary.Figures
	// several: summed up as a run of several jobs (simulate's choice: more
	// than one job, an events file or an audit, or queues configured).
	several bool
	drivers bool
	// regions and tasks of a run of one job, under the run's mode.
	regions, tasks int
	verdict        string
	ok             bool
}

// newRunSummary sums up a run of jobs on backend b that ended as res, its
// trace events in acc; several says it is a run of several jobs in
// simulate's sense (Input.Several).
func newRunSummary(b Backend, jobs []runfile.Job, res Result, acc *summary.Accumulator, several bool) *runSummary {
	s := &runSummary{backend: b.Name, mode: b.Mode.String(), jobs: jobs, res: res,
		several: several || len(jobs) > 1 || len(res.Queues) > 0}
	var end time.Duration
	s.per = make([]summary.Job, len(jobs))
	for i, j := range jobs {
		sub := j.Job.Submission()
		s.drivers = s.drivers || sub.Driver != nil
		pj := summary.Job{Name: j.Name, Submitted: sub.SubmitAt, FirstDeploy: acc.FirstDeploy(j.Name), Finished: -1, Verdict: runfile.Finished}
		if i < len(res.Jobs) {
			o := res.Jobs[i]
			pj.Finished = o.End
			end = max(end, o.End)
			pj.Verdict, pj.Reason = jobEnd(o.Err, res.Deadlock)
			if pj.Verdict == runfile.Deadlock {
				pj.Finished = -1
			}
		} else { // a backend that said nothing of the job
			pj.Verdict, pj.Reason = runfile.Deadlock, "never finished"
		}
		s.per[i] = pj
	}
	s.fig = acc.Figures(end, res.Slots, res.Queues)
	deadlock := "deadlock: jobs never finish"
	if res.Deadlock != nil {
		deadlock = res.Deadlock.Error()
	}
	if s.several {
		s.verdict, s.ok = summary.JobsVerdict(s.per, deadlock)
	} else {
		rs := region.FromJob(jobs[0].Job, b.Mode)
		s.regions, s.tasks = rs.NumRegions(), rs.Topology().NumExecutionVertices()
		s.verdict, s.ok = summary.JobVerdict(s.per[0], s.tasks, deadlock)
	}
	return s
}

// jobEnd is how a job that ended with err (nil: it finished) did, in
// simulate's words: its verdict, and why it did not finish ("killed: by
// bob", "rejected: ...", "failed: ...").
func jobEnd(err, deadlock error) (runfile.Verdict, string) {
	if err == nil {
		return runfile.Finished, ""
	}
	if ke := (*admission.KilledError)(nil); errors.As(err, &ke) {
		return runfile.Killed, "killed: by " + ke.By.Name
	}
	if deadlock != nil && errors.Is(err, deadlock) {
		return runfile.Deadlock, "never finished"
	}
	if re := (*admission.RejectedError)(nil); errors.As(err, &re) {
		return runfile.Failed, fmt.Sprintf("rejected: %v", err)
	}
	if re := (*scheduler.RegionError)(nil); errors.As(err, &re) {
		return runfile.Failed, "failed: " + re.Reason()
	}
	return runfile.Failed, fmt.Sprintf("failed: %v", err)
}

// jobQueueNames lists the queue each job names ("" for none), in order.
func jobQueueNames(jobs []runfile.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Job.Submission().Queue
	}
	return out
}

// print writes the summary to w, its verdict last; a run that did not
// succeed is a negative verdict.
func (s *runSummary) print(w io.Writer) error {
	on := ""
	if s.backend != "" {
		on = " on " + s.backend
	}
	if s.several {
		admitted := s.res.Admission
		if admitted == "" {
			admitted = "admission by " + cmp.Or(s.backend, "the cluster")
		}
		fmt.Fprintf(w, "%s%s: mode %s, policy region, %s, %s\n", Count(len(s.jobs), "job"), on, s.mode, admitted, Count(s.res.Slots, "slot"))
		if implicit := summary.ImplicitQueues(jobQueueNames(s.jobs), s.res.Queues); len(implicit) > 0 {
			fmt.Fprintln(w, summary.ImplicitQueuesLine(s.res.DefaultPolicy, implicit))
		}
		for _, j := range s.per {
			fmt.Fprintln(w, summary.JobLine(j))
		}
		for _, ev := range s.res.Events {
			fmt.Fprintln(w, summary.EventLine(ev))
		}
	} else {
		fmt.Fprintf(w, "job %q%s: mode %s, policy region, %s\n", s.jobs[0].Name, on, s.mode, Count(s.res.Slots, "slot"))
	}
	prefix := strings.ToLower(s.backend)
	if prefix == "" {
		prefix = "cluster"
	}
	for i, o := range s.res.Jobs {
		if o.Work != "" && i < len(s.jobs) {
			fmt.Fprintf(w, "%s: job %s: %s\n", prefix, o.Name, o.Work)
		}
	}
	f := s.fig
	fmt.Fprintln(w, summary.MakespanLine(f.Makespan, summary.RealTime))
	fmt.Fprintln(w, summary.UtilizationLine(f.WorkUtilization))
	fmt.Fprintln(w, summary.HeldIdleLine(f.HeldWaiting))
	if s.drivers {
		fmt.Fprintln(w, summary.DriversLine(f.DriverHeld))
	}
	of := ""
	if !s.several {
		of = Count(s.regions, "region")
	}
	fmt.Fprintln(w, summary.DeployedLine("regions scheduled:", f.Deployments, of, f.Shared))
	failovers, regionRestarts := f.Failovers, f.RegionRestarts
	if s.res.RestartsRecorded {
		failovers, regionRestarts = summary.RestartCounts(s.res.Restarts)
	}
	fmt.Fprintln(w, summary.RestartsLine(failovers, regionRestarts))
	if !s.several && s.res.RestartsRecorded {
		for _, r := range s.res.Restarts {
			fmt.Fprintln(w, summary.RestartLine(r))
		}
	}
	if f.Reclaims > 0 {
		fmt.Fprintln(w, summary.ReclaimsLine(f.Reclaims, f.ReclaimedSlots, s.res.WithdrawnSlots))
	}
	if s.several {
		summary.PrintQueues(w, f.Queues)
	}
	fmt.Fprintln(w, s.verdict)
	if !s.ok {
		return Negative(s.verdict)
	}
	return nil
}
