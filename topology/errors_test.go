package topology_test

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// errKind names the typed error a bad input must produce.
type errKind int

const (
	vertexErr errKind = iota
	edgeErr
	cycleErr
	decodeErr
	plainErr // a wrapped sentinel without a struct (ErrEmptyJob)
)

// assertTyped checks that err is exactly the promised struct type
// (errors.As) and that none of the other typed errors is in its chain.
func assertTyped(t *testing.T, err error, kind errKind) {
	t.Helper()
	var (
		ve *topology.VertexError
		ee *topology.EdgeError
		ce *topology.CycleError
		de *topology.DecodeError
	)
	got := map[errKind]bool{
		vertexErr: errors.As(err, &ve),
		edgeErr:   errors.As(err, &ee),
		cycleErr:  errors.As(err, &ce),
		decodeErr: errors.As(err, &de),
	}
	for k, ok := range got {
		assert.Equal(t, k == kind, ok, "error %T %q: typed error kind %d", err, err, k)
	}
}

// two vertices and a placeholder for edges, for the table below.
func job(edges string) string {
	return `{"vertices":[{"id":"src","parallelism":4},{"id":"dst","parallelism":2}],"edges":[` + edges + `]}`
}

func TestDecodeRejectsBadInput(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		sentinel error
		kind     errKind
		culprit  []string // substrings the message must contain
	}{
		// Graph structure.
		{"self loop", `{"vertices":[{"id":"loop","parallelism":1}],"edges":[{"source":"loop","target":"loop","shipStrategy":"hash"}]}`,
			topology.ErrCycle, cycleErr, []string{"job graph is cyclic: edge loop -> loop is a self-loop"}},
		{"three-cycle", `{"vertices":[{"id":"a","parallelism":1},{"id":"b","parallelism":1},{"id":"c","parallelism":1},{"id":"ok","parallelism":1}],
			"edges":[{"source":"ok","target":"a","shipStrategy":"hash"},{"source":"a","target":"b","shipStrategy":"hash"},
			{"source":"b","target":"c","shipStrategy":"rebalance"},{"source":"c","target":"a","shipStrategy":"broadcast"}]}`,
			topology.ErrCycle, cycleErr, []string{"job graph is cyclic: vertices a, b, c form the cycle a -> b -> c -> a"}},
		{"edge to unknown target", job(`{"source":"src","target":"nowhere","shipStrategy":"hash"}`),
			topology.ErrUnknownVertex, edgeErr, []string{`"nowhere"`, "edges[0]", "target"}},
		{"edge from unknown source", job(`{"source":"ghost","target":"dst","shipStrategy":"hash"}`),
			topology.ErrUnknownVertex, edgeErr, []string{`"ghost"`, "source"}},
		{"duplicate id", `{"vertices":[{"id":"A","parallelism":1},{"id":"B","parallelism":1},{"id":"A","parallelism":2}]}`,
			topology.ErrDuplicateVertex, vertexErr, []string{`"A"`, "vertices[2]", "vertices[0]"}},
		{"id with #", `{"vertices":[{"id":"A#1","parallelism":1}]}`,
			topology.ErrInvalidVertexID, vertexErr, []string{`"A#1"`, "#"}},
		{"id with space", `{"vertices":[{"id":"my op","parallelism":1}]}`,
			topology.ErrInvalidVertexID, vertexErr, []string{`"my op"`, "whitespace"}},
		{"id with tab", `{"vertices":[{"id":"op\t1","parallelism":1}]}`,
			topology.ErrInvalidVertexID, vertexErr, []string{`"op\t1"`, "whitespace"}},
		{"id with non-breaking space", `{"vertices":[{"id":"op\u00a01","parallelism":1}]}`,
			topology.ErrInvalidVertexID, vertexErr, []string{"whitespace"}},
		{"empty id", `{"vertices":[{"id":"","parallelism":1}]}`,
			topology.ErrInvalidVertexID, vertexErr, []string{"vertices[0]", "empty"}},
		{"parallelism 0", `{"vertices":[{"id":"A","parallelism":0}]}`,
			topology.ErrInvalidParallelism, vertexErr, []string{`"A"`, "parallelism", "0 is not in 1 ... 1000000"}},
		{"parallelism -1", `{"vertices":[{"id":"A","parallelism":-1}]}`,
			topology.ErrInvalidParallelism, vertexErr, []string{`"A"`, "-1"}},
		{"parallelism 1,000,001", `{"vertices":[{"id":"A","parallelism":1000001}]}`,
			topology.ErrInvalidParallelism, vertexErr, []string{`"A"`, "1000001"}},
		{"parallelism beyond any integer", `{"vertices":[{"id":"A","parallelism":99999999999999999999}]}`,
			topology.ErrInvalidField, decodeErr, []string{`"vertices[0].parallelism"`, "99999999999999999999 is out of range (valid: an integer in 1 ... 1000000)"}},
		{"durationMs beyond any integer", `{"vertices":[{"id":"A","parallelism":1,"durationMs":99999999999999999999}]}`,
			topology.ErrInvalidField, decodeErr, []string{"99999999999999999999 is out of range (valid: an integer number of ms in 0 ... 9223372036854 (about 292 years))"}},
		{"durationMs negative", `{"vertices":[{"id":"A","parallelism":1,"durationMs":-1}]}`,
			topology.ErrInvalidField, vertexErr, []string{"-1 is not in 0 ... 9223372036854 (about 292 years)"}},
		{"cpuMillis beyond any integer", `{"vertices":[{"id":"A","parallelism":1,"resources":{"cpuMillis":99999999999999999999}}]}`,
			topology.ErrInvalidField, decodeErr, []string{`"vertices[0].resources.cpuMillis"`, "out of range (valid: an integer in 0 ... 9223372036854775807)"}},
		{"forward with unequal parallelism", job(`{"source":"src","target":"dst","shipStrategy":"forward"}`),
			topology.ErrForwardParallelism, edgeErr, []string{`"src" -> "dst"`, "shipStrategy", "4", "2"}},
		{"unknown ship strategy", job(`{"source":"src","target":"dst","shipStrategy":"shuffle"}`),
			exchange.ErrUnknownShipStrategy, edgeErr, []string{`"shuffle"`, "forward, rescale, hash, rebalance, broadcast"}},
		{"unknown exchange", job(`{"source":"src","target":"dst","shipStrategy":"hash","exchange":"batch"}`),
			exchange.ErrUnknownPartitionType, edgeErr, []string{`"batch"`, "exchange", "pipelined", "pipelined-bounded", "blocking"}},

		// Unknown fields, everywhere.
		{"unknown top-level field", `{"vertices":[{"id":"A","parallelism":1}],"mode":"batch"}`,
			topology.ErrUnknownField, decodeErr, []string{`"mode"`, "valid fields: name, vertices, edges"}},
		{"unknown vertex field", `{"vertices":[{"id":"A","paralelism":1}]}`,
			topology.ErrUnknownField, decodeErr, []string{`"vertices[0].paralelism"`, "parallelism"}},
		{"unknown edge field", job(`{"source":"src","target":"dst","shipStrategy":"hash","exchnage":"blocking"}`),
			topology.ErrUnknownField, decodeErr, []string{`"edges[0].exchnage"`, "source, target, shipStrategy, exchange"}},
		{"unknown resources field", `{"vertices":[{"id":"A","parallelism":1,"resources":{"cpuMillis":1,"gpu":1}}]}`,
			topology.ErrUnknownField, decodeErr, []string{`"vertices[0].resources.gpu"`, "cpuMillis, memoryMB, extended"}},
		{"unknown driver field", `{"vertices":[{"id":"A","parallelism":1}],"driver":{"startup":5}}`,
			topology.ErrUnknownField, decodeErr, []string{`"driver.startup"`, "resources, startupMs"}},
		{"unknown driver resources field", `{"vertices":[{"id":"A","parallelism":1}],"driver":{"resources":{"cpu":5}}}`,
			topology.ErrUnknownField, decodeErr, []string{`"driver.resources.cpu"`, "cpuMillis"}},
		{"unknown gang field", `{"vertices":[{"id":"A","parallelism":1}],"gang":{"minSlots":1,"slots":2}}`,
			topology.ErrUnknownField, decodeErr, []string{`"gang.slots"`, "minSlots, style, timeoutMs"}},

		// Missing required fields.
		{"missing vertices", `{"name":"x"}`, topology.ErrMissingField, decodeErr, []string{`"vertices"`}},
		{"missing id", `{"vertices":[{"parallelism":1}]}`, topology.ErrMissingField, decodeErr, []string{`"vertices[0].id"`}},
		{"missing parallelism", `{"vertices":[{"id":"A"}]}`, topology.ErrMissingField, vertexErr, []string{`"A"`, "parallelism"}},
		{"missing source", job(`{"target":"dst","shipStrategy":"hash"}`), topology.ErrMissingField, edgeErr, []string{"edges[0]", `"source"`}},
		{"missing target", job(`{"source":"src","shipStrategy":"hash"}`), topology.ErrMissingField, edgeErr, []string{"edges[0]", `"target"`}},
		{"missing ship strategy", job(`{"source":"src","target":"dst"}`), topology.ErrMissingField, edgeErr,
			[]string{"edges[0]", `"shipStrategy"`, "forward, rescale"}},
		{"gang minSlots 0", `{"vertices":[{"id":"A","parallelism":1}],"gang":{"minSlots":0}}`, topology.ErrInvalidField, decodeErr, []string{"gang.minSlots", "at least 1", "absent: derived"}},

		// Malformed input.
		{"empty input", ``, topology.ErrMalformedJSON, decodeErr, []string{"empty"}},
		{"only whitespace", " \n\t ", topology.ErrMalformedJSON, decodeErr, []string{"empty"}},
		{"empty object", `{}`, topology.ErrMissingField, decodeErr, []string{`"vertices"`}},
		{"empty vertex list", `{"vertices":[]}`, topology.ErrEmptyJob, plainErr, []string{"no vertices"}},
		{"truncated", `{"vertices":[{"id":"A","parallelism":1}]`, topology.ErrMalformedJSON, decodeErr, []string{"end of input"}},
		{"syntax error", `{"vertices":[{"id":"A","parallelism":1,}]}`, topology.ErrMalformedJSON, decodeErr, []string{"at line 1, column 40"}},
		{"not an object", `[1,2,3]`, topology.ErrInvalidField, decodeErr, []string{"expected"}},
		{"trailing data", `{"vertices":[{"id":"A","parallelism":1}]} {"vertices":[]}`, topology.ErrMalformedJSON, decodeErr, []string{"after the JSON value"}},
		{"trailing garbage", `{"vertices":[{"id":"A","parallelism":1}]}x`, topology.ErrMalformedJSON, decodeErr, nil},
		{"string parallelism", `{"vertices":[{"id":"A","parallelism":"4"}]}`, topology.ErrInvalidField, decodeErr, []string{"vertices[0].parallelism"}},
		{"fractional parallelism", `{"vertices":[{"id":"A","parallelism":1.5}]}`, topology.ErrInvalidField, decodeErr, []string{"vertices[0].parallelism"}},
		{"numeric ship strategy", job(`{"source":"src","target":"dst","shipStrategy":2}`), topology.ErrInvalidField, decodeErr, []string{"edges[0].shipStrategy"}},
		{"resources not an object", `{"vertices":[{"id":"A","parallelism":1,"resources":"big"}]}`, topology.ErrInvalidField, decodeErr,
			[]string{"vertices[0].resources", "object"}},
		{"negative cpu", `{"vertices":[{"id":"A","parallelism":1,"resources":{"cpuMillis":-500}}]}`, resource.ErrInvalidAmount, decodeErr,
			[]string{"vertices[0].resources.cpuMillis", "-500"}},
		{"negative gpu", `{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":{"gpu":-1}}}]}`, resource.ErrInvalidAmount, decodeErr,
			[]string{"vertices[0].resources.extended.gpu"}},
		{"negative duration", `{"vertices":[{"id":"A","parallelism":1,"durationMs":-1}]}`, topology.ErrInvalidField, vertexErr, []string{`"A"`, "durationMs"}},
		{"empty slot sharing group", `{"vertices":[{"id":"A","parallelism":1,"slotSharingGroup":""}]}`, topology.ErrInvalidField, vertexErr, []string{"slotSharingGroup"}},
		{"priority out of range", `{"vertices":[{"id":"A","parallelism":1}],"priority":0}`, topology.ErrInvalidField, decodeErr, []string{"priority"}},
		{"priority above the range", `{"vertices":[{"id":"A","parallelism":1}],"priority":10001}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "priority"`, "10001", "1 ... 10000"}},
		{"priority too large for an int", `{"vertices":[{"id":"A","parallelism":1}],"priority":1e30}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "priority"`, "1e30", "1 ... 10000"}},
		{"fractional priority", `{"vertices":[{"id":"A","parallelism":1}],"priority":1.5}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "priority"`, "1.5", "1 ... 10000"}},
		{"queue ending in a dot", `{"vertices":[{"id":"A","parallelism":1}],"queue":"root."}`, topology.ErrInvalidQueueName, decodeErr,
			[]string{`field "queue"`, `"root."`, `"root" or "root." followed by dot-separated non-empty parts`}},
		{"queue with an empty part", `{"vertices":[{"id":"A","parallelism":1}],"queue":"root..a"}`, topology.ErrInvalidQueueName, decodeErr,
			[]string{`field "queue"`, `"root..a"`}},
		{"queue outside root", `{"vertices":[{"id":"A","parallelism":1}],"queue":"other"}`, topology.ErrInvalidQueueName, decodeErr,
			[]string{`field "queue"`, `"other"`}},
		{"empty queue", `{"vertices":[{"id":"A","parallelism":1}],"queue":""}`, topology.ErrInvalidQueueName, decodeErr, []string{`field "queue"`}},
		{"empty user", `{"vertices":[{"id":"A","parallelism":1}],"user":""}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "user"`, "empty", `"anonymous"`}},
		{"negative submitAtMs", `{"vertices":[{"id":"A","parallelism":1}],"submitAtMs":-1}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "submitAtMs"`, "-1", "0 ... 9223372036854"}},
		{"submitAtMs beyond a time.Duration", `{"vertices":[{"id":"A","parallelism":1}],"submitAtMs":9223372036855}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "submitAtMs"`, "9223372036855", "0 ... 9223372036854"}},
		{"submitAtMs beyond an int64", `{"vertices":[{"id":"A","parallelism":1}],"submitAtMs":18446744073709551616}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "submitAtMs"`, "0 ... 9223372036854"}},
		{"driver startupMs beyond a time.Duration", `{"vertices":[{"id":"A","parallelism":1}],"driver":{"startupMs":9223372036855}}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "driver.startupMs"`, "9223372036855", "0 ... 9223372036854"}},
		{"negative driver startupMs", `{"vertices":[{"id":"A","parallelism":1}],"driver":{"startupMs":-5}}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "driver.startupMs"`, "-5"}},
		{"fractional driver startupMs", `{"vertices":[{"id":"A","parallelism":1}],"driver":{"startupMs":0.5}}`, topology.ErrInvalidField, decodeErr,
			[]string{`field "driver.startupMs"`, "0.5", "0 ... 9223372036854"}},
		{"bad gang style", `{"vertices":[{"id":"A","parallelism":1}],"gang":{"minSlots":1,"style":"firm"}}`, topology.ErrInvalidField, decodeErr,
			[]string{"gang.style", `"firm"`, "soft, hard"}},
		{"too many subtasks", tooLarge(), topology.ErrTooLarge, plainErr, []string{"subtasks"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				g   *topology.JobGraph
				err error
			)
			require.NotPanics(t, func() { g, err = topology.Decode(strings.NewReader(tc.in)) })
			require.Error(t, err)
			assert.Nil(t, g)
			assert.ErrorIs(t, err, tc.sentinel)
			assertTyped(t, err, tc.kind)
			for _, c := range tc.culprit {
				assert.Contains(t, err.Error(), c)
			}
		})
	}
}

// tooLarge is a job of 2,148 vertices of parallelism 1,000,000: more
// subtasks than int32 ids can number.
func tooLarge() string {
	var b strings.Builder
	b.WriteString(`{"vertices":[`)
	for i := range 2148 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"v`)
		b.WriteString(strings.Repeat("x", i%3))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(itoa(i))
		b.WriteString(`","parallelism":1000000}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

func TestCycleErrorNamesTheCycleNotTheWholeGraph(t *testing.T) {
	g, err := topology.NewBuilder("c").
		AddVertex(topology.JobVertex{ID: "in", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "x", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "y", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "out", Parallelism: 1}).
		Connect("in", "x", exchange.Hash).
		Connect("x", "y", exchange.Hash).
		Connect("y", "x", exchange.Hash).
		Connect("y", "out", exchange.Hash).
		Build()
	require.Error(t, err)
	assert.Nil(t, g)
	var ce *topology.CycleError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []string{"x", "y"}, ce.Vertices)
	assert.ErrorIs(t, err, topology.ErrCycle)
	assert.NotContains(t, err.Error(), "in")
	assert.NotContains(t, err.Error(), "out")
}

func TestCycleErrorTracesOneCycleInOrder(t *testing.T) {
	// Two cycles share vertex a: a->b->a and a->c->d->a.
	_, err := topology.NewBuilder("c").
		AddVertex(topology.JobVertex{ID: "a", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "b", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "c", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "d", Parallelism: 1}).
		Connect("a", "c", exchange.Hash).
		Connect("c", "d", exchange.Hash).
		Connect("d", "a", exchange.Hash).
		Connect("a", "b", exchange.Hash).
		Connect("b", "a", exchange.Hash).
		Build()
	var ce *topology.CycleError
	require.ErrorAs(t, err, &ce)
	// Each consecutive pair (and last -> first) must be an edge.
	edges := map[[2]string]bool{{"a", "c"}: true, {"c", "d"}: true, {"d", "a"}: true, {"a", "b"}: true, {"b", "a"}: true}
	require.NotEmpty(t, ce.Vertices)
	for i, v := range ce.Vertices {
		next := ce.Vertices[(i+1)%len(ce.Vertices)]
		assert.True(t, edges[[2]string{v, next}], "%v is not a cycle: no edge %s -> %s", ce.Vertices, v, next)
	}
}

func TestDecodeReportsReadErrors(t *testing.T) {
	g, err := topology.Decode(iotest.ErrReader(errors.New("disk on fire")))
	assert.Nil(t, g)
	assert.ErrorIs(t, err, topology.ErrMalformedJSON)
	assertTyped(t, err, decodeErr)
	assert.Contains(t, err.Error(), "disk on fire")
}

func TestDecodeTreatsAbsentOptionalObjectsAsNone(t *testing.T) {
	g := decodeString(t, `{"vertices":[{"id":"A","parallelism":1}]}`)
	assert.True(t, g.Vertex(0).Resources.IsUnknown())
	assert.Nil(t, g.Submission().Driver)
	assert.Nil(t, g.Submission().Gang)
}
