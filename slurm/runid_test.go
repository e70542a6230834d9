package slurm

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunnerAlive(t *testing.T) {
	id := NewRunID()
	assert.Equal(t, id, safeName(id), "a run id is a valid part of a Slurm job name")
	assert.True(t, strings.HasPrefix(id, thisHost()+"-"+strconv.Itoa(os.Getpid())+"-"), id)
	alive, where := RunnerAlive(id)
	assert.True(t, alive, where)
	assert.Contains(t, where, "alive (process "+strconv.Itoa(os.Getpid()))

	alive, where = RunnerAlive(thisHost() + "-999999999-x")
	assert.False(t, alive)
	assert.Equal(t, "gone (no process 999999999 on this host)", where)

	alive, where = RunnerAlive("elsewhere" + thisHost() + "-1-x")
	assert.True(t, alive, "a runner of another host is taken for alive")
	assert.Contains(t, where, "not this one")

	for _, bad := range []string{"", "r7", "host-x", "host-0-x"} {
		alive, where = RunnerAlive(bad)
		assert.False(t, alive, bad)
		assert.Contains(t, where, "not a run id of HOST-PID-TIME", bad)
	}
}
