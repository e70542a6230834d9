package summary_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/summary"
)

func TestEventLine(t *testing.T) {
	assert.Equal(t, "event 1500 ms: alice set-priority late 9000 -> 1: applied",
		summary.EventLine(summary.EventOutcome{At: 1500 * ms, By: "alice", Action: admission.ActionSetPriority, Job: "late", Priority: 1, Old: 9000, Applied: true}))
	assert.Equal(t, "event 100 ms: bob set-priority etl -> 6000: refused: role user may change only their own jobs",
		summary.EventLine(summary.EventOutcome{At: 100 * ms, By: "bob", Action: admission.ActionSetPriority, Job: "etl", Priority: 6000,
			Reason: "role user may change only their own jobs"}))
	assert.Equal(t, "event 3000 ms: mallory kill low: refused: no role",
		summary.EventLine(summary.EventOutcome{At: 3000 * ms, By: "mallory", Action: admission.ActionKill, Job: "low", Reason: "no role"}))
	assert.Equal(t, "event 0 ms: alice kill low: applied", summary.EventLine(summary.EventOutcome{By: "alice", Action: admission.ActionKill, Job: "low", Applied: true}))
}

func TestRestartLines(t *testing.T) {
	assert.Equal(t, "  at 4000 ms C#0 failed: restarted regions 1-3",
		summary.RestartLine(summary.Restart{At: 4000 * ms, Task: "C#0", Regions: []int{1, 2, 3}}))
	assert.Equal(t, "  at 3000 ms task#7 failed: restarted region 7", summary.RestartLine(summary.Restart{At: 3000 * ms, Task: "task#7", Regions: []int{7}}))
	assert.Equal(t, "0-3, 7, 9-12", summary.Ranges([]int{0, 1, 2, 3, 7, 9, 10, 11, 12}))
	assert.Equal(t, "-", summary.Ranges(nil))
	f, r := summary.RestartCounts([]summary.Restart{{Regions: []int{1, 2}}, {Regions: []int{4}}})
	assert.Equal(t, [2]int{2, 3}, [2]int{f, r})
}

func TestImplicitQueues(t *testing.T) {
	queues := []admission.QueueConfig{{Name: "root.prod"}}
	assert.Equal(t, []string{"root.default", "root.dev"}, summary.ImplicitQueues([]string{"", "root.prod", "root.dev", "root.default", "root.dev"}, queues))
	assert.Empty(t, summary.ImplicitQueues([]string{"root.dev"}, nil), "no queue configured: nothing to say")
	assert.Equal(t, "not in the cluster file's queues, so created with --queue-policy priority: root.a, root.b",
		summary.ImplicitQueuesLine(admission.Priority, []string{"root.a", "root.b"}))
}

func TestEagerDeployedLine(t *testing.T) {
	assert.Equal(t, "regions scheduled: none (eager: 12 deployments of 12 tasks, one by one)", summary.EagerDeployedLine(12, "12 tasks"))
	assert.Equal(t, "regions scheduled: none (eager: 1 deployment, one by one)", summary.EagerDeployedLine(1, ""))
}
