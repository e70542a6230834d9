package timeline

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/regionsched/regionsched/runfile"
)

// Layout of the admission's lane: what the admission did to jobs at a
// time (reclaims, priority changes, kills, refusals), above the slots.
const (
	maxMarks     = 200 // marks drawn; the others are counted in a note
	maxMarkRows  = 4
	markRowH     = 16.0
	marksLabel   = "admission"
	markColorRec = "#b3181b"
	markColorChg = "#1f5fa8"
	markColorRef = "#888888"
)

// mark is one thing the admission did at a time.
type mark struct {
	at           time.Duration
	kind         runfile.Kind // Reclaim, Change or Refused
	label, title string
	row          int // its row in the lane, -1 if its label fits none
}

// markSet gathers the marks of a run from its events, one at a time: at
// most maxMarks of them, the others counted.
type markSet struct {
	list  []mark
	more  int
	kinds [runfile.Change + 1]int
	rows  int     // rows of the lane, once laid out
	top   float64 // y of the lane's first row
}

// observe takes one event into account.
func (m *markSet) observe(e runfile.Event) {
	var mk mark
	at := formatMillis(e.At)
	switch e.Kind {
	case runfile.Reclaim:
		mk.label = fmt.Sprintf("reclaim %s → %s", e.Job, e.Victim)
		mk.title = fmt.Sprintf("at %s %s of job %s reclaimed for job %s: %s", at, count(e.Slots, "slot"), e.Victim, e.Job, e.Reason)
	case runfile.Change:
		mk.label = fmt.Sprintf("%s: %s %s", e.By, e.Job, e.Reason)
		mk.title = fmt.Sprintf("at %s %s changed job %s: %s", at, e.By, e.Job, e.Reason)
		if e.Reason == "kill" {
			mk.label = fmt.Sprintf("%s kills %s", e.By, e.Job)
			mk.title = fmt.Sprintf("at %s %s killed job %s", at, e.By, e.Job)
		}
	case runfile.Refused:
		action, _, _ := strings.Cut(e.Reason, ":")
		mk.label = fmt.Sprintf("refused: %s %s %s", e.By, action, e.Job)
		mk.title = fmt.Sprintf("at %s refused for %s on job %s: %s", at, e.By, e.Job, e.Reason)
	default:
		return
	}
	m.kinds[e.Kind]++
	if len(m.list) == maxMarks {
		m.more++
		return
	}
	mk.at, mk.kind = e.At, e.Kind
	m.list = append(m.list, mk)
}

// any reports whether there is something for the lane.
func (m *markSet) any() bool { return len(m.list) > 0 }

// markColor is the colour of a mark's kind.
func markColor(k runfile.Kind) string {
	switch k {
	case runfile.Reclaim:
		return markColorRec
	case runfile.Change:
		return markColorChg
	}
	return markColorRef
}

// layoutMarks gives each mark a row of the lane where its label does not
// run into another's, and moves the rows of slots down below the lane. It
// is called once the time axis is placed (layoutX).
func (p *picture) layoutMarks() {
	m := &p.marks
	if !m.any() {
		return
	}
	var ends []float64 // per row: where its last label ends
	for i := range m.list {
		mk := &m.list[i]
		mk.row = -1
		x := p.x(mk.at)
		start, end := p.markLabelX(mk)
		x0, x1 := math.Min(start, x-5), math.Max(end, x+5)
		for r, e := range ends {
			if x0 >= e+8 {
				mk.row, ends[r] = r, x1
				break
			}
		}
		if mk.row < 0 && len(ends) < maxMarkRows {
			mk.row = len(ends)
			ends = append(ends, x1)
		}
	}
	m.rows = max(1, len(ends))
	m.top = p.top - 28 // right under the header
	below := 10.0
	if p.deadlock || p.stream {
		below = 28 // room for the line over the rows (deadlockMarks, streamMarks)
	}
	p.top = m.top + float64(m.rows)*markRowH + below
}

// markLabelX is where a mark's label starts and ends: right of its
// marker, or left of it where it would run past the axis.
func (p *picture) markLabelX(mk *mark) (float64, float64) {
	x := p.x(mk.at)
	w := textWidth(mk.label, 10, false)
	if x+7+w > p.left+p.timeW {
		return x - 7 - w, x - 7
	}
	return x + 7, x + 7 + w
}

// drawMarks draws the lane: each mark a coloured triangle at its time,
// with a dotted line down through the slots, and its label.
func (p *picture) drawMarks(bottom float64) {
	m := &p.marks
	if !m.any() || p.timeW <= 0 {
		return
	}
	p.text(p.left-8, m.top+float64(m.rows)*markRowH/2, 12, "end", "#333", marksLabel)
	p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f6f6fb"/>`+"\n", p.left, m.top, p.timeW, float64(m.rows)*markRowH)
	for _, mk := range m.list {
		x := p.x(mk.at)
		y := m.top + float64(max(mk.row, 0))*markRowH + markRowH/2
		c := markColor(mk.kind)
		p.printf(`<g class="mark"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1" stroke-dasharray="1,3"/>`, x, y, x, bottom, c)
		p.printf(`<path d="M%.1f,%.1fl5,-9h-10z" fill="%s"><title>%s</title></path>`, x, y+4.5, c, xmlText(mk.title))
		if mk.row >= 0 {
			start, _ := p.markLabelX(&mk)
			p.text(start, y, 10, "start", c, mk.label)
		}
		p.printf("</g>\n")
	}
	if m.more > 0 {
		p.notes = append(p.notes, fmt.Sprintf("The admission's lane shows the first %d of its %d events.", len(m.list), len(m.list)+m.more))
	}
}

// legend returns the legend entries of the kinds of marks drawn.
func (m *markSet) legend() []legendEntry {
	var out []legendEntry
	if m.kinds[runfile.Reclaim] > 0 {
		out = append(out, legendEntry{fill: markColorRec, stroke: markColorRec, label: "reclaim: claimant → victim"})
	}
	if m.kinds[runfile.Change] > 0 {
		out = append(out, legendEntry{fill: markColorChg, stroke: markColorChg, label: "priority change or kill"})
	}
	if m.kinds[runfile.Refused] > 0 {
		out = append(out, legendEntry{fill: markColorRef, stroke: markColorRef, label: "refused change"})
	}
	return out
}
