package kubernetes

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/regionsched/regionsched/scheduler"
)

// The labels and annotations every pod of a run carries. The labels name
// what the pod runs, so that a selector finds the pods of a run, of a job
// of it, or of one task attempt, and so that the API server is the record
// of what each task did (a pod Succeeded is a task attempt finished); the
// annotations keep what a label cannot hold.
const (
	// LabelRun is the run's id (Run): which runner the pod belongs to.
	LabelRun = "regionsched.io/run"
	// LabelJob is the job's name in label form (JobLabel).
	LabelJob = "regionsched.io/job"
	// LabelTask is the task's id (scheduler.TaskID, in decimal).
	LabelTask = "regionsched.io/task"
	// LabelAttempt is the attempt the task was deployed with
	// (scheduler.Attempt, in decimal).
	LabelAttempt = "regionsched.io/attempt"
	// LabelRegion is the pipelined region the task was deployed with (in
	// decimal): with the job and the attempt it names the pod's bulk, the
	// gang bound all together.
	LabelRegion = "regionsched.io/region"

	// AnnotationJob is the job's name as given (LabelJob may be shortened).
	AnnotationJob = "regionsched.io/job-name"
	// AnnotationTaskName is the task's name ("vertex#subtask").
	AnnotationTaskName = "regionsched.io/task-name"
	// AnnotationSlot is the slot the task was deployed in (in decimal).
	AnnotationSlot = "regionsched.io/slot"
	// AnnotationNode is the node the pod is to be bound to.
	AnnotationNode = "regionsched.io/node"
	// AnnotationCompleteAfter is how long the task runs under KWOK (a Go
	// duration such as "5s"): the stage of scripts/k8s-up.sh moves a
	// Running pod so annotated to Succeeded that long after it started.
	AnnotationCompleteAfter = "regionsched.io/complete-after"

	// SchedulerName is the spec.schedulerName of every pod regionsched
	// creates: no other scheduler binds them.
	SchedulerName = "regionsched"
)

// maxLabel is the longest label value Kubernetes accepts.
const maxLabel = 63

// TaskRef names one task attempt of one job of one run: what the labels of
// its pod say.
type TaskRef struct {
	Run     string
	Job     string // the job's name as given
	Task    scheduler.TaskID
	Attempt scheduler.Attempt
	Region  scheduler.RegionID
}

// String renders the ref as "run/job/task@attempt".
func (r TaskRef) String() string {
	return fmt.Sprintf("%s/%s/%d@%d", r.Run, r.Job, r.Task, r.Attempt)
}

// CheckRun returns nil if run can be a run id: a label value of 1 to 40
// characters, lower-case letters, digits and '-', starting and ending
// with a letter or digit (it is also part of every pod's name). Otherwise
// a *RunError.
func CheckRun(run string) error {
	if run == "" || len(run) > 40 || !isDNSLabel(run) {
		return &RunError{Run: run}
	}
	return nil
}

// JobLabel returns the label form of a job name: the name itself if it is
// a valid DNS label of at most 40 characters, else a lower-cased form of
// it, cut short, followed by a hash of the whole name, so that two names
// never share a label unless they collide in 32 bits of FNV-1a.
func JobLabel(job string) string {
	if len(job) <= 40 && isDNSLabel(job) {
		return job
	}
	var b strings.Builder
	for _, c := range strings.ToLower(job) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 30 {
			break
		}
	}
	h := fnv.New32a()
	h.Write([]byte(job))
	prefix := strings.Trim(b.String(), "-")
	if prefix == "" {
		prefix = "job"
	}
	return fmt.Sprintf("%s-%08x", prefix, h.Sum32())
}

// isDNSLabel reports whether s is lower-case letters, digits and '-',
// starting and ending with a letter or digit, of at most 63 characters.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > maxLabel {
		return false
	}
	for i, c := range s {
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// PodName returns the name of the pod of a task attempt:
// "rs-<run>-<job label>-t<task>-a<attempt>", unique within a namespace for
// every task attempt of every run.
func PodName(r TaskRef) string {
	return fmt.Sprintf("rs-%s-%s-t%d-a%d", r.Run, JobLabel(r.Job), r.Task, r.Attempt)
}

// Labels returns the labels of the pod of r.
func Labels(r TaskRef) map[string]string {
	return map[string]string{
		LabelRun:     r.Run,
		LabelJob:     JobLabel(r.Job),
		LabelTask:    strconv.FormatInt(int64(r.Task), 10),
		LabelAttempt: strconv.FormatInt(int64(r.Attempt), 10),
		LabelRegion:  strconv.FormatInt(int64(r.Region), 10),
	}
}

// RunSelector returns the label selector of every pod of a run, or of
// every pod regionsched made if run is "".
func RunSelector(run string) string {
	if run == "" {
		return LabelRun
	}
	return LabelRun + "=" + run
}

// RefOf reads the task attempt a pod runs from its labels and
// annotations. A pod regionsched did not make, or one whose labels were
// changed into nonsense, returns a *LabelError naming the label.
func RefOf(pod *corev1.Pod) (TaskRef, error) {
	l := pod.Labels
	run, ok := l[LabelRun]
	if !ok {
		return TaskRef{}, &LabelError{Pod: pod.Name, Label: LabelRun, Value: "", Err: ErrNotOurs}
	}
	job := pod.Annotations[AnnotationJob]
	if job == "" || JobLabel(job) != l[LabelJob] {
		return TaskRef{}, &LabelError{Pod: pod.Name, Label: LabelJob, Value: l[LabelJob], Err: ErrBadLabel}
	}
	r := TaskRef{Run: run, Job: job}
	for _, f := range []struct {
		label string
		set   func(int64)
	}{
		{LabelTask, func(v int64) { r.Task = scheduler.TaskID(v) }},
		{LabelAttempt, func(v int64) { r.Attempt = scheduler.Attempt(v) }},
		{LabelRegion, func(v int64) { r.Region = scheduler.RegionID(v) }},
	} {
		v, err := strconv.ParseInt(l[f.label], 10, 32)
		if err != nil || v < 0 {
			return TaskRef{}, &LabelError{Pod: pod.Name, Label: f.label, Value: l[f.label], Err: ErrBadLabel}
		}
		f.set(v)
	}
	return r, nil
}

// SlotOf reads the slot a pod of regionsched was deployed in.
func SlotOf(pod *corev1.Pod) (scheduler.SlotID, error) {
	v, err := strconv.ParseInt(pod.Annotations[AnnotationSlot], 10, 64)
	if err != nil {
		return 0, &LabelError{Pod: pod.Name, Label: AnnotationSlot, Value: pod.Annotations[AnnotationSlot], Err: ErrBadLabel}
	}
	return scheduler.SlotID(v), nil
}

// CompleteAfter returns the annotation value of a task duration: whole
// milliseconds ("1500ms"), at least one.
func CompleteAfter(d time.Duration) string {
	return strconv.FormatInt(max(d.Milliseconds(), 1), 10) + "ms"
}
