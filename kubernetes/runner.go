package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/multijob"
	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/slotpool"
)

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	Client kubernetes.Interface
	// Run is the run's id (CheckRun): every pod carries it.
	Run      string
	Template PodTemplate
	// Shape is the profile of a slot (NewInventory); resource.Unknown
	// makes each node one slot.
	Shape rsresource.Profile
	// NodeSelector is a label selector of the nodes to use ("": all).
	NodeSelector string
	// Jobs configures the jobs' scheduler (multijob.Config): the queues
	// and their policies in Jobs.Admission. Its Admission.Slots are set to the
	// slots of the nodes when the Runner starts (those nodes add later
	// join them); Jobs.Cluster must be nil (the in-process queues decide).
	Jobs multijob.Config
	// Binder is how bulks are bound; nil means a Binder of Client and
	// Template.
	Binder *Binder
	// Logger receives what the runner does; nil means none.
	Logger *zap.Logger
	// Scale multiplies every task's duration (RegionTasks; 0 means 1).
	Scale float64
	// Trace, if set, receives what happens to the tasks as trace events
	// (runfile.Event), At since Start: slots asked for (request), bulks
	// bound (deploy), pods Succeeded or Failed (finish, fail), pods
	// deleted by a cancel (cancel), slots given back (release).
	Trace func(runfile.Event)
	// Start is time 0 of the trace.
	Start time.Time
	// TraceJobs names the job in every trace event (a run of several
	// jobs).
	TraceJobs bool
	// DriverStartup is how long the driver of a job (JobSpec.Driver)
	// takes to come up once its pod runs, before the job's regions ask
	// for slots; nil means DefaultDriverStartup for every job.
	DriverStartup func(job string) time.Duration
	// BindParallel is how many bulks of one turn are bound at once (each
	// all-or-nothing on its own); 0 means DefaultBindParallel.
	BindParallel int
}

// DefaultBindParallel is how many bulks a Runner binds at once unless
// RunnerConfig.BindParallel says otherwise.
const DefaultBindParallel = 8

// Runner runs jobs' tasks as pods: the in-process admission (package
// admission's queues, through package multijob) decides which region
// gets which slots; the Runner makes the slots of the nodes, binds the
// pods of every granted region all together (Binder), and turns what the
// API server says of pods and nodes into the scheduler's inputs (a pod
// Running, Succeeded, Failed or deleted; a node lost or added). It reads
// the nodes and pods from the caches of informers it starts (watches of
// the API server, kept up to date between turns) and stops in Close;
// its writes (creates, binds, deletes) are API calls. It has no clock:
// Step does one turn at the time it is given (making its API calls a few
// at once, and waiting for them all), and Run calls it when the caches
// change or a timer of the Runner is due (NextWake).
type Runner struct {
	cfg    RunnerConfig
	log    *zap.Logger
	s      *multijob.Scheduler
	inv    *Inventory
	binder *Binder
	jobs   map[string]*runJob
	order  []string
	ends   []multijob.JobEnd
	pods   map[string]*trackedPod
	owner  map[slotpool.SlotID]string // the job a deployed slot is for
	tr     tracer
	// start is the time of the first Submit (a deadlock's time counts
	// from it); started says it is set.
	start   time.Time
	started bool
	// quiet: the last Step ended on a Ready with nothing in it.
	quiet bool
	// view holds the informers' caches of the nodes and pods.
	view *view
}

// runJob is what the Runner knows of a job.
type runJob struct {
	spec  multijob.JobSpec
	tasks JobTasks
	ended bool
	// driver is its driver's pod, once the admission granted it a slot.
	driver *driverPod
}

// trackedPod is a pod of the run the Runner waits to hear from.
type trackedPod struct {
	ref      TaskRef
	slot     slotpool.SlotID
	bulk     [3]int64 // job index, region, attempt
	reported TaskEvent
	last     *corev1.Pod
	ours     bool // deleted by the Runner: its end is not the task's
}

// NewRunner starts the informers of the nodes and pods (a watch of each;
// ctx bounds the wait for their first lists, Close stops them), makes
// the slots, and returns a Runner with no job yet.
func NewRunner(ctx context.Context, cfg RunnerConfig) (*Runner, error) {
	if err := CheckRun(cfg.Run); err != nil {
		return nil, err
	}
	if cfg.Jobs.Cluster != nil {
		return nil, errors.New("kubernetes: RunnerConfig.Jobs.Cluster must be nil: the in-process queues decide")
	}
	inv, err := NewInventory(cfg.Shape)
	if err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, log: cfg.Logger, inv: inv, binder: cfg.Binder, jobs: map[string]*runJob{},
		pods: map[string]*trackedPod{}, owner: map[slotpool.SlotID]string{}, tr: newTracer()}
	if r.log == nil {
		r.log = zap.NewNop()
	}
	if r.binder == nil {
		r.binder = &Binder{Client: cfg.Client, Template: cfg.Template}
	}
	if r.view, err = newView(cfg.Client, cfg.Run, cfg.Template.namespace(), cfg.NodeSelector); err != nil {
		return nil, err
	}
	if err := r.view.start(ctx); err != nil {
		r.view.close()
		return nil, err
	}
	r.view.takeRoomChanged()
	ch := inv.Observe(r.capacities())
	if len(ch.Added) == 0 {
		r.view.close()
		return nil, fmt.Errorf("kubernetes: no node offers a slot of %v (selector %q)", cfg.Shape, cfg.NodeSelector)
	}
	mc := cfg.Jobs
	mc.Admission.Slots = ch.Added
	if mc.Logger == nil {
		mc.Logger = r.log
	}
	if r.s, err = multijob.New(mc); err != nil {
		r.view.close()
		return nil, err
	}
	return r, nil
}

// Slots returns the slots the jobs share.
func (r *Runner) Slots() []slotpool.Slot { return r.inv.Slots() }

// Submit submits a job (multijob.Scheduler.Submit). A job with a driver
// (JobSpec.Driver) gets a pod for it in the slot the admission grants it
// (DriverPod), which runs until the job ends; the job starts
// (multijob.Scheduler.StartJob) RunnerConfig.DriverStartup after that pod
// runs.
func (r *Runner) Submit(now time.Time, spec multijob.JobSpec) error {
	if err := r.s.Submit(now, spec); err != nil {
		return err
	}
	if !r.started {
		r.start, r.started = now, true
	}
	r.jobs[spec.Name] = &runJob{spec: spec, tasks: RegionTasks{Regions: spec.Regions, Scale: r.cfg.Scale}}
	r.order = append(r.order, spec.Name)
	return nil
}

// Done reports whether every job submitted has ended.
func (r *Runner) Done() bool {
	for _, j := range r.jobs {
		if !j.ended {
			return false
		}
	}
	return true
}

// Ends returns how the jobs ended, in the order they ended.
func (r *Runner) Ends() []multijob.JobEnd { return r.ends }

// Step does one turn at time now: it reads the pods and nodes from the
// informers' caches (a pod's phase becomes a task event, a driver's pod
// running starts its job once the driver's startup passed, a lost node
// lost slots, a node added new slots), getting from the API server only
// the pods it waits on that the cache does not have (bound since the
// cache last heard, or deleted), fires the timeouts due, and applies the
// scheduler's Ready:
// cancels (pods deleted), ends (drivers' pods deleted), deployments
// (bulks bound all together, a bulk that cannot be bound deleted whole
// and its slots lost), and drivers granted (their pods bound). What the
// Ready's application itself reports (a bulk that could not be bound) is
// decided again in the same turn. After a Step, Deadlock says whether
// the jobs left can still progress.
func (r *Runner) Step(ctx context.Context, now time.Time) error {
	seen, err := r.observePods(ctx, now)
	if err != nil {
		return err
	}
	r.observeDrivers(now, seen)
	if err := r.observeNodes(now); err != nil {
		return err
	}
	if t, ok := r.s.NextDeadline(); ok && !t.After(now) {
		if err := r.s.Tick(now); err != nil {
			return err
		}
	}
	const maxRounds = 64
	r.quiet = false
	for range maxRounds {
		rd := r.s.Ready()
		if rd.Empty() {
			r.quiet = true
			return nil
		}
		if err := r.apply(ctx, now, rd); err != nil {
			return err
		}
	}
	return nil
}

// Close deletes every pod of the run (the end of a run, a kill, or the
// runner told to stop) and stops the informers: the Runner is done.
func (r *Runner) Close(ctx context.Context) error {
	_, err := DeleteRun(ctx, r.cfg.Client, r.cfg.Template.namespace(), r.cfg.Run)
	r.view.close()
	return err
}

// livePods is the field selector of the pods that may request something
// of their nodes.
const livePods = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

// capacities returns the capacities of the nodes for the run, from the
// informers' caches.
func (r *Runner) capacities() []NodeCapacity {
	nodes := r.view.nodeList()
	caps := make([]NodeCapacity, 0, len(nodes))
	for _, n := range nodes {
		caps = append(caps, capacityOfPods(n, r.view.podsOn(n.Name), r.cfg.Run, r.cfg.Template.Spec.Tolerations))
	}
	return caps
}

// observeNodes applies what changed of the nodes' slots since the last
// look (nodeChange), from the informers' caches. It does nothing when no
// node and no pod not of the run changed since the last look.
func (r *Runner) observeNodes(now time.Time) error {
	if !r.view.takeRoomChanged() {
		return nil
	}
	return r.nodeChange(now, r.inv.Observe(r.capacities()))
}

// slotLost tells a job one of its slots is gone (its pool loses it; the
// admission still counts it) and deletes its pods in it: a bulk that
// could not be bound.
func (r *Runner) slotLost(now time.Time, job string, slot slotpool.SlotID) {
	r.deletePodsIn(now, job, slot)
	if err := r.s.SlotLost(now, job, slot); err != nil {
		r.log.Debug("slot lost refused", zap.String("job", job), zap.Error(err))
	}
}

// deletePod deletes one pod of the run, logging a failure (the pod is
// then a leftover of the run, deleted by Close).
func (r *Runner) deletePod(name string) {
	if err := DeletePod(context.Background(), r.cfg.Client, r.cfg.Template.namespace(), name); err != nil {
		r.log.Warn("deleting pod failed", zap.String("pod", name), zap.Error(err))
	}
}
