package topology_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// TestDecodeFieldNamesAreExactAndUnique: encoding/json matches field names
// case-insensitively and keeps the last of two equal names; docs/job-file.md
// section 1 says a typo must not silently change the job, so every object
// of a job file is checked for exact, distinct names first.
func TestDecodeFieldNamesAreExactAndUnique(t *testing.T) {
	const a = `{"id":"A","parallelism":1}`
	tests := []struct {
		name     string
		in       string
		sentinel error
		field    string   // the DecodeError's JSON path
		culprit  []string // more substrings of the message
	}{
		// An example: 3 subtasks instead of 1.
		{"capitalized duplicate of parallelism", `{"vertices":[{"id":"A","parallelism":1,"Parallelism":3}]}`,
			topology.ErrUnknownField, "vertices[0].Parallelism", []string{`did you mean "parallelism"`, "valid fields: id, parallelism, slotSharingGroup"}},
		{"upper-case id", `{"vertices":[{"ID":"A","parallelism":1}]}`,
			topology.ErrUnknownField, "vertices[0].ID", []string{`did you mean "id"`}},
		{"upper-case slot sharing group", `{"vertices":[{"id":"A","parallelism":1,"SLOTSHARINGGROUP":"g"}]}`,
			topology.ErrUnknownField, "vertices[0].SLOTSHARINGGROUP", []string{`did you mean "slotSharingGroup"`}},
		{"duplicate parallelism", `{"vertices":[{"id":"A","parallelism":1,"parallelism":3}]}`,
			topology.ErrDuplicateField, "vertices[0].parallelism", []string{"more than once"}},
		{"duplicate id in the second vertex", `{"vertices":[` + a + `,{"id":"B","id":"C","parallelism":1}]}`,
			topology.ErrDuplicateField, "vertices[1].id", nil},
		{"duplicate through an escape", `{"vertices":[{"id":"A","parallelism":1,"p\u0061rallelism":2}]}`,
			topology.ErrDuplicateField, "vertices[0].parallelism", nil},

		// Top level.
		{"upper-case vertices", `{"Vertices":[` + a + `]}`,
			topology.ErrUnknownField, "Vertices", []string{`did you mean "vertices"`, "valid fields: name, vertices, edges"}},
		{"duplicate vertices", `{"vertices":[` + a + `],"vertices":[{"id":"B","parallelism":2}]}`,
			topology.ErrDuplicateField, "vertices", nil},
		{"duplicate name", `{"name":"x","vertices":[` + a + `],"name":"y"}`,
			topology.ErrDuplicateField, "name", nil},
		{"upper-case priority", `{"vertices":[` + a + `],"Priority":7}`,
			topology.ErrUnknownField, "Priority", []string{`did you mean "priority"`}},

		// Edges.
		{"upper-case ship strategy", job(`{"source":"src","target":"dst","ShipStrategy":"hash"}`),
			topology.ErrUnknownField, "edges[0].ShipStrategy", []string{`did you mean "shipStrategy"`, "source, target, shipStrategy, exchange"}},
		{"duplicate target", job(`{"source":"src","target":"dst","target":"src","shipStrategy":"hash"}`),
			topology.ErrDuplicateField, "edges[0].target", nil},
		{"duplicate exchange", job(`{"source":"src","target":"dst","shipStrategy":"hash","exchange":"blocking","exchange":"pipelined"}`),
			topology.ErrDuplicateField, "edges[0].exchange", nil},

		// Resources.
		{"upper-case cpuMillis", `{"vertices":[{"id":"A","parallelism":1,"resources":{"CPUMillis":1}}]}`,
			topology.ErrUnknownField, "vertices[0].resources.CPUMillis", []string{`did you mean "cpuMillis"`, "cpuMillis, memoryMB, extended"}},
		{"duplicate memoryMB", `{"vertices":[{"id":"A","parallelism":1,"resources":{"memoryMB":1,"memoryMB":2}}]}`,
			topology.ErrDuplicateField, "vertices[0].resources.memoryMB", nil},
		{"duplicate extended resource", `{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":{"gpu":1,"gpu":2}}}]}`,
			topology.ErrDuplicateField, "vertices[0].resources.extended.gpu", nil},

		// Driver and gang.
		{"upper-case startupMs", `{"vertices":[` + a + `],"driver":{"StartupMs":5}}`,
			topology.ErrUnknownField, "driver.StartupMs", []string{`did you mean "startupMs"`, "resources, startupMs"}},
		{"duplicate startupMs", `{"vertices":[` + a + `],"driver":{"startupMs":5,"startupMs":6}}`,
			topology.ErrDuplicateField, "driver.startupMs", nil},
		{"duplicate driver resource", `{"vertices":[` + a + `],"driver":{"resources":{"cpuMillis":1,"cpuMillis":2}}}`,
			topology.ErrDuplicateField, "driver.resources.cpuMillis", nil},
		{"duplicate driver extended resource", `{"vertices":[` + a + `],"driver":{"resources":{"extended":{"x":1,"x":1}}}}`,
			topology.ErrDuplicateField, "driver.resources.extended.x", nil},
		{"upper-case minSlots", `{"vertices":[` + a + `],"gang":{"MinSlots":1}}`,
			topology.ErrUnknownField, "gang.MinSlots", []string{`did you mean "minSlots"`, "minSlots, style, timeoutMs"}},
		{"duplicate style", `{"vertices":[` + a + `],"gang":{"minSlots":1,"style":"soft","style":"hard"}}`,
			topology.ErrDuplicateField, "gang.style", nil},
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
			assertTyped(t, err, decodeErr)
			var de *topology.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.field, de.Field)
			assert.Contains(t, err.Error(), `field "`+tc.field+`"`)
			for _, c := range tc.culprit {
				assert.Contains(t, err.Error(), c)
			}
		})
	}
}

// TestDecodeStrictnessKeepsOtherErrors: the key check does not hide what
// encoding/json reports better.
func TestDecodeStrictnessKeepsOtherErrors(t *testing.T) {
	tests := []struct {
		name, in string
		sentinel error
		culprit  []string
	}{
		// a syntax error after a duplicate is still a syntax error
		{"syntax error after a duplicate", `{"vertices":[{"id":"A","id":"A",}]}`, topology.ErrMalformedJSON, []string{"at line 1, column 33"}},
		{"truncated after a bad key", `{"Vertices":[`, topology.ErrMalformedJSON, []string{"end of input"}},
		{"resources not an object", `{"vertices":[{"id":"A","parallelism":1,"resources":[1]}]}`, topology.ErrInvalidField,
			[]string{"vertices[0].resources", "expected an object"}},
		{"extended not an object", `{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":[1]}}]}`, topology.ErrInvalidField,
			[]string{"vertices[0].resources.extended", "expected an object"}},
		{"extended amount not an integer", `{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":{"gpu":0.5}}}]}`, topology.ErrInvalidField,
			[]string{"vertices[0].resources.extended.gpu", "expected an integer", "0.5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := topology.DecodeBytes([]byte(tc.in))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.sentinel)
			assertTyped(t, err, decodeErr)
			for _, c := range tc.culprit {
				assert.Contains(t, err.Error(), c)
			}
			assert.NotContains(t, err.Error(), "Go ")
			assert.NotContains(t, err.Error(), "int64")
		})
	}
}

// TestDecodeExplainsBadExtendedNames: an empty or malformed extended
// resource name is reported as a name problem at a clean path.
func TestDecodeExplainsBadExtendedNames(t *testing.T) {
	tests := []struct {
		in, field string
		culprit   []string
	}{
		{`{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":{"":1}}}]}`, "vertices[0].resources.extended",
			[]string{"extended resource name", `""`, "is empty", "'='", "';'"}},
		{`{"vertices":[{"id":"A","parallelism":1,"resources":{"extended":{"a=b":1}}}]}`, "vertices[0].resources.extended.a=b",
			[]string{"extended resource name", `"a=b"`, "contains '=' or ';'"}},
		{`{"vertices":[{"id":"A","parallelism":1}],"driver":{"resources":{"extended":{"x;y":2}}}}`, "driver.resources.extended.x;y",
			[]string{`"x;y"`}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := topology.DecodeBytes([]byte(tc.in))
			require.Error(t, err)
			assert.ErrorIs(t, err, resource.ErrInvalidAmount)
			var de *topology.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.field, de.Field)
			for _, c := range tc.culprit {
				assert.Contains(t, err.Error(), c)
			}
			assert.NotContains(t, err.Error(), "non-negative integer")
		})
	}
}

// TestDecodeAcceptsExactNames: the strict check accepts every field of
// The fields of docs/job-file.md written as documented, escapes resolved.
func TestDecodeAcceptsExactNames(t *testing.T) {
	g, err := topology.DecodeBytes([]byte(`{
	  "name": "all", "submitAtMs": 5, "queue": "root.q", "user": "alice", "priority": 7,
	  "driver": {"resources": {"cpuMillis": 1, "memoryMB": 2, "extended": {"gpu": 1, "GPU": 2}}, "startupMs": 3},
	  "gang": {"minSlots": 1, "style": "hard", "timeoutMs": 4},
	  "vertices": [
	    {"id": "A", "parallelism": 2, "slotSharingGroup": "g", "durationMs": 10, "bounded": true,
	     "resources": {"cpuMillis": 1, "memoryMB": 2, "extended": {"gpu": 1}}},
	    {"i\u0064": "B", "parallelism": 2}
	  ],
	  "edges": [{"source": "A", "target": "B", "shipStrategy": "forward", "exchange": "blocking"}]
	}`))
	require.NoError(t, err)
	assert.Equal(t, "B", g.Vertex(1).ID)
	assert.Equal(t, map[string]int64{"gpu": 1, "GPU": 2}, g.Submission().Driver.Resources.Extended())
}
