package scheduler

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
