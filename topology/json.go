package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/resource"
)

// The wire form of a job file (docs/job-file.md). Pointers tell
// absent from zero.
type (
	jobFile struct {
		Name       string            `json:"name"`
		Vertices   []json.RawMessage `json:"vertices"`
		Edges      []json.RawMessage `json:"edges"`
		SubmitAtMs *int64            `json:"submitAtMs"`
		Queue      *string           `json:"queue"`
		User       *string           `json:"user"`
		Priority   *int              `json:"priority"`
		Driver     json.RawMessage   `json:"driver"`
		Gang       json.RawMessage   `json:"gang"`
	}
	vertexFile struct {
		ID               *string         `json:"id"`
		Parallelism      *int64          `json:"parallelism"`
		SlotSharingGroup *string         `json:"slotSharingGroup"`
		Resources        json.RawMessage `json:"resources"`
		DurationMs       *int64          `json:"durationMs"`
		Bounded          *bool           `json:"bounded"`
	}
	edgeFile struct {
		Source       *string `json:"source"`
		Target       *string `json:"target"`
		ShipStrategy *string `json:"shipStrategy"`
		Exchange     *string `json:"exchange"`
	}
	driverFile struct {
		Resources json.RawMessage `json:"resources"`
		StartupMs *int64          `json:"startupMs"`
	}
	gangFile struct {
		MinSlots  *int    `json:"minSlots"`
		Style     *string `json:"style"`
		TimeoutMs *int64  `json:"timeoutMs"`
	}
)

// Decode reads one job file (docs/job-file.md, plus the optional
// multi-job fields of section 5) and returns the validated graph. Unknown
// fields, missing required fields, malformed or empty input and every
// validation failure are typed errors naming the field, vertex or edge.
func Decode(r io.Reader) (*JobGraph, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &DecodeError{Err: ErrMalformedJSON, Detail: err.Error()}
	}
	return DecodeBytes(data)
}

// DecodeBytes is Decode on a byte slice.
func DecodeBytes(data []byte) (*JobGraph, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &DecodeError{Err: ErrMalformedJSON, Detail: "empty input"}
	}
	var f jobFile
	if err := strictUnmarshal(data, &f, ""); err != nil {
		return nil, err
	}
	if f.Vertices == nil {
		return nil, &DecodeError{Field: "vertices", Err: ErrMissingField, Detail: "a job needs at least one vertex"}
	}
	b := NewBuilder(f.Name)
	for i, raw := range f.Vertices {
		v, err := decodeVertex(raw, i)
		if err != nil {
			return nil, err
		}
		b.addVertex(v) // decodeVertex applied DefaultDuration
	}
	for i, raw := range f.Edges {
		e, err := decodeEdge(raw, i)
		if err != nil {
			return nil, err
		}
		b.AddEdge(e)
	}
	sub, err := decodeSubmission(&f)
	if err != nil {
		return nil, err
	}
	b.SetSubmission(sub)
	return b.Build()
}

func decodeVertex(raw json.RawMessage, i int) (JobVertex, error) {
	path := fmt.Sprintf("vertices[%d]", i)
	var vf vertexFile
	if err := strictUnmarshal(raw, &vf, path); err != nil {
		return JobVertex{}, err
	}
	if vf.ID == nil {
		return JobVertex{}, &DecodeError{Field: path + ".id", Err: ErrMissingField}
	}
	if vf.Parallelism == nil {
		return JobVertex{}, &VertexError{Vertex: *vf.ID, Index: i, Field: "parallelism", Err: ErrMissingField}
	}
	v := JobVertex{ID: *vf.ID, Duration: DefaultDuration}
	p := *vf.Parallelism
	if p < 1 || p > MaxParallelism {
		return JobVertex{}, &VertexError{Vertex: v.ID, Index: i, Field: "parallelism", Err: ErrInvalidParallelism,
			Detail: fmt.Sprintf("%d is not in 1 ... %d", p, MaxParallelism)}
	}
	v.Parallelism = int(p)
	if vf.SlotSharingGroup != nil {
		if *vf.SlotSharingGroup == "" {
			return JobVertex{}, &VertexError{Vertex: v.ID, Index: i, Field: "slotSharingGroup", Err: ErrInvalidField, Detail: "must not be empty"}
		}
		v.SlotSharingGroup = *vf.SlotSharingGroup
	}
	if vf.Resources != nil {
		r, err := decodeResources(vf.Resources, path+".resources")
		if err != nil {
			return JobVertex{}, err
		}
		v.Resources = r
	}
	if vf.DurationMs != nil {
		if *vf.DurationMs < 0 || *vf.DurationMs > jsontext.MaxMillis {
			return JobVertex{}, &VertexError{Vertex: v.ID, Index: i, Field: "durationMs", Err: ErrInvalidField,
				Detail: fmt.Sprintf("%d is not in %s", *vf.DurationMs, jsontext.MillisRange)}
		}
		v.Duration = time.Duration(*vf.DurationMs) * time.Millisecond
	}
	if vf.Bounded != nil {
		v.Unbounded = !*vf.Bounded
	}
	return v, nil
}

func decodeEdge(raw json.RawMessage, i int) (JobEdge, error) {
	path := fmt.Sprintf("edges[%d]", i)
	var ef edgeFile
	if err := strictUnmarshal(raw, &ef, path); err != nil {
		return JobEdge{}, err
	}
	var e JobEdge
	if ef.Source != nil {
		e.Source = *ef.Source
	}
	if ef.Target != nil {
		e.Target = *ef.Target
	}
	switch {
	case ef.Source == nil:
		return JobEdge{}, &EdgeError{Index: i, Target: e.Target, Field: "source", Err: ErrMissingField}
	case ef.Target == nil:
		return JobEdge{}, &EdgeError{Index: i, Source: e.Source, Field: "target", Err: ErrMissingField}
	case ef.ShipStrategy == nil:
		return JobEdge{}, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "shipStrategy", Err: ErrMissingField,
			Detail: "valid: " + strings.Join(exchange.ShipStrategyNames(), ", ")}
	}
	s, err := exchange.ParseShipStrategy(*ef.ShipStrategy)
	if err != nil {
		return JobEdge{}, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "shipStrategy", Err: err}
	}
	e.ShipStrategy = s
	if ef.Exchange != nil {
		t, err := exchange.ParsePartitionType(*ef.Exchange)
		if err != nil {
			return JobEdge{}, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "exchange", Err: err}
		}
		e.Pinned, e.Exchange = true, t
	}
	return e, nil
}

func decodeSubmission(f *jobFile) (Submission, error) {
	s := DefaultSubmission()
	bad := func(field, detail string) error {
		return &DecodeError{Field: field, Err: ErrInvalidField, Detail: detail}
	}
	if f.SubmitAtMs != nil {
		if *f.SubmitAtMs < 0 || *f.SubmitAtMs > jsontext.MaxMillis {
			return s, bad("submitAtMs", fmt.Sprintf("%d is not in %s (ms)", *f.SubmitAtMs, jsontext.MillisRange))
		}
		s.SubmitAt = time.Duration(*f.SubmitAtMs) * time.Millisecond
	}
	if f.Queue != nil {
		s.Queue = *f.Queue
	}
	if f.User != nil {
		s.User = *f.User
	}
	if f.Priority != nil {
		s.Priority = *f.Priority
	}
	if !jsontext.IsNull(f.Driver) {
		var d driverFile
		if err := strictUnmarshal(f.Driver, &d, "driver"); err != nil {
			return s, err
		}
		s.Driver = &Driver{Startup: time.Second}
		if d.Resources != nil {
			r, err := decodeResources(d.Resources, "driver.resources")
			if err != nil {
				return s, err
			}
			s.Driver.Resources = r
		}
		if d.StartupMs != nil {
			if *d.StartupMs < 0 || *d.StartupMs > jsontext.MaxMillis {
				return s, bad("driver.startupMs", fmt.Sprintf("%d is not in %s (ms)", *d.StartupMs, jsontext.MillisRange))
			}
			s.Driver.Startup = time.Duration(*d.StartupMs) * time.Millisecond
		}
	}
	if !jsontext.IsNull(f.Gang) {
		gf := &gangFile{}
		if err := strictUnmarshal(f.Gang, gf, "gang"); err != nil {
			return s, err
		}
		s.Gang = &Gang{Timeout: DefaultGangTimeout} // timeoutMs: 0 stays 0
		if gf.MinSlots != nil {
			if *gf.MinSlots < 1 {
				return s, bad("gang.minSlots", fmt.Sprintf("%d must be at least 1 (or absent: derived from the job)", *gf.MinSlots))
			}
			s.Gang.MinSlots = *gf.MinSlots
		}
		if gf.Style != nil {
			switch *gf.Style {
			case "soft":
			case "hard":
				s.Gang.Hard = true
			default:
				return s, bad("gang.style", fmt.Sprintf("%q (valid: soft, hard)", *gf.Style))
			}
		}
		if gf.TimeoutMs != nil {
			if *gf.TimeoutMs < 0 || *gf.TimeoutMs > jsontext.MaxMillis {
				return s, bad("gang.timeoutMs", fmt.Sprintf("%d is not in %s (ms)", *gf.TimeoutMs, jsontext.MillisRange))
			}
			s.Gang.Timeout = time.Duration(*gf.TimeoutMs) * time.Millisecond
		}
	}
	return s, nil
}

// decodeResources decodes a resource profile (the caller refuses null); errors name
// the field under path, e.g. "vertices[2].resources.cpuMillis".
func decodeResources(raw json.RawMessage, path string) (resource.Profile, error) {
	var p resource.Profile
	if err := strictUnmarshal(raw, &p, path); err != nil {
		return resource.Unknown, err
	}
	return p, nil
}

// decodeKinds maps kinds of jsontext.DecodeError to this package's
// sentinels. The other kinds are ErrMalformedJSON, unless the cause is a
// value's own error (a *resource.AmountError or *exchange.ParseError),
// which is kept.
var decodeKinds = map[error]error{
	jsontext.ErrUnknownKey:   ErrUnknownField,
	jsontext.ErrDuplicateKey: ErrDuplicateField,
	jsontext.ErrType:         ErrInvalidField,
	jsontext.ErrRange:        ErrInvalidField,
}

// validValues says what the number fields of a job file take, by the
// last part of their JSON path, for a value of the wrong type ("1.5",
// "1e30" or a string where an integer belongs) or an integer out of range
// ("99999999999999999999").
var validValues = map[string]string{
	"parallelism": fmt.Sprintf("an integer in 1 ... %d", MaxParallelism),
	"durationMs":  "an integer number of ms in " + jsontext.MillisRange,
	"submitAtMs":  "an integer number of ms in " + jsontext.MillisRange,
	"startupMs":   "an integer number of ms in " + jsontext.MillisRange,
	"timeoutMs":   "an integer number of ms in " + jsontext.MillisRange,
	"priority":    fmt.Sprintf("an integer in 1 ... %d", MaxPriority),
	"cpuMillis":   fmt.Sprintf("an integer in 0 ... %d", math.MaxInt64),
	"memoryMB":    fmt.Sprintf("an integer in 0 ... %d", math.MaxInt64),
	"minSlots":    "an integer of at least 1, or absent",
	"queue":       QueueNameRule,
	"user":        "a non-empty string",
}

// strictUnmarshal decodes one JSON value into v with jsontext.Decode
// (exact, non-repeated field names, no trailing data) and turns its error
// into a DecodeError whose Field is prefixed with path.
func strictUnmarshal(data []byte, v any, path string) error {
	var de *jsontext.DecodeError
	fields, required := jsonFields(v)
	if err := jsontext.Decode(data, v, path, fields, required...); !errors.As(err, &de) {
		return err
	}
	var nullErr *jsontext.NullError
	if de.Kind == jsontext.ErrNull && errors.As(de.Err, &nullErr) {
		detail := de.Detail // a profile's own (cpuMillis, extended.gpu, ...)
		if nullErr.Object == "" {
			if n, ok := nullDetails[nullErr.Key]; ok {
				detail = fmt.Sprintf("null is not %s; leave the field out for its default (%s)", n.want, n.absent)
			}
		}
		return &DecodeError{Field: de.Path, Err: ErrInvalidField, Detail: detail}
	}
	if sentinel, ok := decodeKinds[de.Kind]; ok {
		detail := de.Detail
		if valid, ok := validValues[de.Path[strings.LastIndexByte(de.Path, '.')+1:]]; ok {
			switch de.Kind {
			case jsontext.ErrType:
				detail += " (valid: " + valid + ")"
			case jsontext.ErrRange: // the field's range, not its Go type's
				detail = fmt.Sprintf("%s is out of range (valid: %s)", de.Number, valid)
			}
		}
		return &DecodeError{Field: de.Path, Err: sentinel, Detail: detail}
	}
	var amountErr *resource.AmountError
	var parseErr *exchange.ParseError
	switch {
	case errors.As(de.Err, &amountErr):
		// an empty extended resource name leaves a trailing dot
		return &DecodeError{Field: strings.TrimSuffix(jsontext.JoinPath(de.Path, amountErr.Field), "."), Err: amountErr}
	case errors.As(de.Err, &parseErr):
		return &DecodeError{Field: de.Path, Err: parseErr}
	}
	return &DecodeError{Field: de.Path, Err: ErrMalformedJSON, Detail: de.Detail}
}

// jsonFields lists the JSON field names of the wire struct v points to,
// exactly as they must be written (nil for a resource.Profile, which
// checks its own), and the required ones among them: null is refused for
// the others, and reported as missing for these.
func jsonFields(v any) (fields, required []string) {
	switch v.(type) {
	case *jobFile:
		return []string{"name", "vertices", "edges", "submitAtMs", "queue", "user", "priority", "driver", "gang"}, []string{"vertices"}
	case *vertexFile:
		return []string{"id", "parallelism", "slotSharingGroup", "resources", "durationMs", "bounded"}, []string{"id", "parallelism"}
	case *edgeFile:
		return []string{"source", "target", "shipStrategy", "exchange"}, []string{"source", "target", "shipStrategy"}
	case *driverFile:
		return []string{"resources", "startupMs"}, nil
	case *gangFile:
		return []string{"minSlots", "style", "timeoutMs"}, nil
	}
	return nil, nil
}

// nullDetails say, by name, what an optional field of a job file takes
// instead of null (want) and what leaving it out means (absent); a
// resource profile says it for its own fields.
var nullDetails = map[string]struct{ want, absent string }{
	"name":             {"a job name", `"": a multi-job run names the job after its file`},
	"edges":            {"a list of edges", "no edges"},
	"submitAtMs":       {"a number of milliseconds", "0"},
	"queue":            {"a queue name", fmt.Sprintf("%q", DefaultSubmission().Queue)},
	"user":             {"a user name", fmt.Sprintf("%q", DefaultSubmission().User)},
	"priority":         {"a priority", fmt.Sprint(DefaultSubmission().Priority)},
	"driver":           {"a driver", "none"},
	"gang":             {"a gang", "none"},
	"slotSharingGroup": {"a slot sharing group", fmt.Sprintf("%q", DefaultSlotSharingGroup)},
	"resources":        {"a resource profile", "unknown: fits any slot"},
	"durationMs":       {"a number of milliseconds", fmt.Sprint(DefaultDuration.Milliseconds())},
	"bounded":          {"true or false", "true"},
	"exchange":         {"an exchange", "the global mode's choice"},
	"startupMs":        {"a number of milliseconds", "1000"},
	"minSlots":         {"a number of slots", "derived from the job"},
	"style":            {"a gang style", `"soft"`},
	"timeoutMs":        {"a number of milliseconds", fmt.Sprint(DefaultGangTimeout.Milliseconds())},
}

// Encode writes g as a job file that Decode reads back to an equal graph
// (durations are written in whole milliseconds, as the file format has
// them).
func Encode(w io.Writer, g *JobGraph) error {
	type vOut struct {
		ID               string            `json:"id"`
		Parallelism      int               `json:"parallelism"`
		SlotSharingGroup string            `json:"slotSharingGroup,omitempty"`
		Resources        *resource.Profile `json:"resources,omitempty"`
		DurationMs       int64             `json:"durationMs"`
		Bounded          bool              `json:"bounded"`
	}
	type eOut struct {
		Source       string `json:"source"`
		Target       string `json:"target"`
		ShipStrategy string `json:"shipStrategy"`
		Exchange     string `json:"exchange,omitempty"`
	}
	type driverOut struct {
		Resources *resource.Profile `json:"resources,omitempty"`
		StartupMs int64             `json:"startupMs"`
	}
	type gangOut struct {
		MinSlots  int    `json:"minSlots,omitempty"`
		Style     string `json:"style"`
		TimeoutMs int64  `json:"timeoutMs"`
	}
	// Submission fields are written only when they differ from the
	// defaults, so a plain job file stays plain.
	out := struct {
		Name       string     `json:"name"`
		Vertices   []vOut     `json:"vertices"`
		Edges      []eOut     `json:"edges"`
		SubmitAtMs int64      `json:"submitAtMs,omitempty"`
		Queue      *string    `json:"queue,omitempty"`
		User       *string    `json:"user,omitempty"`
		Priority   *int       `json:"priority,omitempty"`
		Driver     *driverOut `json:"driver,omitempty"`
		Gang       *gangOut   `json:"gang,omitempty"`
	}{Name: g.name, Vertices: make([]vOut, len(g.vertices)), Edges: make([]eOut, len(g.edges))}
	sub, def := g.submission, DefaultSubmission()
	out.SubmitAtMs = sub.SubmitAt.Milliseconds()
	if sub.Queue != def.Queue {
		out.Queue = &sub.Queue
	}
	if sub.User != def.User {
		out.User = &sub.User
	}
	if sub.Priority != def.Priority {
		out.Priority = &sub.Priority
	}
	if d := sub.Driver; d != nil {
		out.Driver = &driverOut{StartupMs: d.Startup.Milliseconds()}
		if !d.Resources.IsUnknown() {
			r := d.Resources
			out.Driver.Resources = &r
		}
	}
	if gg := sub.Gang; gg != nil {
		out.Gang = &gangOut{MinSlots: gg.MinSlots, Style: "soft", TimeoutMs: gg.Timeout.Milliseconds()}
		if gg.Hard {
			out.Gang.Style = "hard"
		}
	}
	for i, v := range g.vertices {
		o := vOut{ID: v.ID, Parallelism: v.Parallelism, SlotSharingGroup: v.SlotSharingGroup,
			DurationMs: v.Duration.Milliseconds(), Bounded: !v.Unbounded}
		if !v.Resources.IsUnknown() {
			r := v.Resources
			o.Resources = &r
		}
		out.Vertices[i] = o
	}
	for i, e := range g.edges {
		o := eOut{Source: e.Source, Target: e.Target, ShipStrategy: e.ShipStrategy.String()}
		if e.Pinned {
			o.Exchange = e.Exchange.String()
		}
		out.Edges[i] = o
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
