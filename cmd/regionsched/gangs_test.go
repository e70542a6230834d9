package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gangRepro returns the paths of the named files of the reproducer in
// testdata/repros/<dir>.
func gangRepro(t *testing.T, dir string, files ...string) []string {
	t.Helper()
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join("testdata", "repros", dir, f)
		_, err := os.Stat(out[i])
		require.NoError(t, err)
	}
	return out
}

// gangVariant writes a copy of a reproducer's file with old replaced by
// new (once, which must be there) to the test's temporary directory.
func gangVariant(t *testing.T, path, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	return writeTemp(t, filepath.Base(path), strings.Replace(string(data), old, new, 1))
}

// A hard gang with "timeoutMs": 0 is reserved at its job's arrival or
// fails then: b arrives at 500 ms on the one slot a holds until 5000 ms
// and fails at 500 ms (not after the 15-minute default); with
// "timeoutMs": 1 it fails at 501 ms (the timer runs from the arrival);
// without timeoutMs it waits for a, like before; a soft gang with 0
// falls back to normal admission at once, without the requeue backoff,
// and runs when a's slot comes back.
func TestSimulateGangTimeoutZero(t *testing.T) {
	files := gangRepro(t, "gang-timeout-zero", "a.json", "b.json")
	run := func(t *testing.T, b string) (cliResult, []string) {
		t.Helper()
		res := execCLI(t, "", "simulate", "--slots", "1", files[0], b)
		assert.Empty(t, res.stderr)
		lines := jobLines(t, res.stdout)
		require.Len(t, lines, 2, res.stdout)
		assert.Equal(t, []string{"0 ms", "0 ms", "5000 ms", "0 ms", "5000 ms", "finished"}, lines["a"])
		return res, lines["b"]
	}
	t.Run("hard 0 fails at arrival", func(t *testing.T) {
		res, b := run(t, files[1])
		require.Equal(t, 1, res.code, res.stdout)
		why := `admission: job "b": its gang of 1 slot could not be reserved at its arrival (hard gang with timeout 0): timed out`
		assert.Equal(t, []string{"500 ms", "-", "-", "-", "-", "failed at 500 ms: " + why}, b)
		assert.Equal(t, "failed: 1 of 2 jobs: b failed: "+why, lastLine(res.stdout))
		assert.Contains(t, res.stdout, "makespan:          5000 ms")
	})
	t.Run("hard 1 fails 1 ms after arrival", func(t *testing.T) {
		res, b := run(t, gangVariant(t, files[1], `"timeoutMs":0`, `"timeoutMs":1`))
		require.Equal(t, 1, res.code, res.stdout)
		why := `admission: job "b": its gang of 1 slot could not be reserved within 1ms (hard gang): timed out`
		assert.Equal(t, []string{"500 ms", "-", "-", "-", "-", "failed at 501 ms: " + why}, b)
		assert.Equal(t, "failed: 1 of 2 jobs: b failed: "+why, lastLine(res.stdout))
	})
	t.Run("hard absent waits", func(t *testing.T) {
		res, b := run(t, gangVariant(t, files[1], `,"timeoutMs":0`, ``))
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, []string{"500 ms", "5000 ms", "6000 ms", "4500 ms", "5500 ms", "finished"}, b)
		assert.Equal(t, "finished: all 2 jobs finished at 6000 ms", lastLine(res.stdout))
	})
	t.Run("soft 0 falls back at once", func(t *testing.T) {
		res, b := run(t, gangVariant(t, files[1], `"hard"`, `"soft"`))
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, []string{"500 ms", "5000 ms", "6000 ms", "4500 ms", "5500 ms", "finished"}, b,
			"no 10 s backoff after a timeout at arrival")
		assert.Equal(t, "finished: all 2 jobs finished at 6000 ms", lastLine(res.stdout))
	})
	t.Run("hard 0 reserved with the slot freed at arrival", func(t *testing.T) {
		a := gangVariant(t, files[0], `"durationMs":5000`, `"durationMs":500`)
		res := execCLI(t, "", "simulate", "--slots", "1", a, files[1])
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, []string{"500 ms", "500 ms", "1500 ms", "0 ms", "1000 ms", "finished"}, jobLines(t, res.stdout)["b"])
	})
}

// A gang is judged against the cluster as configured, not the slots a
// run models: g1's gang of 6 on 10 slots (two one-task jobs) is reserved
// and both jobs run at 0 ms, on any cluster size; a gang of 11 is
// rejected at once for the one slot the cluster lacks, and holds nothing
// back. The placeholders of an accepted gang hold slots of the cluster:
// the gang job's 8 (its driver's included) leave the wide job 2 of 10
// slots until its task swaps one and the others go back at 1000 ms, and
// 5 of 13 slots, all it needs.
func TestSimulateGangJudgedAgainstTheConfiguredCluster(t *testing.T) {
	files := gangRepro(t, "gang-rejected-modelled-slots", "g1.json", "g2.json", "placeholders.json", "wide.json")
	for _, slots := range []string{"10", "6", "100000000"} {
		res := execCLI(t, "", "simulate", "--slots", slots, files[0], files[1])
		require.Equal(t, 0, res.code, "--slots %s\n%s", slots, res.stdout)
		assert.Empty(t, res.stderr)
		lines := jobLines(t, res.stdout)
		for _, job := range []string{"g1", "g2"} {
			assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines[job], "--slots %s: %s", slots, job)
		}
		assert.Equal(t, "finished: all 2 jobs finished at 1000 ms", lastLine(res.stdout))
	}

	res := execCLI(t, "", "simulate", "--slots", "10", gangVariant(t, files[0], `"minSlots":6`, `"minSlots":11`), files[1])
	require.Equal(t, 1, res.code, res.stdout)
	why := `admission: job rejected: job "g1" in queue root.default: its gang of 11 slots can never be reserved: the queue's cluster has 10 slots; missing 1 slot`
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "-", "-", "-", "-", "rejected at 0 ms: " + why}, lines["g1"])
	assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines["g2"])
	assert.Equal(t, "failed: 1 of 2 jobs: g1 rejected: "+why, lastLine(res.stdout))

	for _, c := range []struct{ slots, wide string }{{"10", "2000 ms"}, {"13", "1100 ms"}} {
		res := execCLI(t, "", "simulate", "--slots", c.slots, files[2], files[3])
		require.Equal(t, 0, res.code, res.stdout)
		lines := jobLines(t, res.stdout)
		// its driver from 0 ms, its first task after the driver's startup
		assert.Equal(t, []string{"0 ms", "1000 ms", "2000 ms", "1000 ms", "2000 ms", "finished"}, lines["gang"], "--slots %s", c.slots)
		assert.Equal(t, []string{"100 ms", "100 ms", c.wide}, lines["wide"][:3], "--slots %s", c.slots)
	}
}

// A gang without minSlots is derived (the four one-slot source regions
// of w: 4, 5 with a driver) and capped at what the queue can hold (3
// slots): w is not rejected for a default but runs region by region, as
// without a gang; an explicit minSlots of 4 is still rejected at once,
// naming the gang and what the cluster lacks.
func TestSimulateDerivedGangCappedAtTheQueue(t *testing.T) {
	files := gangRepro(t, "derived-gang-rejects-runnable-job", "w.json", "y.json")
	plain := execCLI(t, "", "simulate", "--slots", "3", gangVariant(t, files[0], `"gang":{"style":"soft"},`, ``), files[1])
	require.Equal(t, 0, plain.code, plain.stdout)
	for _, w := range []string{files[0], gangVariant(t, files[0], `"soft"`, `"hard"`)} {
		res := execCLI(t, "", "simulate", "--slots", "3", w, files[1])
		require.Equal(t, 0, res.code, res.stdout)
		assert.Empty(t, res.stderr)
		lines := jobLines(t, res.stdout)
		assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines["w"])
		assert.Equal(t, []string{"0 ms", "500 ms", "1500 ms", "500 ms", "1500 ms", "finished"}, lines["y"])
		assert.Equal(t, "finished: all 2 jobs finished at 1500 ms", lastLine(res.stdout))
		assert.Equal(t, plain.stdout, res.stdout, "as without a gang")
	}

	res := execCLI(t, "", "simulate", "--slots", "3", gangVariant(t, files[0], `"gang":{`, `"driver":{"startupMs":0},"gang":{`), files[1])
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "finished: all 2 jobs finished at 2000 ms", lastLine(res.stdout))

	res = execCLI(t, "", "simulate", "--slots", "3", gangVariant(t, files[0], `"style"`, `"minSlots":4,"style"`), files[1])
	require.Equal(t, 1, res.code, res.stdout)
	why := `admission: job rejected: job "w" in queue root.default: its gang of 4 slots can never be reserved: the queue's cluster has 3 slots; missing 1 slot`
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "-", "-", "-", "-", "rejected at 0 ms: " + why}, lines["w"])
	assert.Equal(t, []string{"0 ms", "0 ms", "1000 ms", "0 ms", "1000 ms", "finished"}, lines["y"])
	assert.Equal(t, "failed: 1 of 2 jobs: w rejected: "+why, lastLine(res.stdout))
}
