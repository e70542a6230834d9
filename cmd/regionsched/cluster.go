package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// clusterFile is the cluster file of docs/job-file.md, validated
// (decodeCluster reads it through the wire types below).
type clusterFile struct {
	Slots  []slotGroupFile `json:"slots"`
	Queues []queueFile     `json:"queues"`
	Users  []userFile      `json:"users"`
}

type slotGroupFile struct {
	Count     *int              `json:"count"`
	Resources *resource.Profile `json:"resources"`
	// Node names the machine of the group's slots ("": each slot is a
	// machine of its own); speculative execution blocks slow nodes.
	Node string `json:"node"`
}

type queueFile struct {
	Name              string `json:"name"`
	Policy            string `json:"policy"`
	MaxRunningJobs    int    `json:"maxRunningJobs"`
	StartingTimeoutMs *int64 `json:"startingTimeoutMs"`
	ReclaimTimeoutMs  *int64 `json:"reclaimTimeoutMs"`
}

type userFile struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

// clusterFlags are --slots and --cluster, exactly one of which is required.
type clusterFlags struct {
	slots   slotsFlag
	cluster string
}

func addClusterFlags(c *cobra.Command) *clusterFlags {
	f := &clusterFlags{}
	c.Flags().Var(&f.slots, "slots", "number of unknown-sized slots (fit any request); this or --cluster is required")
	c.Flags().StringVar(&f.cluster, "cluster", "", "cluster file: {\"slots\": [{\"count\": N, \"resources\": {...}}, ...]}; this or --slots is required")
	return f
}

// slotsFlag is the value of --slots: an integer, unset until given, so
// that --help shows no default (there is none: --slots or --cluster is
// required). Its range is checked with the other cluster flags.
type slotsFlag struct {
	n   int
	set bool
}

// String returns the number given, "" if none.
func (f *slotsFlag) String() string {
	if !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

// Set parses the number of slots.
func (f *slotsFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number of slots: give an integer in 0 ... %d", s, region.MaxClusterSlots)
	}
	f.n, f.set = n, true
	return nil
}

// Type names the value in --help: "--slots int".
func (f *slotsFlag) Type() string { return "int" }

// load returns the cluster's slots as profile counts, in file order.
func (f *clusterFlags) load(c *cobra.Command) ([]resource.Count, error) {
	slots, _, err := f.loadFile(c)
	return slots, err
}

// loadFile is load that also returns the cluster file (nil for --slots),
// for its queues.
func (f *clusterFlags) loadFile(c *cobra.Command) ([]resource.Count, *clusterFile, error) {
	slotsSet, clusterSet := c.Flags().Changed("slots"), c.Flags().Changed("cluster")
	switch {
	case slotsSet && clusterSet:
		return nil, nil, badInput(fmt.Errorf("give either --slots or --cluster, not both"))
	case !slotsSet && !clusterSet:
		return nil, nil, badInput(fmt.Errorf("the cluster is missing: give --slots N or --cluster FILE"))
	case slotsSet:
		n := f.slots.n
		if n < 0 {
			return nil, nil, badInput(fmt.Errorf("--slots %d: must be a non-negative integer", n))
		}
		if n > region.MaxClusterSlots {
			return nil, nil, badInput(fmt.Errorf("--slots %d: more than %d slots: a cluster this large is surely a mistake", n, region.MaxClusterSlots))
		}
		return []resource.Count{{Profile: resource.Unknown, N: n}}, nil, nil
	}
	data, err := os.ReadFile(f.cluster)
	if err != nil {
		return nil, nil, badInput(fmt.Errorf("cluster file: %w", err))
	}
	cf, err := decodeCluster(data)
	if err != nil {
		return nil, nil, badInput(fmt.Errorf("cluster file %s: %w", f.cluster, err))
	}
	var out []resource.Count
	for _, s := range cf.Slots {
		p := resource.Unknown
		if s.Resources != nil {
			p = *s.Resources
		}
		out = append(out, resource.Count{Profile: p, N: *s.Count})
	}
	return out, cf, nil
}

// loadWithJob loads the cluster (first, so that a usage error wins over a
// job error) and then the job file.
func (f *clusterFlags) loadWithJob(c *cobra.Command, jobPath string, stdin io.Reader) ([]resource.Count, *topology.JobGraph, error) {
	slots, err := f.load(c)
	if err != nil {
		return nil, nil, err
	}
	job, err := loadJob(jobPath, stdin)
	if err != nil {
		return nil, nil, err
	}
	return slots, job, nil
}

// The wire form of a cluster file: every object is decoded on its own so
// that errors carry its JSON path; pointers tell absent from zero.
type (
	clusterWire struct {
		Slots  []json.RawMessage `json:"slots"`
		Queues []json.RawMessage `json:"queues"`
		Users  []json.RawMessage `json:"users"`
	}
	slotGroupWire struct {
		Count     *int            `json:"count"`
		Resources json.RawMessage `json:"resources"`
		Node      *string         `json:"node"`
	}
	queueWire struct {
		Name              *string `json:"name"`
		Policy            *string `json:"policy"`
		MaxRunningJobs    *int    `json:"maxRunningJobs"`
		StartingTimeoutMs *int64  `json:"startingTimeoutMs"`
		ReclaimTimeoutMs  *int64  `json:"reclaimTimeoutMs"`
	}
	userWire struct {
		Name *string `json:"name"`
		Role *string `json:"role"`
	}
)

// The exact field names of each object of a cluster file (a resource
// profile checks its own).
var (
	clusterFields   = []string{"slots", "queues", "users"}
	slotGroupFields = []string{"count", "resources", "node"}
	queueFields     = []string{"name", "policy", "maxRunningJobs", "startingTimeoutMs", "reclaimTimeoutMs"}
	userFields      = []string{"name", "role"}
	queuePolicies   = []string{"fifo", "priority", "fairshare", "stateaware"}
	userRoles       = []string{"admin", "user"}
)

// clusterValid says what the integer fields of a cluster file take, by the
// last part of their JSON path, for a number out of range.
var clusterValid = map[string]string{
	"count":             fmt.Sprintf("an integer in 0 ... %d", region.MaxClusterSlots),
	"maxRunningJobs":    "a non-negative integer (0 = unlimited)",
	"startingTimeoutMs": "an integer number of ms in " + jsontext.MillisRange,
	"reclaimTimeoutMs":  "an integer number of ms in " + jsontext.MillisRange,
	"cpuMillis":         fmt.Sprintf("an integer in 0 ... %d", int64(math.MaxInt64)),
	"memoryMB":          fmt.Sprintf("an integer in 0 ... %d", int64(math.MaxInt64)),
}

// clusterError is a problem in a cluster file: the JSON path of the field
// and what is wrong with it, in words (the value, the valid values), never
// in Go terms.
type clusterError struct {
	field   string // e.g. "slots[1].resources.gpu"; "" for the whole file
	problem string
}

func (e *clusterError) Error() string {
	if e.field == "" {
		return e.problem
	}
	return fmt.Sprintf("field %q: %s", e.field, e.problem)
}

func clusterErrorf(field, format string, a ...any) error {
	return &clusterError{field: field, problem: fmt.Sprintf(format, a...)}
}

// decodeCluster parses and validates a cluster file (docs/job-file.md
// and 5). Field names must match exactly and only once; every error names
// the field by its JSON path.
func decodeCluster(data []byte) (*clusterFile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &clusterError{problem: "malformed JSON: the file is empty"}
	}
	var w clusterWire
	if err := strictDecode(data, &w, "", clusterFields); err != nil {
		return nil, err
	}
	if w.Slots == nil {
		return nil, clusterErrorf("slots", `missing: a cluster file lists its slot groups, e.g. {"slots": [{"count": 4}]}`)
	}
	cf := &clusterFile{Slots: make([]slotGroupFile, len(w.Slots))}
	counts := make([]resource.Count, 0, len(w.Slots)) // for the total
	for i, raw := range w.Slots {
		s, err := decodeSlotGroup(raw, fmt.Sprintf("slots[%d]", i))
		if err != nil {
			return nil, err
		}
		cf.Slots[i] = s
		counts = append(counts, resource.Count{N: *s.Count})
	}
	if _, err := region.ClusterSize(counts); err != nil {
		var se *region.ClusterSizeError
		if errors.As(err, &se) {
			return nil, clusterErrorf(fmt.Sprintf("slots[%d].count", se.Entry),
				"the slot counts add up to more than %d slots with this one (%d): a cluster this large is surely a mistake", region.MaxClusterSlots, se.N)
		}
		return nil, &clusterError{problem: err.Error()}
	}
	queueAt := map[string]int{}
	for i, raw := range w.Queues {
		q, err := decodeQueue(raw, fmt.Sprintf("queues[%d]", i))
		if err != nil {
			return nil, err
		}
		if j, ok := queueAt[q.Name]; ok {
			return nil, clusterErrorf(fmt.Sprintf("queues[%d].name", i), "queue %q is already configured by queues[%d]", q.Name, j)
		}
		queueAt[q.Name] = i
		cf.Queues = append(cf.Queues, q)
	}
	userAt := map[string]int{}
	for i, raw := range w.Users {
		u, err := decodeUser(raw, fmt.Sprintf("users[%d]", i))
		if err != nil {
			return nil, err
		}
		if j, ok := userAt[u.Name]; ok {
			return nil, clusterErrorf(fmt.Sprintf("users[%d].name", i), "user %q is already configured by users[%d]", u.Name, j)
		}
		userAt[u.Name] = i
		cf.Users = append(cf.Users, u)
	}
	return cf, nil
}

func decodeSlotGroup(raw json.RawMessage, path string) (slotGroupFile, error) {
	var w slotGroupWire
	if err := decodeObject(raw, &w, path, slotGroupFields); err != nil {
		return slotGroupFile{}, err
	}
	if w.Count == nil {
		return slotGroupFile{}, clusterErrorf(path+".count", "missing: the number of slots of this group is required")
	}
	if *w.Count < 0 {
		return slotGroupFile{}, clusterErrorf(path+".count", "invalid value %d: must be a non-negative integer", *w.Count)
	}
	s := slotGroupFile{Count: w.Count}
	if w.Node != nil {
		if *w.Node == "" || strings.ContainsFunc(*w.Node, unicode.IsSpace) {
			return slotGroupFile{}, clusterErrorf(path+".node", "%s is not a node name: non-empty, without whitespace", quoteJSON(*w.Node))
		}
		s.Node = *w.Node
	}
	if !jsontext.IsNull(w.Resources) {
		var p resource.Profile
		if err := strictDecode(w.Resources, &p, path+".resources", nil); err != nil {
			return slotGroupFile{}, err
		}
		s.Resources = &p
	}
	return s, nil
}

func decodeQueue(raw json.RawMessage, path string) (queueFile, error) {
	var w queueWire
	if err := decodeObject(raw, &w, path, queueFields); err != nil {
		return queueFile{}, err
	}
	var q queueFile
	switch {
	case w.Name == nil:
		return q, clusterErrorf(path+".name", "missing: a queue needs a name, e.g. \"root.default\"")
	case *w.Name == "":
		return q, clusterErrorf(path+".name", "must not be empty")
	}
	q.Name = *w.Name
	if w.Policy != nil {
		if !slices.Contains(queuePolicies, *w.Policy) {
			return q, clusterErrorf(path+".policy", "%s is not a queue policy: valid values are %s (leave the field out for the --queue-policy default)",
				quoteJSON(*w.Policy), strings.Join(queuePolicies, ", "))
		}
		q.Policy = *w.Policy
	}
	if w.MaxRunningJobs != nil {
		if *w.MaxRunningJobs < 0 {
			return q, clusterErrorf(path+".maxRunningJobs", "invalid value %d: must be a non-negative integer (0 = unlimited)", *w.MaxRunningJobs)
		}
		q.MaxRunningJobs = *w.MaxRunningJobs
	}
	for _, ms := range []struct {
		name string
		v    *int64
	}{{"startingTimeoutMs", w.StartingTimeoutMs}, {"reclaimTimeoutMs", w.ReclaimTimeoutMs}} {
		if ms.v != nil && (*ms.v < 0 || *ms.v > jsontext.MaxMillis) {
			return q, clusterErrorf(path+"."+ms.name, "invalid value %d: must be a number of milliseconds in %s", *ms.v, jsontext.MillisRange)
		}
	}
	q.StartingTimeoutMs, q.ReclaimTimeoutMs = w.StartingTimeoutMs, w.ReclaimTimeoutMs
	return q, nil
}

func decodeUser(raw json.RawMessage, path string) (userFile, error) {
	var w userWire
	if err := decodeObject(raw, &w, path, userFields); err != nil {
		return userFile{}, err
	}
	valid := "valid values are " + strings.Join(userRoles, ", ")
	switch {
	case w.Name == nil:
		return userFile{}, clusterErrorf(path+".name", "missing: a user needs a name")
	case *w.Name == "":
		return userFile{}, clusterErrorf(path+".name", "must not be empty")
	case w.Role == nil:
		return userFile{}, clusterErrorf(path+".role", "missing: %s", valid)
	case !slices.Contains(userRoles, *w.Role):
		return userFile{}, clusterErrorf(path+".role", "%s is not a role: %s", quoteJSON(*w.Role), valid)
	}
	return userFile{Name: *w.Name, Role: *w.Role}, nil
}

// decodeObject is strictDecode for an element of a list, which must be an
// object (null is not a slot group, queue or user).
func decodeObject(raw json.RawMessage, v any, path string, fields []string) error {
	if jsontext.IsNull(raw) {
		return clusterErrorf(path, "expected an object, got JSON null")
	}
	return strictDecode(raw, v, path, fields)
}

// quoteJSON quotes a value from the file as JSON would write it.
func quoteJSON(s string) string { return string(jsontext.AppendString(nil, s)) }

// strictDecode decodes the JSON value data into v with jsontext.Decode:
// the member names of an object must be exactly (case-sensitively) among
// fields and not repeated (nil fields: v checks its own, as
// resource.Profile does). Errors are *clusterErrors whose field is
// prefixed with path.
func strictDecode(data []byte, v any, path string, fields []string) error {
	var de *jsontext.DecodeError
	if err := jsontext.Decode(data, v, path, fields); !errors.As(err, &de) {
		return err
	}
	var amountErr *resource.AmountError
	switch {
	case de.Kind == jsontext.ErrUnknownKey || de.Kind == jsontext.ErrDuplicateKey:
		return clusterErrorf(de.Path, "%v: %s", de.Kind, de.Detail)
	case de.Kind == jsontext.ErrType:
		return &clusterError{field: de.Path, problem: de.Detail}
	case de.Kind == jsontext.ErrRange:
		problem := de.Detail
		if valid, ok := clusterValid[de.Path[strings.LastIndexByte(de.Path, '.')+1:]]; ok {
			problem = fmt.Sprintf("%s is out of range (valid: %s)", de.Number, valid)
		}
		return &clusterError{field: de.Path, problem: problem}
	case errors.As(de.Err, &amountErr) && amountErr.InvalidName:
		name := strings.TrimPrefix(amountErr.Field, "extended.")
		why := "it contains '=' or ';'"
		if name == "" {
			why = "it is empty"
		}
		return clusterErrorf(strings.TrimSuffix(jsontext.JoinPath(de.Path, amountErr.Field), "."),
			"invalid extended resource name %s: %s; a name must be non-empty and must not contain '=' or ';'", quoteJSON(name), why)
	case errors.As(de.Err, &amountErr):
		return clusterErrorf(jsontext.JoinPath(de.Path, amountErr.Field), "invalid value %d: must be a non-negative integer", amountErr.Value)
	}
	return clusterErrorf(de.Path, "malformed JSON: %s", strings.TrimPrefix(de.Detail, "json: "))
}
