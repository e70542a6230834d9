package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/internal/summary"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// The run command runs job files on Kubernetes with kubernetes.RunJobs:
// it parses the flags, and runcli reads the files and prints.

// runOptions are the flags of the run command.
type runOptions struct {
	flags              runcli.Flags
	kubeconfig         string
	namespace          string
	nodeSelector       string
	image              string
	slotCPU, slotMemMB int64
	queuePolicy        string
	clusterFile        string
	poll               time.Duration
	qps                float32

	policy admission.Policy
	queues []admission.QueueConfig
	users  map[string]admission.Role
}

func newRunCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "run [--kubeconfig F] [--namespace N] [--mode M] [--trace FILE] [--svg FILE] [--color-by C] JOB [JOB ...]",
		Short: "Run jobs on a Kubernetes cluster: every region's bulk a gang of pods bound all together",
		Long: `run executes job files on a Kubernetes cluster (the one of --kubeconfig, else $KUBECONFIG,
else ~/.kube/config), regionsched being the scheduler of the pods it creates
(spec.schedulerName: regionsched). The nodes' allocatable resources, less what pods not
of the run request, are cut into slots of --slot-cpu and --slot-memory; the jobs share
them through regionsched's own queues (--queue-policy, and the queues and users of
--cluster); every region's bulk becomes a gang of pods created and bound to their nodes
all together or not at all; a pod Running, Succeeded or Failed is its task's event; a
node lost (deleted, cordoned, not Ready) is a lost slot and its regions fail over. A
job starts at its submitAtMs. A pod is annotated with its vertex's durationMs (times
--duration-scale): under KWOK, which runs no container, the stage of scripts/k8s-up.sh
makes it Succeed that long after it started; on a real cluster the image runs the task.

Nothing is left behind: the end of the run, SIGINT and SIGTERM delete every pod of the
run before run exits; every pod is labelled with the run, job, task and attempt, so
that "regionsched leftovers --kubernetes" finds and deletes what a runner killed with
SIGKILL left. The trace (--trace) has the format of simulate --trace, in real
milliseconds since the start; --svg draws it as simulate --svg does, coloured by job
(by region for one job) or as --color-by says: region, vertex, job or queue. The run ends
with the summary of simulate, its figures measured on the run's trace events in real time
(docs/cli.md defines them), and a line per job saying what ran of it as pods.

Exit codes: 0 every job finished (or was killed by the events file), 1 a job failed
(the message says which and why) or the run was interrupted, 2 bad input or no API
server reachable.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return runcli.BadInput(fmt.Errorf("expected at least 1 job file argument (a path or - for standard input), got 0"))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the run's pods")
	f.StringVar(&o.nodeSelector, "node-selector", "", "label selector of the nodes to use (default: every node)")
	f.StringVar(&o.image, "image", rsk8s.DefaultImage, "image of every task's container (it gets REGIONSCHED_RUN, _JOB, _TASK, _TASK_ID and _ATTEMPT in its environment)")
	f.Int64Var(&o.slotCPU, "slot-cpu", 1000, "cpu of a slot, in millicores (with --slot-memory 0 too: every node is one slot of all it has free)")
	f.Int64Var(&o.slotMemMB, "slot-memory", 1024, "memory of a slot, in MB")
	f.StringVar(&o.queuePolicy, "queue-policy", "fifo", "the policy of every queue --cluster does not configure: fifo, priority, fairshare (or fair) or stateaware; case-insensitive")
	f.StringVar(&o.clusterFile, "cluster", "", "cluster file whose queues and users the run uses (docs/job-file.md); its slots are not used: the nodes' are")
	f.DurationVar(&o.poll, "poll", rsk8s.DefaultPoll, "the longest time between two looks at the pods and nodes (it looks as soon as they change)")
	f.Float32Var(&o.qps, "qps", 200, "requests a second to the API server at most (bursts of twice that)")
	runcli.SetValid(f, "slot-cpu", "an integer of 0 or more")
	runcli.SetValid(f, "slot-memory", "an integer of 0 or more")
	runcli.SetValid(f, "poll", "a duration of more than 0, such as 1s or 200ms")
	runcli.SetValid(f, "qps", "a number (0 or less: the client's default)")
	o.flags.Add(c, "priority changes and kills, JSON Lines (the events file of simulate; t in real ms): regionsched's admission applies or refuses them by the roles of --cluster's users; a kill deletes the job's pods",
		"write one JSON line per priority change, applied or refused by the admission")
	c.RunE = func(c *cobra.Command, args []string) error {
		return o.flags.Execute(c, args, stdin, runcli.Backend{
			Name:        "Kubernetes",
			MaxPriority: topology.MaxPriority,
			Mode:        mode.mode,
			// Slots are the nodes', the same ids whatever job holds them.
			ClusterSlotIDs: true,
			Check:          o.check,
			// Its own admission: a job in a queue with children is bad
			// input, as in simulate.
			Queues: func() []admission.QueueConfig { return o.queues },
			Run: func(ctx context.Context, in runcli.Input) (runcli.Result, error) {
				return o.run(ctx, in, mode)
			},
			Interrupted: "interrupted: every pod of the run was deleted",
		})
	}
	return c
}

// check checks the flags and reads the cluster file.
func (o *runOptions) check() error {
	if o.slotCPU < 0 || o.slotMemMB < 0 {
		return fmt.Errorf("--slot-cpu %d, --slot-memory %d: must be at least 0", o.slotCPU, o.slotMemMB)
	}
	if o.poll <= 0 {
		return fmt.Errorf("--poll must be positive, not %v", o.poll)
	}
	if err := checkNamespace(o.namespace); err != nil {
		return err
	}
	p, err := admission.ParsePolicy(o.queuePolicy)
	if err != nil {
		return fmt.Errorf("--queue-policy: %w (valid: %v)", err, runfile.QueuePolicies())
	}
	o.policy, o.users = p, map[string]admission.Role{}
	if o.clusterFile == "" {
		return nil
	}
	data, err := os.ReadFile(o.clusterFile)
	if err != nil {
		return fmt.Errorf("cluster file: %w", err)
	}
	cf, err := runfile.DecodeCluster(data)
	if err != nil {
		return fmt.Errorf("cluster file %s: %w", o.clusterFile, err)
	}
	if o.queues, err = cf.QueueConfigs(p); err != nil {
		return fmt.Errorf("cluster file %s: %w", o.clusterFile, err)
	}
	if o.users, err = cf.Roles(); err != nil {
		return fmt.Errorf("cluster file %s: %w", o.clusterFile, err)
	}
	return nil
}

// shape is the slot's profile of the flags.
func (o *runOptions) shape() rsresource.Profile {
	if o.slotCPU == 0 && o.slotMemMB == 0 {
		return rsresource.Unknown
	}
	return rsresource.New(o.slotCPU, o.slotMemMB)
}

// run runs the jobs with kubernetes.RunJobs.
func (o *runOptions) run(ctx context.Context, in runcli.Input, mode *modeFlag) (runcli.Result, error) {
	client, err := rsk8s.NewClient(o.kubeconfig, o.qps)
	if err != nil {
		return runcli.Result{}, connectError(o.kubeconfig, err)
	}
	reach, cancel := context.WithTimeout(ctx, 15*time.Second)
	_, err = client.CoreV1().Namespaces().Get(reach, o.namespace, metav1.GetOptions{})
	cancel()
	if err != nil {
		return runcli.Result{}, connectError(o.kubeconfig, fmt.Errorf("namespace %s: %w", o.namespace, err))
	}
	cfg := rsk8s.JobsConfig{
		Runner: rsk8s.RunnerConfig{
			Client: client, Run: rsk8s.NewRunID(), Shape: o.shape(), NodeSelector: o.nodeSelector, Logger: in.Logger, Scale: in.Scale,
			Template: rsk8s.PodTemplate{Namespace: o.namespace, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "task", Image: o.image}}}},
		},
		Mode: mode.mode, Events: in.Events, Users: o.users, Trace: in.Trace, Poll: o.poll,
	}
	cfg.Runner.TraceJobs = in.Several // every trace event names its job, as simulate's of several jobs
	cfg.Runner.Jobs.Admission.Queues = o.queues
	cfg.Runner.Jobs.Admission.DefaultPolicy = o.policy
	cfg.Runner.Jobs.Admission.CreateQueues = true
	if in.Audit != nil {
		cfg.Audit = func(at time.Duration, rec admission.AuditRecord) {
			if rec.Action == admission.ActionSetPriority {
				in.Audit(runcli.AuditLine{T: at.Milliseconds(), By: rec.By.Name, Job: rec.Job, Old: int64(rec.Old), New: int64(rec.New),
					Accepted: rec.Accepted, Reason: rec.Reason})
			}
		}
	}
	fmt.Fprintf(in.Summary, "run %s: pods labelled %s in namespace %s (regionsched leftovers --kubernetes finds them)\n",
		cfg.Runner.Run, rsk8s.RunSelector(cfg.Runner.Run), o.namespace)
	res, err := rsk8s.RunJobs(ctx, cfg, clock.New(), in.Jobs...)
	if err != nil {
		return runcli.Result{}, err
	}
	out := runcli.Result{Jobs: make([]runcli.Outcome, len(res.Jobs)), Slots: res.Slots, Admission: summary.AdmissionText(o.queues, o.policy),
		Queues: o.queues, DefaultPolicy: o.policy, WithdrawnSlots: res.WithdrawnSlots, RestartsRecorded: true}
	for _, ev := range res.Events {
		out.Events = append(out.Events, summary.EventOutcome{At: ev.At, By: ev.By, Action: ev.Action, Job: ev.Job, Priority: ev.Priority,
			Old: ev.Old, Applied: ev.Applied, Reason: ev.Reason})
	}
	if de := (*rsk8s.DeadlockError)(nil); errors.As(res.Stopped, &de) {
		out.Deadlock = res.Stopped
	}
	for i, j := range res.Jobs {
		out.Jobs[i] = runcli.Outcome{Name: j.Name, Err: j.Err, End: j.End,
			Work: fmt.Sprintf("%s as pods in %s, each bulk bound all together", plural.Count(j.Pods, "task run"), plural.Count(j.Bulks, "bulk"))}
		for _, r := range j.Restarts {
			out.Restarts = append(out.Restarts, summary.Restart{Job: j.Name, At: r.At, Task: r.Task, Regions: r.Regions})
		}
	}
	// The jobs' failovers in the order they happened.
	slices.SortStableFunc(out.Restarts, func(a, b summary.Restart) int { return cmp.Compare(a.At, b.At) })
	return out, nil
}
