package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/region"
)

// A Ready's ended requests are those of regions it restarts that no
// longer wait: not a region that still waits, nor one it does not
// restart, nor a speculative attempt.
func TestReadyEndedRequests(t *testing.T) {
	rd := &Ready{
		Requests:  []Request{{Region: 1}, {Region: 2}, {Region: 3}, {Region: 1, Attempt: 1, Speculative: true}},
		Restarted: []Restart{{Regions: []RegionID{1}}, {Regions: []RegionID{2}}},
	}
	assert.True(t, rd.Restarts(2))
	assert.False(t, rd.Restarts(3))
	assert.Equal(t, []Request{{Region: 1}}, rd.EndedRequests([]RegionID{2}))
	assert.Nil(t, (&Ready{Requests: rd.Requests}).EndedRequests(nil), "nothing restarted")
}

// A Ready's ended tasks are the members of its ended requests, each with
// its request's attempt.
func TestReadyEndedTasks(t *testing.T) {
	rd := &Ready{
		Requests: []Request{{Region: 1, Attempt: 2, Slots: []region.Slot{{Members: []TaskID{4, 5}}, {Members: []TaskID{6}}}},
			{Region: 3, Slots: []region.Slot{{Members: []TaskID{7}}}}},
		Restarted: []Restart{{Regions: []RegionID{1}}},
	}
	var got []string
	for v, a := range rd.EndedTasks(nil) {
		got = append(got, fmt.Sprintf("%d@%d", v, a))
	}
	assert.Equal(t, []string{"4@2", "5@2", "6@2"}, got)
	for range rd.EndedTasks([]RegionID{1}) {
		t.Fatal("a region that waits again ends no task")
	}
}
