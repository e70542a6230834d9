package slurm

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// NewRunID names a run: HOST-PID-TIME, this machine's short host name,
// the process id and the start time, so that the leftovers of a run can
// be told from a live run's (RunnerAlive).
func NewRunID() string {
	return thisHost() + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixMilli()%1e8, 36)
}

// thisHost is this machine's short host name as a run id holds it
// ("host" if it has none), for NewRunID and RunnerAlive alike.
func thisHost() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	if host = safeName(host); host == "" {
		return "host"
	}
	return host
}

// RunnerAlive says whether the runner of a run id of NewRunID
// (HOST-PID-TIME) is alive, and where, in words: known only on its host,
// where its process is looked for; a runner of another host is taken
// for alive.
func RunnerAlive(run string) (alive bool, where string) {
	const unknown = "unknown (not a run id of HOST-PID-TIME)"
	k := strings.LastIndex(run, "-")
	if k < 0 {
		return false, unknown
	}
	rest := run[:k]
	k = strings.LastIndex(rest, "-")
	if k < 0 {
		return false, unknown
	}
	host, pidText := rest[:k], rest[k+1:]
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false, unknown
	}
	if thisHost() != host {
		return true, "on host " + host + " (not this one: treated as alive)"
	}
	if _, err := os.Stat("/proc/" + pidText); err == nil {
		return true, "alive (process " + pidText + " on this host)"
	}
	return false, "gone (no process " + pidText + " on this host)"
}
