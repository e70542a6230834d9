package runfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// Cluster is a cluster file (docs/job-file.md), as DecodeCluster read
// and checked it: its slot groups, queues and users in file order.
type Cluster struct {
	// Slots are the slot groups; the slots get ids 0, 1, ... in this
	// order (Counts).
	Slots []SlotGroup
	// Queues configure queues of the admission (QueueConfigs).
	Queues []Queue
	// Users give who may change priorities and kill jobs (Roles).
	Users []User
}

// SlotGroup is an entry of a cluster file's "slots": Count slots alike.
type SlotGroup struct {
	// Count is the number of slots of the group.
	Count int
	// Resources is what one slot holds; nil: unknown-sized (it fits any
	// request).
	Resources *resource.Profile
	// Node names the machine of the group's slots ("": each slot is a
	// machine of its own); speculative execution blocks slow nodes.
	Node string
}

// Queue is an entry of a cluster file's "queues" (QueueConfigs maps it
// to the admission's).
type Queue struct {
	// Name is the queue's name as written (not empty, each once).
	Name string
	// Policy is one of QueuePolicies, or "" for the run's default.
	Policy string
	// MaxRunningJobs bounds the jobs running at once in the queue and
	// the queues under it; 0 is unlimited.
	MaxRunningJobs int
	// StartingTimeoutMs is how long a job of a stateaware queue may stay
	// starting (nil: the admission's default).
	StartingTimeoutMs *int64
	// ReclaimTimeoutMs, if set, lets a waiting job of the queue reclaim
	// the slots of lower-priority jobs of the queue after that long (nil:
	// never).
	ReclaimTimeoutMs *int64
	// GuaranteedSlots is the queue's guaranteed slots (0: none).
	GuaranteedSlots int
	// MaxSlots caps the slots the queue and its children hold (0:
	// unlimited, the field left out).
	MaxSlots int
}

// User is an entry of a cluster file's "users".
type User struct {
	// Name matches a job's user (not empty, each once).
	Name string
	// Role is "admin" or "user".
	Role string
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
		GuaranteedSlots   *int    `json:"guaranteedSlots"`
		MaxSlots          *int    `json:"maxSlots"`
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
	queueFields     = []string{"name", "policy", "maxRunningJobs", "startingTimeoutMs", "reclaimTimeoutMs", "guaranteedSlots", "maxSlots"}
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
	"guaranteedSlots":   fmt.Sprintf("an integer in 0 ... %d", region.MaxClusterSlots),
	"maxSlots":          fmt.Sprintf("an integer in 1 ... %d (leave it out for unlimited)", region.MaxClusterSlots),
	"cpuMillis":         fmt.Sprintf("an integer in 0 ... %d", int64(math.MaxInt64)),
	"memoryMB":          fmt.Sprintf("an integer in 0 ... %d", int64(math.MaxInt64)),
}

// clusterNull says, by name, what an optional field of a cluster file
// takes instead of null (want) and what leaving it out means (absent); a
// resource profile says it for its own fields.
var clusterNull = map[string]struct{ want, absent string }{
	"queues":            {"a list of queues", "none configured"},
	"users":             {"a list of users", "none: every priority change and kill is refused"},
	"resources":         {"a resource profile", "unknown-sized: the slots fit any request"},
	"node":              {"a node name", "none: each slot is a machine of its own"},
	"policy":            {"a queue policy", "the --queue-policy one"},
	"maxRunningJobs":    {"a number of jobs", "0, unlimited"},
	"startingTimeoutMs": {"a number of milliseconds", fmt.Sprint(admission.DefaultStartingTimeout.Milliseconds())},
	"reclaimTimeoutMs":  {"a number of milliseconds", "never reclaim"},
	"guaranteedSlots":   {"a number of slots", "0"},
	"maxSlots":          {"a number of slots", "unlimited"},
}

// ClusterError is a problem in a cluster file: the JSON path of the
// field and what is wrong with it, in words (the value, the valid
// values), never in Go terms.
type ClusterError struct {
	// Field is the JSON path of the field at fault, e.g.
	// "slots[1].resources.gpu"; "" when the whole file is.
	Field string
	// Problem says what is wrong and what would be valid.
	Problem string
}

// Error returns `field "PATH": PROBLEM` (just the problem for the whole
// file).
func (e *ClusterError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Problem)
}

func clusterErrorf(field, format string, a ...any) error {
	return &ClusterError{Field: field, Problem: fmt.Sprintf(format, a...)}
}

// DecodeCluster parses and checks a cluster file (docs/job-file.md).
// Field names must match exactly and only once; the slot counts add up
// to at most region.MaxClusterSlots; a queue or a user is configured
// once, by a full name (topology.ValidQueueName), and the queues'
// capacities hold together (admission.CheckCapacities). The error is a
// *ClusterError naming the field by its JSON path.
func DecodeCluster(data []byte) (*Cluster, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ClusterError{Problem: "malformed JSON: the file is empty"}
	}
	var w clusterWire
	if err := strictDecode(data, &w, "", clusterFields, "slots"); err != nil {
		return nil, err
	}
	if w.Slots == nil {
		return nil, clusterErrorf("slots", `missing: a cluster file lists its slot groups, e.g. {"slots": [{"count": 4}]}`)
	}
	cf := &Cluster{Slots: make([]SlotGroup, len(w.Slots))}
	counts := make([]resource.Count, 0, len(w.Slots)) // for the total
	for i, raw := range w.Slots {
		s, err := decodeSlotGroup(raw, fmt.Sprintf("slots[%d]", i))
		if err != nil {
			return nil, err
		}
		cf.Slots[i] = s
		counts = append(counts, resource.Count{N: s.Count})
	}
	if _, err := region.ClusterSize(counts); err != nil {
		var se *region.ClusterSizeError
		if errors.As(err, &se) {
			return nil, clusterErrorf(fmt.Sprintf("slots[%d].count", se.Entry),
				"the slot counts add up to more than %d slots with this one (%d): a cluster this large is surely a mistake", region.MaxClusterSlots, se.N)
		}
		return nil, &ClusterError{Problem: err.Error()}
	}
	queueAt := map[string]int{}
	for i, raw := range w.Queues {
		q, err := decodeQueue(raw, fmt.Sprintf("queues[%d]", i))
		if err != nil {
			return nil, err
		}
		if !topology.ValidQueueName(q.Name) {
			return nil, clusterErrorf(fmt.Sprintf("queues[%d].name", i), "%s is not a full queue name: %s", quoteJSON(q.Name), topology.QueueNameRule)
		}
		if j, ok := queueAt[q.Name]; ok {
			return nil, clusterErrorf(fmt.Sprintf("queues[%d].name", i), "queue %q is already configured by queues[%d]", q.Name, j)
		}
		queueAt[q.Name] = i
		cf.Queues = append(cf.Queues, q)
	}
	if err := checkCapacities(cf.Queues, queueAt); err != nil {
		return nil, err
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

func decodeSlotGroup(raw json.RawMessage, path string) (SlotGroup, error) {
	var w slotGroupWire
	if err := decodeObject(raw, &w, path, slotGroupFields, "count"); err != nil {
		return SlotGroup{}, err
	}
	if w.Count == nil {
		return SlotGroup{}, clusterErrorf(path+".count", "missing: the number of slots of this group is required")
	}
	if *w.Count < 0 {
		return SlotGroup{}, clusterErrorf(path+".count", "invalid value %d: must be a non-negative integer", *w.Count)
	}
	s := SlotGroup{Count: *w.Count}
	if w.Node != nil {
		if *w.Node == "" || strings.ContainsFunc(*w.Node, unicode.IsSpace) {
			return SlotGroup{}, clusterErrorf(path+".node", "%s is not a node name: non-empty, without whitespace", quoteJSON(*w.Node))
		}
		s.Node = *w.Node
	}
	if !jsontext.IsNull(w.Resources) {
		var p resource.Profile
		if err := strictDecode(w.Resources, &p, path+".resources", nil); err != nil {
			return SlotGroup{}, err
		}
		s.Resources = &p
	}
	return s, nil
}

func decodeQueue(raw json.RawMessage, path string) (Queue, error) {
	var w queueWire
	if err := decodeObject(raw, &w, path, queueFields, "name"); err != nil {
		return Queue{}, err
	}
	var q Queue
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
	if w.GuaranteedSlots != nil {
		if *w.GuaranteedSlots < 0 || *w.GuaranteedSlots > region.MaxClusterSlots {
			return q, clusterErrorf(path+".guaranteedSlots", "invalid value %d: must be an integer in 0 ... %d", *w.GuaranteedSlots, region.MaxClusterSlots)
		}
		q.GuaranteedSlots = *w.GuaranteedSlots
	}
	if w.MaxSlots != nil {
		if *w.MaxSlots < 1 || *w.MaxSlots > region.MaxClusterSlots {
			return q, clusterErrorf(path+".maxSlots", "invalid value %d: must be an integer in 1 ... %d (leave the field out for unlimited)", *w.MaxSlots, region.MaxClusterSlots)
		}
		q.MaxSlots = *w.MaxSlots
	}
	return q, nil
}

func decodeUser(raw json.RawMessage, path string) (User, error) {
	var w userWire
	if err := decodeObject(raw, &w, path, userFields, "name", "role"); err != nil {
		return User{}, err
	}
	valid := "valid values are " + strings.Join(userRoles, ", ")
	switch {
	case w.Name == nil:
		return User{}, clusterErrorf(path+".name", "missing: a user needs a name")
	case *w.Name == "":
		return User{}, clusterErrorf(path+".name", "must not be empty")
	case w.Role == nil:
		return User{}, clusterErrorf(path+".role", "missing: %s", valid)
	case !slices.Contains(userRoles, *w.Role):
		return User{}, clusterErrorf(path+".role", "%s is not a role: %s", quoteJSON(*w.Role), valid)
	}
	return User{Name: *w.Name, Role: *w.Role}, nil
}

// decodeObject is strictDecode for an element of a list, which must be an
// object (null is not a slot group, queue or user).
func decodeObject(raw json.RawMessage, v any, path string, fields []string, required ...string) error {
	if jsontext.IsNull(raw) {
		return clusterErrorf(path, "expected an object, got JSON null")
	}
	return strictDecode(raw, v, path, fields, required...)
}

// strictDecode decodes the JSON value data into v with jsontext.Decode:
// the member names of an object must be exactly (case-sensitively) among
// fields and not repeated, and none may be null but the required ones,
// which the caller reports as missing (nil fields: v checks its own, as
// resource.Profile does). Errors are *ClusterErrors whose field is
// prefixed with path.
func strictDecode(data []byte, v any, path string, fields []string, required ...string) error {
	var de *jsontext.DecodeError
	if err := jsontext.Decode(data, v, path, fields, required...); !errors.As(err, &de) {
		return err
	}
	var amountErr *resource.AmountError
	var nullErr *jsontext.NullError
	switch {
	case de.Kind == jsontext.ErrNull && errors.As(de.Err, &nullErr):
		problem := de.Detail // a profile's own (cpuMillis, extended.gpu, ...)
		if n, ok := clusterNull[nullErr.Key]; ok && nullErr.Object == "" {
			problem = fmt.Sprintf("null is not %s; leave the field out for its default (%s)", n.want, n.absent)
		}
		return &ClusterError{Field: de.Path, Problem: problem}
	case de.Kind == jsontext.ErrUnknownKey || de.Kind == jsontext.ErrDuplicateKey:
		return clusterErrorf(de.Path, "%v: %s", de.Kind, de.Detail)
	case de.Kind == jsontext.ErrType:
		return &ClusterError{Field: de.Path, Problem: de.Detail}
	case de.Kind == jsontext.ErrRange:
		problem := de.Detail
		if valid, ok := clusterValid[de.Path[strings.LastIndexByte(de.Path, '.')+1:]]; ok {
			problem = fmt.Sprintf("%s is out of range (valid: %s)", de.Number, valid)
		}
		return &ClusterError{Field: de.Path, Problem: problem}
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
