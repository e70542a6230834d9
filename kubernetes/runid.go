package kubernetes

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// NewRunID names a run as HOST-PID-TIME (lower case, a valid CheckRun):
// this machine's short host name, the process id and the start time, so
// that the leftovers of a runner that died can be told from a live
// runner's pods (RunnerAlive).
func NewRunID() string {
	host := thisHost()
	id := host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixMilli()%1e8, 36)
	if len(id) > 40 { // a long host name, cut
		cut := len(id) - 40
		id = strings.Trim(host[:len(host)-cut], "-") + id[len(host):]
	}
	return id
}

// thisHost is this machine's short host name in the form of a run id
// ("host" if it has none).
func thisHost() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	var b strings.Builder
	for _, c := range strings.ToLower(host) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	if h := strings.Trim(b.String(), "-"); h != "" {
		return h
	}
	return "host"
}

// RunnerAlive says whether the runner of a run id of NewRunID is alive,
// and where, in words: known only on its host, where its process is
// looked for; a runner of another host is taken for alive.
func RunnerAlive(run string) (alive bool, where string) {
	const unknown = "unknown (not a run id of HOST-PID-TIME)"
	parts := strings.Split(run, "-")
	if len(parts) < 3 {
		return false, unknown
	}
	host, pidText := strings.Join(parts[:len(parts)-2], "-"), parts[len(parts)-2]
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false, unknown
	}
	if !strings.HasPrefix(thisHost(), host) { // NewRunID may cut a long host name
		return true, "on host " + host + " (not this one: treated as alive)"
	}
	if _, err := os.Stat("/proc/" + pidText); err == nil {
		return true, "alive (process " + pidText + " on this host)"
	}
	return false, "gone (no process " + pidText + " on this host)"
}
