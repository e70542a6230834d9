package slurm

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Leftover is a live Slurm job (pending or holding an allocation) tagged
// by a run (Tag): what a runner that died may have left.
type Leftover struct {
	Job   JobID
	Name  string
	State string
	User  string
	// Run is the run's id (RunConfig.RunID).
	Run string
}

// leftoverFormat is the squeue format Leftovers reads: id, name, state,
// user and comment.
const leftoverFormat = "%i|%j|%T|%u|%k"

// Leftovers lists the live Slurm jobs tagged by a run (every run's when
// run is ""), sorted by run and job: squeue -h -t PENDING,RUNNING,... -o
// "%i|%j|%T|%u|%k".
func (c *ExecClient) Leftovers(ctx context.Context, run string) ([]Leftover, error) {
	out, err := c.run(ctx, "", "squeue", "-h", "--states=PENDING,CONFIGURING,RUNNING,SUSPENDED,REQUEUED,RESIZING,COMPLETING",
		"-o", leftoverFormat)
	if err != nil {
		return nil, err
	}
	return parseLeftovers(string(out), run)
}

// parseLeftovers reads the squeue lines of Leftovers and keeps the jobs
// tagged by run (any run if "").
func parseLeftovers(out, run string) ([]Leftover, error) {
	var left []Leftover
	prefix := Tag("")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, "|", 5)
		if len(f) != 5 {
			return nil, fmt.Errorf("slurm: squeue: %q is not ID|NAME|STATE|USER|COMMENT: %w", line, ErrBadOutput)
		}
		comment := strings.TrimSpace(f[4])
		r, tagged := strings.CutPrefix(comment, prefix)
		if !tagged || (run != "" && r != run) {
			continue
		}
		field := strings.TrimSpace(f[0])
		id, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			// A component of a heterogeneous job ("12+1"): its leader
			// stands for it.
			lead, _, _ := strings.Cut(field, "+")
			if id, err = strconv.ParseInt(lead, 10, 64); err != nil {
				return nil, fmt.Errorf("slurm: squeue: job id %q: %w", f[0], ErrBadOutput)
			}
		}
		left = append(left, Leftover{Job: JobID(id), Name: f[1], State: f[2], User: f[3], Run: r})
	}
	slices.SortFunc(left, func(a, b Leftover) int {
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return cmp.Compare(a.Job, b.Job)
	})
	return slices.CompactFunc(left, func(a, b Leftover) bool { return a.Job == b.Job }), nil
}
