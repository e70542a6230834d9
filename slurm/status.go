package slurm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// JobID is a Slurm job id (of a heterogeneous job: its leader's id).
type JobID int64

// jobStatus is what squeue says of one Slurm job, or of one component of
// a heterogeneous job.
type jobStatus struct {
	ID   JobID
	Name string
	// State is Slurm's job state: PENDING, RUNNING, PREEMPTED, CANCELLED,
	// COMPLETED, FAILED, TIMEOUT, NODE_FAIL, ...
	State string
	// Reason is why a pending job waits (Resources, Priority, ...).
	Reason string
	// Preempted is set once Slurm decided to preempt the job (its
	// PreemptTime), possibly before State says so.
	Preempted bool
	// HetJob is the leader's id of a heterogeneous job (0 otherwise) and
	// HetOffset this component's index in it.
	HetJob    JobID
	HetOffset int
	Priority  int64
	User      string
	// Nodes lists the allocated nodes in order with their CPU counts.
	Nodes []nodeCPUs
}

// nodeCPUs is a node of an allocation and how many of its CPUs the job
// holds.
type nodeCPUs struct {
	Node string
	CPUs int
}

// Leader returns the id the job is known by: the heterogeneous job's
// leader, or its own id.
func (s jobStatus) Leader() JobID {
	if s.HetJob != 0 {
		return s.HetJob
	}
	return s.ID
}

// Terminal reports whether the job has ended (any state other than
// pending, running, configuring, completing, suspended, requeued or
// resizing).
func (s jobStatus) Terminal() bool {
	switch s.State {
	case "PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT":
		return false
	case "COMPLETING":
		return true // its resources are being given back
	}
	return true
}

// squeueJSON is the part of squeue --json's output (Slurm 22.05, OpenAPI
// v0.0.38) this package reads.
type squeueJSON struct {
	Errors []struct {
		Description string `json:"description"`
		Error       string `json:"error"`
		Source      string `json:"source"`
	} `json:"errors"`
	Jobs []struct {
		JobID        int64  `json:"job_id"`
		Name         string `json:"name"`
		JobState     string `json:"job_state"`
		StateReason  string `json:"state_reason"`
		PreemptTime  int64  `json:"preempt_time"`
		HetJobID     int64  `json:"het_job_id"`
		HetJobOffset int    `json:"het_job_offset"`
		Priority     int64  `json:"priority"`
		UserName     string `json:"user_name"`
		JobResources *struct {
			AllocatedNodes []struct {
				NodeName string `json:"nodename"`
				Sockets  map[string]struct {
					Cores map[string]json.RawMessage `json:"cores"`
				} `json:"sockets"`
			} `json:"allocated_nodes"`
		} `json:"job_resources"`
	} `json:"jobs"`
}

// parseSqueue reads the output of squeue --json. squeue exits 0 even when
// it could not reach slurmctld and reports it in "errors": that is a
// *CommandError wrapping ErrUnreachable. The CPUs of a node are its
// allocated cores (with SelectTypeParameters=CR_CPU and one thread per
// core, a core is a CPU).
func parseSqueue(data []byte) ([]jobStatus, error) {
	var out squeueJSON
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &CommandError{Command: "squeue", Args: []string{"--json"}, Err: fmt.Errorf("%w: %v", ErrBadOutput, err)}
	}
	if len(out.Errors) > 0 {
		var msgs []string
		for _, e := range out.Errors {
			msgs = append(msgs, e.Source+": "+e.Description+" ("+e.Error+")")
		}
		msg := strings.Join(msgs, "; ")
		cause := classify(msg)
		if cause == ErrRejected && strings.Contains(msg, "slurm_load_jobs") {
			cause = ErrUnreachable // "Failed while looking for jobs": the controller did not answer
		}
		return nil, &CommandError{Command: "squeue", Args: []string{"--json"}, Stderr: msg, Err: cause}
	}
	jobs := make([]jobStatus, 0, len(out.Jobs))
	for _, j := range out.Jobs {
		s := jobStatus{ID: JobID(j.JobID), Name: j.Name, State: j.JobState, Reason: j.StateReason,
			Preempted: j.PreemptTime != 0 || j.JobState == "PREEMPTED", HetJob: JobID(j.HetJobID), HetOffset: j.HetJobOffset,
			Priority: j.Priority, User: j.UserName}
		if j.JobResources != nil {
			for _, n := range j.JobResources.AllocatedNodes {
				cpus := 0
				for _, sock := range n.Sockets {
					cpus += len(sock.Cores)
				}
				s.Nodes = append(s.Nodes, nodeCPUs{Node: n.NodeName, CPUs: cpus})
			}
		}
		jobs = append(jobs, s)
	}
	slices.SortFunc(jobs, func(a, b jobStatus) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, nil
}
