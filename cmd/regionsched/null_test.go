package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNullIsRefusedInEveryFile: an optional field given null in a job,
// cluster or events file is exit 2 with one line naming the file (and the
// line of an events file), the field by its JSON path, and what the field
// takes instead, never read as if the field were absent.
func TestNullIsRefusedInEveryFile(t *testing.T) {
	const job = `{"name":"j","vertices":[{"id":"A","parallelism":1}]}`
	nullJob := func(t *testing.T, fields string) string {
		return writeTemp(t, "job.json", `{"name":"j","vertices":[{"id":"A","parallelism":1,`+fields+`}]}`)
	}
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want string // the whole standard error
	}{
		{"job: durationMs", func(t *testing.T) []string {
			return []string{"regions", nullJob(t, `"durationMs":null`)}
		}, `job file field "vertices[0].durationMs": invalid field value: null is not a number of milliseconds; leave the field out for its default (1000)`},
		{"job: bounded", func(t *testing.T) []string {
			return []string{"check", "--slots", "1", nullJob(t, `"bounded":null`)}
		}, `job file field "vertices[0].bounded": invalid field value: null is not true or false; leave the field out for its default (true)`},
		{"job: cpuMillis", func(t *testing.T) []string {
			return []string{"check", "--slots", "1", nullJob(t, `"resources":{"cpuMillis":null}`)}
		}, `job file field "vertices[0].resources.cpuMillis": invalid field value: null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)`},
		{"job: an extended resource", func(t *testing.T) []string {
			return []string{"simulate", "--slots", "1", nullJob(t, `"resources":{"extended":{"gpu":null}}`)}
		}, `job file field "vertices[0].resources.extended.gpu": invalid field value: null is not an amount of resource "gpu" (a non-negative integer); leave the resource out if there is none`},
		{"job: gang style, several jobs", func(t *testing.T) []string {
			other := writeTemp(t, "other.json", `{"name":"k","vertices":[{"id":"A","parallelism":1}],"gang":{"style":null}}`)
			return []string{"simulate", "--slots", "1", writeTemp(t, "job.json", job), other}
		}, `job file field "gang.style": invalid field value: null is not a gang style; leave the field out for its default ("soft")`},
		{"cluster: node", func(t *testing.T) []string {
			return []string{"check", "--cluster", writeTemp(t, "cluster.json", `{"slots":[{"count":1,"node":null}]}`), writeTemp(t, "job.json", job)}
		}, `field "slots[0].node": null is not a node name; leave the field out for its default (none: each slot is a machine of its own)`},
		{"cluster: queue maxSlots", func(t *testing.T) []string {
			return []string{"simulate", "--cluster", writeTemp(t, "cluster.json", `{"slots":[{"count":1}],"queues":[{"name":"root.a","maxSlots":null}]}`),
				writeTemp(t, "job.json", job)}
		}, `field "queues[0].maxSlots": null is not a number of slots; leave the field out for its default (unlimited)`},
		{"events: priority of a kill", func(t *testing.T) []string {
			ev := writeTemp(t, "ev.jsonl", `{"t":0,"event":"kill","job":"j","by":"a"}`+"\n"+`{"t":0,"event":"kill","job":"j","by":"a","priority":null}`+"\n")
			return []string{"simulate", "--slots", "1", "--events", ev, writeTemp(t, "job.json", job)}
		}, `line 2: field "priority": null is not a priority (valid: an integer in 1 ... 10000); leave the field out of a kill event`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args(t)
			res := execCLI(t, "", args...)
			assert.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Equal(t, 1, strings.Count(res.stderr, "\n"), "one line: %q", res.stderr)
			assert.True(t, strings.HasSuffix(strings.TrimSpace(res.stderr), tc.want), "%q does not end with %q", res.stderr, tc.want)
			file := "job.json"
			switch {
			case strings.HasPrefix(tc.name, "cluster"):
				file = "cluster.json"
			case strings.HasPrefix(tc.name, "events"):
				file = "ev.jsonl"
			case strings.Contains(tc.name, "several"):
				file = "other.json"
			}
			assert.Contains(t, res.stderr, file, "names the file")
		})
	}
}
