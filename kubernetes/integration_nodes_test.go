package kubernetes_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/exchange"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
)

// runResult is what a run started in the background returned.
type runResult struct {
	ends []multijob.JobEnd
	err  error
}

// runInBackground starts rsk8s.Run of specs; the channel gets its result.
func runInBackground(t *testing.T, cfg rsk8s.RunnerConfig, specs ...multijob.JobSpec) <-chan runResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	out := make(chan runResult, 1)
	go func() {
		ends, err := rsk8s.Run(ctx, cfg, realClock(), poll, specs...)
		out <- runResult{ends, err}
	}()
	return out
}

// waitRun waits for a background run's result and checks every job
// finished.
func waitRun(t *testing.T, done <-chan runResult, jobs int) {
	t.Helper()
	var res runResult
	select {
	case res = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("the run did not end")
	}
	require.NoError(t, res.err)
	require.Len(t, res.ends, jobs)
	for _, end := range res.ends {
		assert.Equal(t, multijob.Finished, end.Outcome, "%s: %v", end.Job, end.Err)
	}
}

// runningOn returns a node with a pod of the run Running, if any.
func runningOn(events []k8stest.PodEvent) (string, bool) {
	for _, ev := range events {
		if ev.Type != watch.Deleted && ev.Pod.Status.Phase == corev1.PodRunning && !rsk8s.IsDriver(ev.Pod) {
			return ev.Pod.Spec.NodeName, true
		}
	}
	return "", false
}

// twoFLIP119 returns two copies of FLIP-119's job, pointwise-pipelined-only.
func twoFLIP119(t *testing.T) (a, b multijob.JobSpec, regions map[string]*region.Regions) {
	a = k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.PointwisePipelinedOnly)
	a.Name = "a"
	b = k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.PointwisePipelinedOnly)
	b.Name = "b"
	return a, b, map[string]*region.Regions{"a": a.Regions, "b": b.Regions}
}

// lossOrder records, in the order a Runner did them, the slots of one node
// it learned were lost (its log's "slot lost") and the tasks it bound
// (its trace's deploys), and keeps the deploys into a slot of that node
// made after the Runner learned the slot was lost.
type lossOrder struct {
	mu   sync.Mutex
	node string
	lost map[int]bool
	late []runfile.Event
}

// config returns cfg with a Logger and a Trace that feed o.
func (o *lossOrder) config(cfg rsk8s.RunnerConfig) rsk8s.RunnerConfig {
	o.lost = map[int]bool{}
	cfg.Logger = zap.New(lossCore{o})
	cfg.Trace = func(ev runfile.Event) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if ev.Kind == runfile.Deploy && o.lost[ev.Slot] {
			o.late = append(o.late, ev)
		}
	}
	return cfg
}

// setNode names the node whose lost slots o watches.
func (o *lossOrder) setNode(node string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.node = node
}

// lateDeploys returns the deploys into a slot after its loss, and how
// many slots of the node the Runner lost.
func (o *lossOrder) lateDeploys() ([]runfile.Event, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.late), len(o.lost)
}

// lossCore is the zap core of a lossOrder: it reads the "slot lost"
// entries and drops everything else.
type lossCore struct{ o *lossOrder }

func (c lossCore) Enabled(zapcore.Level) bool        { return true }
func (c lossCore) With([]zapcore.Field) zapcore.Core { return c }
func (c lossCore) Sync() error                       { return nil }

func (c lossCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == "slot lost" {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c lossCore) Write(_ zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	slot, _ := enc.Fields["slot"].(int64)
	node, _ := enc.Fields["node"].(string)
	c.o.mu.Lock()
	defer c.o.mu.Unlock()
	if node != "" && node == c.o.node {
		c.o.lost[int(slot)] = true
	}
	return nil
}

// TestIntegrationNodeDeletedFailsOver: a node is deleted (its pods with
// it) while a task of the run runs on it: the regions in it fail over
// (their tasks run again, a later attempt, on the nodes left), both jobs
// finish, nothing of the run is bound to the node once the runner saw it
// go (a bind in flight while the node goes is the runner's to clean up:
// no pod is left), and every region attempt was bound whole.
func TestIntegrationNodeDeletedFailsOver(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 4)
	a, b, regions := twoFLIP119(t)
	rec := k8stest.Record(t, c, "default", g)
	var order lossOrder
	done := runInBackground(t, order.config(runConfig(c, g, 0.5, multijob.Config{})), a, b)

	var victim string
	rec.WaitEvents(t, 30*time.Second, "a task of the run Running", func(evs []k8stest.PodEvent) bool {
		var ok bool
		victim, ok = runningOn(evs)
		return ok
	})
	order.setNode(victim)
	k8stest.DeleteNode(t, c, victim)
	gone := len(rec.Events())
	t.Logf("deleted node %s", victim)
	waitRun(t, done, 2)
	k8stest.NoPodsLeft(t, c, "default", g)

	events := rec.Stop(t)
	checkGangs(t, events, regions)
	late, lost := order.lateDeploys()
	assert.Equal(t, 1, lost, "the slots of %s the runner lost", victim)
	assert.Empty(t, late, "tasks bound to a slot of %s after the runner saw it lost", victim)
	retried := 0
	for _, ev := range events[gone:] {
		ref, err := rsk8s.RefOf(ev.Pod)
		require.NoError(t, err)
		if ev.Type == watch.Added && ref.Attempt > 0 {
			retried++
		}
	}
	assert.Positive(t, retried, "the regions of the deleted node ran again")
}

// TestIntegrationNodeAddedGivesSlots: two copies of FLIP-119's job run on
// two nodes; two nodes join while they run, and the jobs' pods are bound
// to them too.
func TestIntegrationNodeAddedGivesSlots(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	oneSlotNodes(t, c, g, 1, 2)
	a, b, regions := twoFLIP119(t)
	rec := k8stest.Record(t, c, "default", g)
	done := runInBackground(t, runConfig(c, g, 0.5, multijob.Config{}), a, b)

	rec.WaitEvents(t, 30*time.Second, "a task of the run Running", func(evs []k8stest.PodEvent) bool {
		_, ok := runningOn(evs)
		return ok
	})
	added := oneSlotNodes(t, c, g, 3, 2)
	waitRun(t, done, 2)
	k8stest.NoPodsLeft(t, c, "default", g)

	events := rec.Stop(t)
	checkGangs(t, events, regions)
	onNew := map[string]int{}
	for _, ev := range events {
		if n := ev.Pod.Spec.NodeName; n == added[0] || n == added[1] {
			onNew[ev.Pod.Name]++
		}
	}
	assert.NotEmpty(t, onNew, "no pod was bound to the nodes added (%v)", added)
	t.Logf("%d pods bound to the nodes added", len(onNew))
}

// TestIntegrationForeignPodRespected: a pod that is not the run's takes
// one cpu of a node of two: that node offers one slot, and the run never
// has more than one pod holding a slot on it at once, while it has two on
// the other nodes at times; the foreign pod is left as it was.
func TestIntegrationForeignPodRespected(t *testing.T) {
	c := k8stest.Client(t)
	t.Parallel()
	g := group(t)
	var nodes []k8stest.Node
	for _, n := range []string{g + "-n1", g + "-n2", g + "-n3"} {
		nodes = append(nodes, k8stest.Node{Name: n, CPU: "2", Memory: "2Gi", Pods: "110", Group: g})
	}
	k8stest.FakeNodes(t, c, nodes...)
	shared := nodes[0].Name
	foreign := foreignPod(t, c, g+"-foreign", shared, "1")

	// Two wide jobs (4 slots at once): 5 slots, so only one at a time.
	a := k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.AllPipelined)
	a.Name = "a"
	b := k8stest.JobFile(t, "../examples/jobs/flip119.json", exchange.AllPipelined)
	b.Name = "b"
	rec := k8stest.Record(t, c, "default", g)
	done := runInBackground(t, runConfig(c, g, 0.3, multijob.Config{}), a, b)
	waitRun(t, done, 2)
	k8stest.NoPodsLeft(t, c, "default", g)

	events := rec.Stop(t)
	checkGangs(t, events, map[string]*region.Regions{"a": a.Regions, "b": b.Regions})
	most := maxHolding(events)
	assert.Equal(t, 1, most[shared], "the node whose cpu the foreign pod takes half of: %v", most)
	assert.Equal(t, 2, max(most[nodes[1].Name], most[nodes[2].Name]), "the other nodes: %v", most)

	got, err := c.CoreV1().Pods("default").Get(context.Background(), foreign.Name, metav1.GetOptions{})
	require.NoError(t, err, "the foreign pod is still there")
	assert.Equal(t, foreign.UID, got.UID)
}

// foreignPod creates a pod that is not of any run on a node, requesting
// cpu, and deletes it when the test ends.
func foreignPod(t *testing.T, c kubernetes.Interface, name, node, cpu string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "web", Image: rsk8s.DefaultImage,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
	created, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rsk8s.DeletePod(ctx, c, "default", name) })
	return created
}

// maxHolding returns, per node, the most pods of the run holding a slot
// (requesting cpu, neither ended nor deleted) at once.
func maxHolding(events []k8stest.PodEvent) map[string]int {
	live := map[string]map[string]bool{}
	most := map[string]int{}
	for _, ev := range events {
		p := ev.Pod
		if p.Spec.NodeName == "" || p.Spec.Containers[0].Resources.Requests.Cpu().IsZero() {
			continue
		}
		if live[p.Spec.NodeName] == nil {
			live[p.Spec.NodeName] = map[string]bool{}
		}
		live[p.Spec.NodeName][p.Name] = ev.Type != watch.Deleted && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
		n := 0
		for _, l := range live[p.Spec.NodeName] {
			if l {
				n++
			}
		}
		most[p.Spec.NodeName] = max(most[p.Spec.NodeName], n)
	}
	return most
}
