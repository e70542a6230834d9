package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	rsresource "github.com/regionsched/regionsched/resource"
)

// capacityOf returns how many slots the Runner's admission counts.
func capacityOf(t *testing.T, r *Runner) int {
	t.Helper()
	n := 0
	for _, c := range r.Capacity() {
		n += c.N
	}
	return n
}

// TestRunnerNodeLostLeavesTheAdmission: a node deleted under a running
// region takes its slot out of the admission (its capacity one slot
// smaller from the next step on), the pods of the run on it are deleted,
// its region runs again on the nodes left, and the job finishes.
func TestRunnerNodeLostLeavesTheAdmission(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2", "k3", "k4", "k5")
	c.PrependReactor("create", "pods", bindReactor(c))
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	require.Equal(t, 5, capacityOf(t, r))
	now := time.Unix(0, 0)
	require.NoError(t, r.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "flip119"}, Regions: flip119(t)}))
	stepSynced(t, r, c, now)
	kwok(t, c, nil)
	left, err := Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	require.NotEmpty(t, left)
	lostNode := left[0].Node
	require.NoError(t, c.CoreV1().Nodes().Delete(ctx, lostNode, metav1.DeleteOptions{}))
	now = now.Add(100 * time.Millisecond)
	stepSynced(t, r, c, now)
	assert.Equal(t, 4, capacityOf(t, r), "the lost node's slot counts no more")
	left, err = Leftovers(ctx, c, "default", "r1")
	require.NoError(t, err)
	for _, l := range left {
		assert.NotEqual(t, lostNode, l.Node, "the run's pods on the lost node are deleted: %s", l.Pod)
	}
	for i := 0; i < 200 && !r.Done(); i++ {
		now = now.Add(100 * time.Millisecond)
		kwok(t, c, nil)
		stepSynced(t, r, c, now)
		left, err := Leftovers(ctx, c, "default", "r1")
		require.NoError(t, err)
		for _, l := range left {
			require.NotEqual(t, lostNode, l.Node, "nothing is bound to the lost node: %s", l.Pod)
		}
	}
	require.True(t, r.Done())
	assert.Equal(t, multijob.Finished, r.Ends()[0].Outcome, "%v", r.Ends()[0].Err)
	st, err := r.Status("flip119")
	require.NoError(t, err)
	assert.Positive(t, st.Scheduler.Stats.Failovers, "the region on the lost node failed over")
	assert.Len(t, r.Restarts("flip119"), st.Scheduler.Stats.Failovers, "a slot lost is a failover of its own, recorded")
}

// TestRunnerNodeCordonedAndBack: a node cordoned leaves the admission; the
// same node uncordoned comes back as a new slot.
func TestRunnerNodeCordonedAndBack(t *testing.T) {
	c := watchedClientset()
	kwokNodes(t, c, "k1", "k2")
	ctx := context.Background()
	r, err := NewRunner(ctx, RunnerConfig{Client: c, Run: "r1", Shape: rsresource.New(1000, 1024)})
	require.NoError(t, err)
	setUnschedulable := func(v bool) {
		node, err := c.CoreV1().Nodes().Get(ctx, "k2", metav1.GetOptions{})
		require.NoError(t, err)
		node.Spec.Unschedulable = v
		_, err = c.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	now := time.Unix(0, 0)
	setUnschedulable(true)
	stepSynced(t, r, c, now)
	assert.Equal(t, 1, capacityOf(t, r))
	setUnschedulable(false)
	stepSynced(t, r, c, now.Add(time.Second))
	assert.Equal(t, 2, capacityOf(t, r))
	assert.Len(t, r.Slots(), 2)
}
