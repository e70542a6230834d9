package simulator_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/simulator"
)

// A trace streamed through OnEvent is the recorded trace, line for line,
// with a failover in it; without Record nothing is kept.
func TestStreamedTraceIsTheRecordedOne(t *testing.T) {
	rs := region.FromJob(chains(t, 3, 4), exchange.AllPipelined)
	fail, err := simulator.ParseFailure(rs.Topology(), "v1#2@50")
	require.NoError(t, err)
	cfg := simulator.Config{Regions: rs, Cluster: slots(4), Seed: 7, Record: true, Failures: []simulator.Failure{fail}}
	recorded, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.Equal(t, simulator.Finished, recorded.Verdict)
	var want bytes.Buffer
	require.NoError(t, simulator.WriteTrace(&want, recorded.Events))

	var got bytes.Buffer
	tw := simulator.NewTraceWriter(&got)
	cfg.Record, cfg.OnEvent = false, tw.Event
	streamed, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.NoError(t, tw.Flush())
	assert.Empty(t, streamed.Events)
	assert.Equal(t, recorded.TraceEvents, streamed.TraceEvents)
	assert.Equal(t, want.String(), got.String())
}

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A write error stops the stream and comes out of Flush.
func TestTraceWriterError(t *testing.T) {
	tw := simulator.NewTraceWriter(fullDisk{})
	for range 10_000 { // more than the buffer holds
		tw.Event(simulator.Event{Task: "A#0"})
	}
	require.EqualError(t, tw.Flush(), "disk full")
}
