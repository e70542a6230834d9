package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// partition is what the admission knows of its Slurm partition: the nodes
// and how many CPUs of each a job of the partition may use.
type partition struct {
	Name    string
	Default bool
	State   string
	// MaxCPUsPerNode is the partition's limit (0: none).
	MaxCPUsPerNode int
	Nodes          []node
}

// node is one node of a partition.
type node struct {
	Name     string
	CPUs     int
	MemoryMB int64
	// Gres counts the node's generic resources by name ("gpu": 2).
	Gres  map[string]int64
	State string
}

// InService reports whether a node can take jobs: not drained (or
// draining), down, failed, or otherwise out of service, by the state sinfo
// reports (its long form, flags such as "*" or "+" aside). A node whose
// state is unknown to the admission ("") counts as in service.
func (n node) InService() bool {
	st := strings.ToLower(strings.TrimRight(n.State, "*~#!%$@^-+"))
	switch {
	case strings.HasPrefix(st, "drain"), strings.HasPrefix(st, "down"), strings.HasPrefix(st, "fail"),
		st == "inval", st == "maint", st == "reserved", st == "unknown", st == "not_responding", st == "power_down", st == "powered_down":
		return false
	}
	return true
}

// OutOfService lists the nodes not in service, as NAME (STATE).
func (p partition) OutOfService() []string {
	var out []string
	for _, n := range p.Nodes {
		if !n.InService() {
			out = append(out, n.Name+" ("+n.State+")")
		}
	}
	return out
}

// UsableCPUs returns the CPUs of node n a job of the partition may use:
// none if the node is out of service.
func (p partition) UsableCPUs(n node) int {
	if !n.InService() {
		return 0
	}
	if p.MaxCPUsPerNode > 0 && p.MaxCPUsPerNode < n.CPUs {
		return p.MaxCPUsPerNode
	}
	return n.CPUs
}

// CPUs returns the CPUs the partition's jobs may use in all.
func (p partition) CPUs() int {
	total := 0
	for _, n := range p.Nodes {
		total += p.UsableCPUs(n)
	}
	return total
}

// parsePartitions reads the output of scontrol show partition -o (one
// partition a line, KEY=VALUE fields) into partitions without nodes.
func parsePartitions(out string) ([]partition, error) {
	var parts []partition
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := fields(line)
		p := partition{Name: f["PartitionName"], Default: f["Default"] == "YES", State: f["State"]}
		if p.Name == "" {
			return nil, fmt.Errorf("slurm: scontrol show partition: a line without PartitionName: %q: %w", line, ErrBadOutput)
		}
		if v := f["MaxCPUsPerNode"]; v != "" && v != "UNLIMITED" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("slurm: partition %s: MaxCPUsPerNode=%q: %w", p.Name, v, ErrBadOutput)
			}
			p.MaxCPUsPerNode = n
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// fields splits a line of KEY=VALUE words.
func fields(line string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k] = v
		}
	}
	return m
}

// sinfoFormat is the sinfo output format parseNodes reads:
// sinfo -h -N -p PARTITION -o sinfoFormat.
const sinfoFormat = "%N|%c|%m|%G|%T"

// parseNodes reads the output of sinfo -h -N -o SinfoFormat: name, CPUs,
// memory (MB), gres ("(null)" or "gpu:2,nic:1(S:0)") and state, one node
// a line.
func parseNodes(out string) ([]node, error) {
	var nodes []node
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 5 {
			return nil, fmt.Errorf("slurm: sinfo: %q is not NAME|CPUS|MEMORY|GRES|STATE: %w", line, ErrBadOutput)
		}
		cpus, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, fmt.Errorf("slurm: sinfo: node %s: CPUs %q: %w", parts[0], parts[1], ErrBadOutput)
		}
		mem, err := strconv.ParseInt(strings.TrimSuffix(parts[2], "+"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("slurm: sinfo: node %s: memory %q: %w", parts[0], parts[2], ErrBadOutput)
		}
		nodes = append(nodes, node{Name: parts[0], CPUs: cpus, MemoryMB: mem, Gres: parseGres(parts[3]), State: parts[4]})
	}
	return nodes, nil
}

// parseGres reads a node's gres list: NAME[:TYPE]:COUNT[(S:...)],...
func parseGres(s string) map[string]int64 {
	if s == "" || s == "(null)" {
		return nil
	}
	m := map[string]int64{}
	for _, g := range strings.Split(s, ",") {
		g, _, _ = strings.Cut(g, "(")
		parts := strings.Split(g, ":")
		if len(parts) < 2 {
			continue
		}
		if n, err := strconv.ParseInt(parts[len(parts)-1], 10, 64); err == nil {
			m[parts[0]] += n
		}
	}
	return m
}
