package topology_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/topology"
)

// TestDecodeRefusesNull: null is no value of any field of a job file
// (docs/job-file.md): an optional field given null is refused, naming the
// field by its JSON path and saying what it takes, rather than read as
// absent (or, inside a resource profile, as a known zero). A required
// field given null is missing, as before.
func TestDecodeRefusesNull(t *testing.T) {
	const a = `{"id":"A","parallelism":1}`
	vertex := func(fields string) string {
		return `{"vertices":[{"id":"A","parallelism":1,` + fields + `}]}`
	}
	top := func(fields string) string { return `{"vertices":[` + a + `],` + fields + `}` }
	edge := func(fields string) string {
		return `{"vertices":[` + a + `,{"id":"B","parallelism":1}],"edges":[{"source":"A","target":"B","shipStrategy":"hash",` + fields + `}]}`
	}
	tests := []struct {
		name, in string
		field    string // the DecodeError's JSON path
		detail   string // the DecodeError's Detail, exactly
	}{
		// Top level.
		{"name", top(`"name":null`), "name", `null is not a job name; leave the field out for its default ("": a multi-job run names the job after its file)`},
		{"edges", top(`"edges":null`), "edges", "null is not a list of edges; leave the field out for its default (no edges)"},
		{"submitAtMs", top(`"submitAtMs":null`), "submitAtMs", "null is not a number of milliseconds; leave the field out for its default (0)"},
		{"queue", top(`"queue":null`), "queue", `null is not a queue name; leave the field out for its default ("root.default")`},
		{"user", top(`"user":null`), "user", `null is not a user name; leave the field out for its default ("anonymous")`},
		{"priority", top(`"priority":null`), "priority", "null is not a priority; leave the field out for its default (5000)"},
		{"driver", top(`"driver":null`), "driver", "null is not a driver; leave the field out for its default (none)"},
		{"gang", top(`"gang":null`), "gang", "null is not a gang; leave the field out for its default (none)"},

		// Driver and gang.
		{"driver resources", top(`"driver":{"resources":null}`), "driver.resources",
			"null is not a resource profile; leave the field out for its default (unknown: fits any slot)"},
		{"driver startupMs", top(`"driver":{"startupMs":null}`), "driver.startupMs", "null is not a number of milliseconds; leave the field out for its default (1000)"},
		{"driver resources cpuMillis", top(`"driver":{"resources":{"cpuMillis":null}}`), "driver.resources.cpuMillis",
			"null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)"},
		{"gang minSlots", top(`"gang":{"minSlots":null}`), "gang.minSlots", "null is not a number of slots; leave the field out for its default (derived from the job)"},
		{"gang style", top(`"gang":{"style":null}`), "gang.style", `null is not a gang style; leave the field out for its default ("soft")`},
		{"gang timeoutMs", top(`"gang":{"timeoutMs":null}`), "gang.timeoutMs", "null is not a number of milliseconds; leave the field out for its default (900000)"},

		// Vertices.
		{"slotSharingGroup", vertex(`"slotSharingGroup":null`), "vertices[0].slotSharingGroup",
			`null is not a slot sharing group; leave the field out for its default ("default")`},
		{"resources", vertex(`"resources":null`), "vertices[0].resources",
			"null is not a resource profile; leave the field out for its default (unknown: fits any slot)"},
		{"durationMs", vertex(`"durationMs":null`), "vertices[0].durationMs", "null is not a number of milliseconds; leave the field out for its default (1000)"},
		{"bounded", vertex(`"bounded":null`), "vertices[0].bounded", "null is not true or false; leave the field out for its default (true)"},
		{"in the second vertex", `{"vertices":[` + a + `,{"id":"B","parallelism":1,"bounded":null}]}`, "vertices[1].bounded",
			"null is not true or false; leave the field out for its default (true)"},

		// Resources.
		{"cpuMillis", vertex(`"resources":{"cpuMillis":null}`), "vertices[0].resources.cpuMillis",
			"null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)"},
		{"memoryMB", vertex(`"resources":{"cpuMillis":1,"memoryMB":null}`), "vertices[0].resources.memoryMB",
			"null is not an amount of memory (a non-negative integer, in MB); leave the field out for its default (0)"},
		{"extended", vertex(`"resources":{"extended":null}`), "vertices[0].resources.extended",
			"null is not a map of extended resources; leave the field out for its default (none)"},
		{"an extended resource", vertex(`"resources":{"extended":{"gpu":1,"fpga":null}}`), "vertices[0].resources.extended.fpga",
			`null is not an amount of resource "fpga" (a non-negative integer); leave the resource out if there is none`},
		{"an extended resource named like a job field", vertex(`"resources":{"extended":{"priority":null}}`), "vertices[0].resources.extended.priority",
			`null is not an amount of resource "priority" (a non-negative integer); leave the resource out if there is none`},

		// Edges.
		{"exchange", edge(`"exchange":null`), "edges[0].exchange", "null is not an exchange; leave the field out for its default (the global mode's choice)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := topology.Decode(strings.NewReader(tc.in))
			assert.Nil(t, g)
			var de *topology.DecodeError
			require.ErrorAs(t, err, &de, "%v", err)
			assert.Equal(t, tc.field, de.Field)
			assert.ErrorIs(t, err, topology.ErrInvalidField)
			assert.Equal(t, tc.detail, de.Detail)
			assert.Equal(t, `job file field "`+tc.field+`": invalid field value: `+tc.detail, err.Error())
		})
	}
}

// TestDecodeNullRequiredFieldIsMissing: a required field given null is
// reported missing, as if it were absent.
func TestDecodeNullRequiredFieldIsMissing(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"vertices":null}`, `job file field "vertices": missing required field`},
		{`{"vertices":[{"id":null,"parallelism":1}]}`, `job file field "vertices[0].id": missing required field`},
		{`{"vertices":[{"id":"A","parallelism":null}]}`, `vertex "A" (vertices[0]) field "parallelism": missing required field`},
		{`{"vertices":[{"id":"A","parallelism":1}],"edges":[{"source":"A","target":null,"shipStrategy":"hash"}]}`,
			`edge "A" -> <missing> (edges[0]) field "target": missing required field`},
		{`{"vertices":[{"id":"A","parallelism":1}],"edges":[{"source":"A","target":"A","shipStrategy":null}]}`,
			`edge "A" -> "A" (edges[0]) field "shipStrategy": missing required field`},
	} {
		_, err := topology.Decode(strings.NewReader(tc.in))
		require.ErrorIs(t, err, topology.ErrMissingField, tc.in)
		assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%s: %v", tc.in, err)
	}
}

// TestDecodeNullKeepsOtherErrors: the first problem of an object in
// document order wins, a misspelt name before a null.
func TestDecodeNullKeepsOtherErrors(t *testing.T) {
	_, err := topology.Decode(strings.NewReader(`{"vertices":[{"id":"A","parallelism":1,"Bounded":true,"durationMs":null}]}`))
	assert.ErrorIs(t, err, topology.ErrUnknownField)
	_, err = topology.Decode(strings.NewReader(`{"vertices":[{"id":"A","parallelism":1,"durationMs":null,"durationMs":5}]}`))
	assert.ErrorIs(t, err, topology.ErrDuplicateField)
	g := decodeString(t, `{"vertices":[{"id":"A","parallelism":1,"durationMs":5,"resources":{"cpuMillis":0}}]}`)
	assert.False(t, g.Vertex(0).Resources.IsUnknown())
}
