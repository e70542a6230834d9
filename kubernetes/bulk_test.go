package kubernetes

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// tasks names task v "t<v>" and gives it v seconds.
type tasks struct{}

func (tasks) TaskName(v scheduler.TaskID) string { return fmt.Sprintf("t%d", v) }
func (tasks) Duration(v scheduler.TaskID) time.Duration {
	return time.Duration(v) * time.Second
}

func TestPlanBulks(t *testing.T) {
	shape := rsresource.New(1000, 1024)
	slots := map[slotpool.SlotID]slotpool.Slot{
		1: {ID: 1, Profile: shape, Node: "n1"},
		2: {ID: 2, Profile: shape, Node: "n2"},
	}
	lookup := func(id slotpool.SlotID) (slotpool.Slot, bool) { s, ok := slots[id]; return s, ok }
	deploys := []scheduler.Deployment{
		{Task: 0, Attempt: 0, Slot: 1, Region: 0},
		{Task: 1, Attempt: 0, Slot: 1, Region: 0}, // shares slot 1
		{Task: 2, Attempt: 1, Slot: 2, Region: 1},
	}
	bulks, err := PlanBulks("r1", "etl", deploys, lookup, tasks{})
	require.NoError(t, err)
	require.Len(t, bulks, 2)
	assert.Equal(t, Bulk{Job: "etl", Region: 0, Attempt: 0, Places: []Placement{
		{Ref: TaskRef{Run: "r1", Job: "etl", Task: 0}, TaskName: "t0", Slot: 1, Node: "n1", Requests: shape},
		{Ref: TaskRef{Run: "r1", Job: "etl", Task: 1}, TaskName: "t1", Slot: 1, Node: "n1", Requests: rsresource.Unknown, CompleteAfter: time.Second},
	}}, bulks[0])
	assert.Equal(t, []slotpool.SlotID{1}, bulks[0].Slots())
	assert.Equal(t, Placement{Ref: TaskRef{Run: "r1", Job: "etl", Task: 2, Attempt: 1, Region: 1}, TaskName: "t2",
		Slot: 2, Node: "n2", Requests: shape, CompleteAfter: 2 * time.Second}, bulks[1].Places[0])

	_, err = PlanBulks("r1", "etl", []scheduler.Deployment{{Task: 0, Slot: 9}}, lookup, tasks{})
	assert.ErrorIs(t, err, ErrUnknownSlot)
}
