package kubernetes

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEventOf(t *testing.T) {
	pods := loadPods(t, "pod-phases.json")
	for name, want := range map[string]struct {
		event, deleted TaskEvent
		rejected       bool
	}{
		"pending":   {NoEvent, TaskFailed, false},
		"running":   {TaskRunning, TaskFailed, false},
		"succeeded": {TaskFinished, TaskFinished, false},
		"oomkilled": {TaskFailed, TaskFailed, false},
		"evicted":   {TaskFailed, TaskFailed, false}, // it ran: a task failure, not a rejection
		"outofcpu":  {TaskFailed, TaskFailed, true},
		"unknown":   {NoEvent, TaskFailed, false},
	} {
		p := podNamed(t, pods, name)
		assert.Equal(t, want.event, EventOf(p), name)
		assert.Equal(t, want.deleted, EventOfDeleted(p), name)
		assert.Equal(t, want.rejected, Rejected(p), name)
	}
	assert.Equal(t, "finished", TaskFinished.String())
}
