package admission

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// AuditRecord is one change asked of the admission, accepted or refused.
type AuditRecord struct {
	At     time.Time
	By     Principal
	Action Action
	Job    string
	// Old and New are the priorities before and as asked
	// (ActionSetPriority).
	Old, New int
	Accepted bool
	// Reason says why it was refused ("" if accepted).
	Reason string
}

// AuditSink receives every audit record, in the order of the changes. An
// error from it is logged; it never stops the admission.
type AuditSink interface {
	Audit(AuditRecord) error
}

// JSONLinesAudit writes audit records as JSON Lines (docs/job-file.md):
// {"t": ms since Origin, "by", "role", "action", "job", "old", "new",
// "accepted", "reason"}.
type JSONLinesAudit struct {
	w io.Writer
	// Origin is time 0 of "t" (the start of a virtual run).
	Origin time.Time
}

// NewJSONLinesAudit returns a sink writing to w, times counted from
// origin.
func NewJSONLinesAudit(w io.Writer, origin time.Time) *JSONLinesAudit {
	return &JSONLinesAudit{w: w, Origin: origin}
}

// auditLine is the JSON form of a record.
type auditLine struct {
	T        int64  `json:"t"`
	By       string `json:"by"`
	Role     string `json:"role,omitempty"`
	Action   string `json:"action"`
	Job      string `json:"job"`
	Old      *int   `json:"old,omitempty"`
	New      *int   `json:"new,omitempty"`
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"`
}

// Audit writes one line.
func (a *JSONLinesAudit) Audit(r AuditRecord) error {
	l := auditLine{T: r.At.Sub(a.Origin).Milliseconds(), By: r.By.Name, Action: r.Action.String(), Job: r.Job, Accepted: r.Accepted, Reason: r.Reason}
	if r.By.Role != 0 {
		l.Role = r.By.Role.String()
	}
	if r.Action == ActionSetPriority {
		l.Old, l.New = &r.Old, &r.New
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("admission: audit: %w", err)
	}
	if _, err := a.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("admission: audit: %w", err)
	}
	return nil
}
