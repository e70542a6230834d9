package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/resource"
)

// The wire form of a job file (SPEC.md section 1 and 5). Pointers tell
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

// Decode reads one job file (SPEC.md section 1, plus the optional
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
		b.AddVertex(v)
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
		if *vf.DurationMs < 0 || *vf.DurationMs > maxMillis {
			return JobVertex{}, &VertexError{Vertex: v.ID, Index: i, Field: "durationMs", Err: ErrInvalidField,
				Detail: fmt.Sprintf("%d is not in 0 ... %d", *vf.DurationMs, int64(maxMillis))}
		}
		v.Duration = time.Duration(*vf.DurationMs) * time.Millisecond
	}
	if vf.Bounded != nil {
		v.Unbounded = !*vf.Bounded
	}
	return v, nil
}

// maxMillis bounds millisecond fields so they fit a time.Duration.
const maxMillis = int64(1<<63-1) / int64(time.Millisecond)

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
		if *f.SubmitAtMs < 0 || *f.SubmitAtMs > maxMillis {
			return s, bad("submitAtMs", fmt.Sprintf("%d is not a non-negative number of milliseconds", *f.SubmitAtMs))
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
	if !isNull(f.Driver) {
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
			if *d.StartupMs < 0 || *d.StartupMs > maxMillis {
				return s, bad("driver.startupMs", fmt.Sprintf("%d is not a non-negative number of milliseconds", *d.StartupMs))
			}
			s.Driver.Startup = time.Duration(*d.StartupMs) * time.Millisecond
		}
	}
	if !isNull(f.Gang) {
		gf := &gangFile{}
		if err := strictUnmarshal(f.Gang, gf, "gang"); err != nil {
			return s, err
		}
		s.Gang = &Gang{Timeout: 15 * time.Minute}
		if gf.MinSlots == nil {
			return s, &DecodeError{Field: "gang.minSlots", Err: ErrMissingField}
		}
		s.Gang.MinSlots = *gf.MinSlots
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
			if *gf.TimeoutMs < 0 || *gf.TimeoutMs > maxMillis {
				return s, bad("gang.timeoutMs", fmt.Sprintf("%d is not a non-negative number of milliseconds", *gf.TimeoutMs))
			}
			s.Gang.Timeout = time.Duration(*gf.TimeoutMs) * time.Millisecond
		}
	}
	return s, nil
}

// decodeResources decodes a resource profile (null is Unknown); errors name
// the field under path, e.g. "vertices[2].resources.cpuMillis".
func decodeResources(raw json.RawMessage, path string) (resource.Profile, error) {
	var p resource.Profile
	if err := strictUnmarshal(raw, &p, path); err != nil {
		return resource.Unknown, err
	}
	return p, nil
}

// isNull reports whether an optional raw field is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// strictUnmarshal decodes one JSON value into v, rejecting unknown fields
// (matched exactly: encoding/json alone would accept "ID" for "id"),
// duplicate fields and trailing data, and turns encoding/json's errors
// into DecodeErrors whose Field is prefixed with path.
func strictUnmarshal(data []byte, v any, path string) error {
	join := func(field string) string {
		switch {
		case path == "":
			return field
		case field == "":
			return path
		}
		return path + "." + field
	}
	keyError := func(ke *jsontext.KeyError) error {
		sentinel := ErrUnknownField
		if ke.Duplicate {
			sentinel = ErrDuplicateField
		}
		return &DecodeError{Field: join(ke.Field()), Err: sentinel, Detail: ke.Detail()}
	}
	var ke *jsontext.KeyError
	if fields := jsonFields(v); fields != nil {
		if err := jsontext.CheckKeys(data, fields...); errors.As(err, &ke) {
			return keyError(ke)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		var amountErr *resource.AmountError
		var parseErr *exchange.ParseError
		msg := err.Error()
		switch {
		case errors.As(err, &ke):
			return keyError(ke)
		case errors.As(err, &amountErr):
			// an empty extended resource name leaves a trailing dot
			return &DecodeError{Field: strings.TrimSuffix(join(amountErr.Field), "."), Err: amountErr}
		case errors.As(err, &parseErr):
			return &DecodeError{Field: path, Err: parseErr}
		case errors.As(err, &typeErr):
			return &DecodeError{Field: join(typeErr.Field), Err: ErrInvalidField,
				Detail: fmt.Sprintf("expected %s, got JSON %s", jsontext.Kind(typeErr.Type), typeErr.Value)}
		case errors.As(err, &syntaxErr):
			return &DecodeError{Field: path, Err: ErrMalformedJSON, Detail: fmt.Sprintf("%v (at byte %d)", msg, syntaxErr.Offset)}
		case strings.HasPrefix(msg, "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			return &DecodeError{Field: join(name), Err: ErrUnknownField, Detail: "valid fields: " + strings.Join(jsonFields(v), ", ")}
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return &DecodeError{Field: path, Err: ErrMalformedJSON, Detail: "unexpected end of input"}
		default:
			return &DecodeError{Field: path, Err: ErrMalformedJSON, Detail: msg}
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &DecodeError{Field: path, Err: ErrMalformedJSON, Detail: "unexpected data after the JSON value"}
	}
	return nil
}

// jsonFields lists the JSON field names of the wire struct v points to,
// exactly as they must be written.
func jsonFields(v any) []string {
	switch v.(type) {
	case *jobFile:
		return []string{"name", "vertices", "edges", "submitAtMs", "queue", "user", "priority", "driver", "gang"}
	case *vertexFile:
		return []string{"id", "parallelism", "slotSharingGroup", "resources", "durationMs", "bounded"}
	case *edgeFile:
		return []string{"source", "target", "shipStrategy", "exchange"}
	case *driverFile:
		return []string{"resources", "startupMs"}
	case *gangFile:
		return []string{"minSlots", "style", "timeoutMs"}
	case *resource.Profile:
		return []string{"cpuMillis", "memoryMB", "extended"}
	}
	return nil
}

// Encode writes g as a job file that Decode reads back to an equal graph.
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
		MinSlots  int    `json:"minSlots"`
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
