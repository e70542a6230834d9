package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueueCapacitiesBadInput: capacities that do not add up, and a job
// in a queue with children, are bad input (exit 2) naming the queues.
func TestQueueCapacitiesBadInput(t *testing.T) {
	job := "../../examples/jobs/flood/spark-1.json"
	t.Run("children's guarantees over the parent's", func(t *testing.T) {
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 8}], "queues": [{"name": "root.prod", "guaranteedSlots": 4},
			{"name": "root.prod.a", "guaranteedSlots": 3}, {"name": "root.prod.b", "guaranteedSlots": 2}]}`)
		res := execCLI(t, "", "simulate", "--cluster", cluster, job)
		require.Equal(t, 2, res.code, res.stdout)
		assert.Contains(t, res.stderr, `field "queues[0].guaranteedSlots": queue root.prod: the guaranteedSlots of its children root.prod.a (3), root.prod.b (2) add up to 5, over its guaranteedSlots 4`)
	})
	t.Run("a guarantee over its max", func(t *testing.T) {
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 8}], "queues": [{"name": "root.a", "guaranteedSlots": 4, "maxSlots": 3}]}`)
		res := execCLI(t, "", "check", "--cluster", cluster, job)
		require.Equal(t, 2, res.code, res.stdout)
		assert.Contains(t, res.stderr, "queue root.a: guaranteedSlots 4 is over its maxSlots 3")
	})
	t.Run("a job in a queue with children", func(t *testing.T) {
		data, err := os.ReadFile(job)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "spark-1.json")
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"submitAtMs"`, `"queue": "root.prod", "submitAtMs"`, 1)), 0o600))
		cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 8}], "queues": [{"name": "root.prod.etl", "maxSlots": 4}]}`)
		for _, cmd := range []string{"simulate", "check"} { // the file and its field named, as for any bad field
			res := execCLI(t, "", cmd, "--cluster", cluster, path)
			require.Equal(t, 2, res.code, res.stdout)
			assert.Equal(t, "regionsched "+cmd+": "+path+`: job file field "queue": queue root.prod has the child queue root.prod.etl and may not hold job "spark-1": `+
				"jobs run in queues without children (name one, e.g. root.prod.etl)\n", res.stderr)
		}
		// A job in root, with a job in root.default: root has a child.
		res := execCLI(t, "", "simulate", "--slots", "2", job, writeTemp(t, "k.json", `{"name": "k", "queue": "root", "vertices": [{"id": "v", "parallelism": 1}]}`))
		require.Equal(t, 2, res.code, res.stdout)
		assert.Contains(t, res.stderr, `k.json: job file field "queue": queue root has the child queue root.default and may not hold job "k"`)
	})
}

// TestQueueSummary: with queues as tenants, the summary shows per queue
// its guarantee, its max, the most slots it held and its share of the
// slot time; a run in one queue shows none of it.
func TestQueueSummary(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, q := range []string{"root.prod.etl", "root.adhoc"} {
		data, err := os.ReadFile(fmt.Sprintf("../../examples/jobs/flood/spark-%d.json", i+1))
		require.NoError(t, err)
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("spark-%d.json", i+1)))
		require.NoError(t, os.WriteFile(paths[i], []byte(strings.Replace(string(data), `"submitAtMs"`, `"queue": "`+q+`", "submitAtMs"`, 1)), 0o600))
	}
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 8}], "queues": [{"name": "root.prod", "guaranteedSlots": 4, "maxSlots": 6},
		{"name": "root.prod.etl", "guaranteedSlots": 2}, {"name": "root.adhoc", "maxSlots": 4}]}`)
	res := execCLI(t, "", append([]string{"simulate", "--cluster", cluster}, paths...)...)
	require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Regexp(t, `(?m)^queue root.adhoc: guaranteed 0, max 4, peak [1-4] slots?, [0-9.]+% of slot time$`, res.stdout)
	assert.Regexp(t, `(?m)^queue root.prod: guaranteed 4, max 6, peak [1-6] slots?, [0-9.]+% of slot time$`, res.stdout)
	assert.Regexp(t, `(?m)^queue root.prod.etl: guaranteed 2, max unlimited, peak [1-6] slots?, [0-9.]+% of slot time$`, res.stdout)
	assert.NotContains(t, res.stdout, "queue root.default:", "a queue without capacities that held nothing is left out")

	assert.NotContains(t, res.stdout, "queue root:", "root holds every slot held: no line of its own without capacities")

	res = execCLI(t, "", "simulate", "--slots", "4", "--queue-policy", "stateaware", "../../examples/jobs/flood/spark-1.json", "../../examples/jobs/flood/spark-2.json")
	require.Equal(t, 0, res.code, res.stdout)
	assert.NotContains(t, res.stdout, "queue root.default:", "one queue: no lines per queue")

	// root capped: its line, and the lines of the queues under it, even
	// with the jobs in one queue.
	cluster = writeTemp(t, "root.json", `{"slots": [{"count": 8}], "queues": [{"name": "root", "maxSlots": 5}, {"name": "root.default", "policy": "stateaware"}]}`)
	res = execCLI(t, "", "simulate", "--cluster", cluster, "../../examples/jobs/flood/spark-1.json", "../../examples/jobs/flood/spark-2.json")
	require.Equal(t, 0, res.code, res.stdout)
	assert.Regexp(t, `(?m)^queue root: guaranteed 0, max 5, peak [1-5] slots?, [0-9.]+% of slot time$`, res.stdout)
	assert.Regexp(t, `(?m)^queue root.default: guaranteed 0, max unlimited, peak [1-5] slots?, [0-9.]+% of slot time$`, res.stdout)
}
