package region_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// fuzzMaxSubtasks bounds the jobs whose regions the fuzz target derives.
const fuzzMaxSubtasks = 5000

// FuzzDecodeAndBuildRegions feeds arbitrary bytes to the job-file decoder
// and derives the regions of every job it accepts: the decoder never
// panics and fails only with the package's typed errors; an accepted job
// survives an Encode/Decode round trip; region derivation in every mode
// puts every subtask in exactly one region and asks for at least one slot
// per region.
func FuzzDecodeAndBuildRegions(f *testing.F) {
	flip119, err := os.ReadFile("../examples/jobs/flip119.json")
	require.NoError(f, err)
	f.Add(flip119)
	for _, seed := range []string{
		``,
		`{}`,
		`null`,
		`{"vertices":[]}`,
		`{"vertices":[{"id":"A","parallelism":0}]}`,
		`{"vertices":[{"id":"A#1","parallelism":1}]}`,
		`{"vertices":[{"id":"A","parallelism":1}],"edges":[{"source":"A","target":"A","shipStrategy":"hash"}]}`,
		`{"vertices":[{"id":"A","parallelism":2},{"id":"B","parallelism":3}],"edges":[{"source":"A","target":"B","shipStrategy":"forward"}]}`,
		`{"vertices":[{"id":"A","parallelism":1,"resources":{"cpuMillis":-1}}]}`,
		`{"vertices":[{"id":"A","parallelism":1}],"edges":[{"source":"A","target":"B","shipStrategy":"zip"}]}`,
		`{"vertices":[{"id":"A","parallelism":1}]} trailing`,
		`{"vertices":[{"id":"s","parallelism":2},{"id":"d","parallelism":2},{"id":"j","parallelism":2}],"edges":[` +
			`{"source":"s","target":"j","shipStrategy":"forward","exchange":"pipelined"},` +
			`{"source":"d","target":"j","shipStrategy":"forward","exchange":"pipelined"},` +
			`{"source":"s","target":"d","shipStrategy":"hash","exchange":"blocking"}]}`,
		`{"vertices":[{"id":"W","parallelism":2},{"id":"P","parallelism":3},{"id":"Q","parallelism":2,"slotSharingGroup":"q"}],"edges":[` +
			`{"source":"W","target":"P","shipStrategy":"rescale","exchange":"pipelined"},` +
			`{"source":"W","target":"Q","shipStrategy":"forward"},` +
			`{"source":"P","target":"Q","shipStrategy":"rescale","exchange":"blocking"}],` +
			`"driver":{"resources":{"cpuMillis":1}},"gang":{"minSlots":2,"style":"hard"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := topology.DecodeBytes(data)
		if err != nil {
			assertTypedDecodeError(t, err)
			return
		}
		require.NotNil(t, g)

		var buf bytes.Buffer
		require.NoError(t, topology.Encode(&buf, g))
		back, err := topology.DecodeBytes(buf.Bytes())
		require.NoError(t, err, "re-decoding the encoded job:\n%s", buf.String())
		require.Equal(t, g, back, "Encode/Decode round trip:\n%s", buf.String())

		if g.NumSubtasks() > fuzzMaxSubtasks {
			return
		}
		for _, m := range exchange.Modes() {
			checkBasicInvariants(t, region.FromJob(g, m))
		}
	})
}

func assertTypedDecodeError(t *testing.T, err error) {
	var (
		ve *topology.VertexError
		ee *topology.EdgeError
		ce *topology.CycleError
		de *topology.DecodeError
	)
	typed := errors.As(err, &ve) || errors.As(err, &ee) || errors.As(err, &ce) || errors.As(err, &de) ||
		errors.Is(err, topology.ErrEmptyJob) || errors.Is(err, topology.ErrTooLarge)
	assert.True(t, typed, "untyped error %T: %v", err, err)
	assert.NotEmpty(t, err.Error())
}

func checkBasicInvariants(t *testing.T, rs *region.Regions) {
	n := rs.Topology().NumExecutionVertices()
	seen := make([]bool, n)
	largest := 0
	for r := range region.ID(rs.NumRegions()) {
		require.NotEmpty(t, rs.Members(r), "region %d", r)
		if only, one := rs.OnlyMember(r); one || rs.Size(r) == 1 {
			require.Equal(t, []topology.ExecutionVertexID{only}, rs.Members(r), "region %d: OnlyMember", r)
		}
		for _, v := range rs.Members(r) {
			require.False(t, seen[v], "subtask %d in two regions", v)
			seen[v] = true
			require.Equal(t, r, rs.RegionOf(v))
		}
		require.GreaterOrEqual(t, rs.SlotCount(r), 1, "region %d", r)
		require.Len(t, rs.Slots(r), rs.SlotCount(r), "region %d", r)
		largest = max(largest, rs.SlotCount(r))
		for _, p := range rs.ProducerRegions(r) {
			require.Less(t, p, r, "region %d consumes a later region %d", r, p)
		}
	}
	for v, ok := range seen {
		require.True(t, ok, "subtask %d in no region", v)
	}
	require.Equal(t, largest, rs.MinimumSlots())
	require.GreaterOrEqual(t, rs.MinimumSlots(), 1)
}
