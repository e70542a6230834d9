package slurm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// jobRequest is the Slurm job an ask becomes: one component per task
// group (several make a heterogeneous job), in the ask's group order.
type jobRequest struct {
	Partition  string
	Components []component
	// TimeLimit is the job's time limit (--time, whole minutes rounded
	// up); zero leaves the partition's default.
	TimeLimit time.Duration
	// Comment tags the job (--comment); "" means none.
	Comment string
	// Extra are more sbatch options for the whole job (--account, --qos).
	Extra []string
}

// component is one part of a (heterogeneous) Slurm job: Tasks slots, each
// with CPUsPerTask CPUs, MemPerCPU MB of memory per CPU (0: the
// partition's default) and the generic resources Gres.
type component struct {
	// Profile is the slot profile the pool asked for; granted slots carry
	// it.
	Profile     resource.Profile
	Tasks       int
	CPUsPerTask int
	MemPerCPU   int64
	// GPUsPerTask maps the extended resource "gpu" (--gpus-per-task).
	GPUsPerTask int64
	// Gres lists the other extended resources as NAME:COUNT, sorted.
	// Slurm 22.05 counts them per node (--gres), so a component with any
	// runs one slot per node (--ntasks-per-node=1).
	Gres []string
}

// CPUs returns the CPUs the component needs in all.
func (c component) CPUs() int { return c.Tasks * c.CPUsPerTask }

// mapGang turns an ask's gang into the Slurm job that allocates it:
// a slot of profile p gets ceil(p.CPUMillis()/1000) CPUs (at least 1;
// defaultCPUs for an Unknown profile), memory per CPU ceil(p.MemoryMB() /
// CPUs), the extended resource "gpu" as GPUs per task and any other as a
// per-node gres with one slot per node. A gang with no group or a group
// of no member is refused with ErrRejected; so is an invalid extended
// resource name.
func mapGang(g slotpool.Gang, partition string, defaultCPUs int) (jobRequest, error) {
	if defaultCPUs < 1 {
		defaultCPUs = 1
	}
	req := jobRequest{Partition: partition}
	for i, tg := range g.Groups {
		if tg.MinMembers < 1 {
			return jobRequest{}, fmt.Errorf("slurm: task group %d asks for %d slots: %w", i, tg.MinMembers, ErrRejected)
		}
		c := component{Profile: tg.Profile, Tasks: tg.MinMembers, CPUsPerTask: defaultCPUs}
		if !tg.Profile.IsUnknown() {
			c.CPUsPerTask = int(max(1, (tg.Profile.CPUMillis()+999)/1000))
			if m := tg.Profile.MemoryMB(); m > 0 {
				c.MemPerCPU = (m + int64(c.CPUsPerTask) - 1) / int64(c.CPUsPerTask)
			}
			ext := tg.Profile.Extended()
			names := make([]string, 0, len(ext))
			for name := range ext {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				n := ext[name]
				if n <= 0 {
					continue
				}
				if name == "" || strings.ContainsAny(name, ":,= \t\n") {
					return jobRequest{}, fmt.Errorf("slurm: task group %d: extended resource %q cannot be a gres name: %w", i, name, ErrRejected)
				}
				if name == "gpu" {
					c.GPUsPerTask = n
					continue
				}
				c.Gres = append(c.Gres, name+":"+strconv.FormatInt(n, 10))
			}
		}
		req.Components = append(req.Components, c)
	}
	if len(req.Components) == 0 {
		return jobRequest{}, fmt.Errorf("slurm: an ask with no task group: %w", ErrRejected)
	}
	return req, nil
}

// holdScript is the batch script of an allocation: it only holds the
// allocation until the job is cancelled.
const holdScript = "exec sleep infinity"

// SbatchArgs returns the arguments of the sbatch command that submits req
// under the job name name: it prints the job id only (--parsable), is
// never requeued (a preempted allocation is revoked, the pool asks anew),
// writes no output file, and holds the allocation with a sleeping script;
// the components of a heterogeneous job are separated by ":". The time
// limit, the comment, r.Extra and extra (account, QOS, ...) go before the
// first component. (sbatch rather
// than salloc --no-shell, which also leaves the allocation to its job but
// waits until it is granted: an ask that must wait would hold a process.)
func (r jobRequest) SbatchArgs(name string, extra ...string) []string {
	args := []string{"--parsable", "--no-requeue", "--job-name=" + name, "--output=/dev/null", "--error=/dev/null", "--chdir=/"}
	if r.TimeLimit > 0 {
		args = append(args, "--time="+strconv.FormatInt(int64(RoundTimeLimit(r.TimeLimit)/time.Minute), 10))
	}
	if r.Comment != "" {
		args = append(args, "--comment="+r.Comment)
	}
	args = append(args, r.Extra...)
	args = append(args, extra...)
	for i, c := range r.Components {
		if i > 0 {
			args = append(args, ":")
		}
		if r.Partition != "" {
			args = append(args, "--partition="+r.Partition)
		}
		args = append(args, "--ntasks="+strconv.Itoa(c.Tasks), "--cpus-per-task="+strconv.Itoa(c.CPUsPerTask))
		if c.MemPerCPU > 0 {
			args = append(args, "--mem-per-cpu="+strconv.FormatInt(c.MemPerCPU, 10))
		}
		if c.GPUsPerTask > 0 {
			args = append(args, "--gpus-per-task="+strconv.FormatInt(c.GPUsPerTask, 10))
		}
		if len(c.Gres) > 0 {
			args = append(args, "--ntasks-per-node=1", "--gres="+strings.Join(c.Gres, ","))
		}
	}
	return append(args, "--wrap="+holdScript)
}

// RoundTimeLimit is the time limit Slurm gives an allocation asked for
// with limit d: d rounded up to whole minutes (Slurm counts minutes), at
// most the largest whole number of minutes a time.Duration holds.
func RoundTimeLimit(d time.Duration) time.Duration {
	const most = math.MaxInt64 / time.Minute * time.Minute
	if d > most {
		return most
	}
	if r := d % time.Minute; r > 0 {
		d += time.Minute - r
	}
	return d
}
