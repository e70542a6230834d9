package main

import (
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
		res := execCLI(t, "", "simulate", "--cluster", cluster, path)
		require.Equal(t, 2, res.code, res.stdout)
		assert.Contains(t, res.stderr, `queue root.prod has the child queue root.prod.etl and may not hold job "spark-1"`)
	})
}
