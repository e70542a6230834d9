package timeline

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/regionsched/regionsched/runfile"
)

// Layout of the aggregated view.
const (
	groupRowH  = 26.0
	groupGap   = 4.0
	bucketPx   = 4.0
	failMarkPx = 6.0
)

// occupancy integrates, per row, colour key and time bucket, how much of
// the time a quantity (held slots, waiting requests) was there. Adding a
// span costs O(1): the buckets it covers entirely go to a difference
// array summed once at the end.
type occupancy struct {
	rows, keys, buckets int
	width               float64   // of a bucket, in nanoseconds
	part                []float64 // partly covered buckets, in buckets
	full                []int32   // difference array of entirely covered buckets
}

func newOccupancy(rows, keys, buckets int, span time.Duration) *occupancy {
	return &occupancy{rows: rows, keys: keys, buckets: buckets, width: float64(span) / float64(buckets),
		part: make([]float64, rows*keys*(buckets+1)), full: make([]int32, rows*keys*(buckets+2))}
}

func (o *occupancy) add(row, key int, from, to time.Duration) {
	if to <= from {
		return
	}
	fs, fe := float64(from)/o.width, float64(to)/o.width
	b0, b1 := min(int(fs), o.buckets), min(int(fe), o.buckets)
	base := (row*o.keys + key) * (o.buckets + 1)
	if b0 == b1 {
		o.part[base+b0] += fe - fs
		return
	}
	o.part[base+b0] += float64(b0+1) - fs
	o.part[base+b1] += fe - float64(b1)
	fbase := (row*o.keys + key) * (o.buckets + 2)
	o.full[fbase+b0+1]++
	o.full[fbase+b1]--
}

// values returns, per bucket, the average quantity of (row, key).
func (o *occupancy) values(row, key int, out []float64) []float64 {
	out = out[:0]
	base := (row*o.keys + key) * (o.buckets + 1)
	fbase := (row*o.keys + key) * (o.buckets + 2)
	run := int32(0)
	for b := range o.buckets {
		run += o.full[fbase+b]
		out = append(out, o.part[base+b]+float64(run))
	}
	return out
}

// aggSource is what the aggregated view draws from: replay hands every
// step of the run, in order, to apply, after which agg holds the state at
// the end of the run.
type aggSource struct {
	agg    *aggregator
	replay func(apply func(aggOp)) error
}

// eventSource aggregates recorded events as they are replayed.
func eventSource(events []runfile.Event, stats *colorStats) aggSource {
	agg := newAggregator(stats, nil)
	return aggSource{agg: agg, replay: func(apply func(aggOp)) error {
		agg.emit = apply
		for _, e := range events {
			agg.observe(e)
		}
		return nil
	}}
}

// aggregate draws slot use over time per group of slots: each row is a
// group, its height the group's slots, filled by the colour of what holds
// them; a row below shows the requests waiting for a slot.
func (p *picture) aggregate(src aggSource) error {
	v := p.layoutGroups(src.agg.stats)
	if err := p.replayOccupancy(v, src.agg, src.replay); err != nil {
		return err
	}

	// waiting requests over time
	v.waitVals = v.wait.values(0, 0, nil)
	for _, w := range v.waitVals {
		v.peak = max(v.peak, w)
	}
	waitRow := v.peak > 0 || len(v.waitingSince) > 0
	bottom := p.top + float64(v.groups)*(groupRowH+groupGap)
	if waitRow {
		bottom += groupRowH + groupGap
	}
	p.gridLines(bottom)
	p.deadlockMarks(bottom)
	p.streamMarks(bottom)

	// rows
	y := p.top
	v.cum = make([]float64, v.buckets)
	for g := range v.groups {
		p.groupRow(v, g, y)
		y += groupRowH + groupGap
	}
	if waitRow {
		p.aggWaitRow(v, y)
	}
	p.failMarks(v) // failures: marks above the rows
	p.drawMarks(bottom)
	y = p.axis(bottom)

	entries := p.aggLegend(v, src.agg)
	p.aggNotes(v, src.agg)
	p.height = p.legend(y, entries)
	return nil
}

// aggView is the aggregated view being drawn: how the slots are grouped
// into rows, and what held them and waited for them per time bucket.
type aggView struct {
	slots   int         // the slots grouped (at least one)
	size    int         // slots per group
	groups  int         // groups: one row each
	labels  []string    // the row labels: every group's, "waiting", then the admission's lane when drawn
	buckets int         // time buckets across the time axis
	keys    int         // colour keys
	stats   *colorStats // names the colours of holds
	use     *occupancy  // slots held per group and colour key
	wait    *occupancy  // requests waiting (one row, one key)
	fails   []int       // failures per time bucket

	heldAtEnd    []int           // slots held at the end per group
	heldBy       []int           // slots held at the end per group and key
	waitingSince []time.Duration // when the requests still waiting at the end were made, in order
	oldest       time.Duration   // the oldest of them (the end of the run if none)
	waitVals     []float64       // requests waiting per time bucket
	peak         float64         // the most requests waiting in a bucket

	vals, cum []float64       // buffers of the bands of a row
	band      strings.Builder // the path of a band
}

// groupSlots is the number of slots of group g (the last may have fewer).
func (v *aggView) groupSlots(g int) int { return min(v.size, v.slots-g*v.size) }

// layoutGroups groups the slots into rows, places the time axis right of
// the row labels and makes the empty buckets of slot use, waiting
// requests and failures.
func (p *picture) layoutGroups(stats *colorStats) *aggView {
	v := &aggView{slots: max(p.tl.Slots, 1), stats: stats}
	v.size = niceCount((v.slots + maxSlotGroups - 1) / maxSlotGroups)
	v.groups = (v.slots + v.size - 1) / v.size
	v.labels = make([]string, v.groups)
	for g := range v.groups {
		if v.size == 1 {
			v.labels[g] = fmt.Sprintf("slot %d", g)
		} else {
			v.labels[g] = fmt.Sprintf("slots %d-%d", g*v.size, g*v.size+v.groupSlots(g)-1)
		}
	}
	v.labels = append(v.labels, "waiting")
	if p.marks.any() {
		v.labels = append(v.labels, marksLabel)
	}
	p.layoutX(v.labels)
	p.layoutMarks()
	v.buckets = max(1, int(p.timeW/bucketPx))
	v.keys = p.colors.numKeys()
	v.use = newOccupancy(v.groups, v.keys, v.buckets, p.span)
	v.wait = newOccupancy(1, 1, v.buckets, p.span)
	v.fails = make([]int, v.buckets+1)
	return v
}

// holdKey is the colour key of a hold by a task of this region, job
// vertex and job (numbers in the colorStats).
func (p *picture) holdKey(v *aggView, region, vertex, job int32) int {
	name := v.stats.vertices.names[vertex]
	if p.colors.byJob {
		name = p.colors.ofJob(v.stats.jobs.names[job])
	}
	return p.colors.slot(p.colors.keyOf(int(region), name)) % v.keys
}

// replayOccupancy replays the run's steps into slot use, waiting requests
// and failures per bucket, then adds what agg holds at the end: the slots
// still held and the requests still waiting, up to the end of the run.
func (p *picture) replayOccupancy(v *aggView, agg *aggregator, replay func(apply func(aggOp)) error) error {
	err := replay(func(op aggOp) {
		switch op.kind {
		case opHold:
			v.use.add(int(op.slot)/v.size, p.holdKey(v, op.region, op.vertex, op.job), op.t0, op.t1)
		case opWait:
			v.wait.add(0, 0, op.t0, op.t1)
		case opFail:
			v.fails[min(int(float64(op.t0)/v.use.width), v.buckets)]++
		}
	})
	if err != nil {
		return err
	}
	end := p.end
	v.heldAtEnd = make([]int, v.groups)
	v.heldBy = make([]int, v.groups*v.keys)
	for s := range agg.holders {
		if h := &agg.holders[s]; h.held {
			key := p.holdKey(v, h.region, h.vertex, h.job)
			v.use.add(s/v.size, key, h.since, end)
			v.heldAtEnd[s/v.size]++
			v.heldBy[s/v.size*v.keys+key]++
		}
	}
	v.oldest = end
	v.waitingSince = agg.waitingSince()
	for _, at := range v.waitingSince {
		v.wait.add(0, 0, at, end)
		v.oldest = min(v.oldest, at)
	}
	return nil
}

// groupRow draws the row of group g with its top at y: its background
// (titled with the share of the slot time held), its label, a band per
// colour stacked to the slots held over time, and at a deadlock what the
// group holds then.
func (p *picture) groupRow(v *aggView, g int, y float64) {
	n := float64(v.groupSlots(g))
	total := 0.0
	clear(v.cum)
	for k := range v.keys {
		v.vals = v.use.values(g, k, v.vals)
		for _, u := range v.vals {
			total += u
		}
	}
	p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f1f1f4"><title>%s: %.0f%% of the slot time held</title></rect>`+"\n",
		p.left, y, max(p.timeW, 1), groupRowH, v.labels[g], 100*total/(n*float64(v.buckets)))
	p.text(p.left-8, y+groupRowH/2, 12, "end", "#111", v.labels[g])
	if p.timeW > 0 {
		for k := range v.keys {
			v.vals = v.use.values(g, k, v.vals)
			v.band.Reset()
			bandPath(&v.band, p.left, p.timeW/float64(v.buckets), y+groupRowH, groupRowH, v.vals, v.cum, n)
			if v.band.Len() > 0 {
				p.printf(`<path d="%s" fill="%s"/>`+"\n", v.band.String(), p.colors.color(k))
			}
		}
	}
	if p.deadlock {
		p.groupAtDeadlock(v, g, y)
	}
}

// groupAtDeadlock writes in the deadlock's column what group g (its row's
// top at y) holds at the deadlock: the share of its slots held, in the
// colour holding most of them, or that all are free.
func (p *picture) groupAtDeadlock(v *aggView, g int, y float64) {
	n := float64(v.groupSlots(g))
	keys := v.keys
	msg := allOf(v.groupSlots(g), "slot") + " free"
	if v.heldAtEnd[g] > 0 {
		top := 0
		for k := range keys {
			if v.heldBy[g*keys+k] > v.heldBy[g*keys+top] {
				top = k
			}
		}
		by := p.colors.legendName(top)
		if v.heldBy[g*keys+top] < v.heldAtEnd[g] {
			by += " and others"
		}
		msg = fmt.Sprintf("%d of %d held by %s, cannot progress", v.heldAtEnd[g], v.groupSlots(g), by)
		wd := (p.panelW() - 8) * float64(v.heldAtEnd[g]) / n
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.35" stroke="#333" stroke-width="0.6"/>`,
			p.panelX+4, y+2, wd, groupRowH-4, p.colors.color(top))
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#held)"/>`+"\n", p.panelX+4, y+2, wd, groupRowH-4)
	}
	p.text(p.panelX+8, y+groupRowH/2, 11, "start", "#111", fitText(msg, 11, false, p.panelW()-12))
}

// aggWaitRow draws the row of waiting requests with its top at y: filled
// to the requests waiting over time (a full row is the peak), and at a
// deadlock how many still wait then, since when.
func (p *picture) aggWaitRow(v *aggView, y float64) {
	p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fdf3f3"/>`+"\n", p.left, y, max(p.timeW, 1), groupRowH)
	p.text(p.left-8, y+groupRowH/2, 12, "end", "#b3181b", "waiting")
	if p.timeW > 0 && v.peak > 0 {
		clear(v.cum)
		v.band.Reset()
		bandPath(&v.band, p.left, p.timeW/float64(v.buckets), y+groupRowH, groupRowH, v.waitVals, v.cum, v.peak)
		p.printf(`<path d="%s" fill="#e8a3a4"/>`+"\n", v.band.String())
	}
	if p.deadlock && len(v.waitingSince) > 0 {
		waiting := len(v.waitingSince)
		p.text(p.panelX+8, y+groupRowH/2, 11, "start", "#b3181b",
			fitText(fmt.Sprintf("%s %s, since %s", count(waiting, "request"), verb(waiting, "waits", "wait"), formatMillis(v.oldest)), 11, false, p.panelW()-12))
	}
}

// failMarks draws a mark above the rows at every time bucket with a
// failure.
func (p *picture) failMarks(v *aggView) {
	if p.timeW <= 0 {
		return
	}
	var f strings.Builder
	for b, n := range v.fails {
		if n > 0 {
			xb := p.left + p.timeW*(float64(b)+0.5)/float64(v.buckets)
			fmt.Fprintf(&f, "M%.1f,%.1fh%.0fl%.0f,%.0fz", xb-failMarkPx/2, p.top-failMarkPx-1, failMarkPx, -failMarkPx/2, failMarkPx)
		}
	}
	if f.Len() > 0 {
		p.printf(`<path d="%s" fill="#d62728"/>`+"\n", f.String())
	}
}

// aggLegend lists the legend entries of the aggregated view: the colours,
// the waiting requests, the failures and the admission's marks.
func (p *picture) aggLegend(v *aggView, agg *aggregator) []legendEntry {
	entries := p.colors.legend()
	if p.timeW > 0 && v.peak > 0 {
		entries = append(entries, legendEntry{fill: "#e8a3a4", stroke: "#e8a3a4",
			label: fmt.Sprintf("requests waiting for a slot (full row: %.0f)", math.Ceil(v.peak-1e-9))})
	}
	if agg.failed > 0 && p.timeW > 0 {
		entries = append(entries, legendEntry{fill: "#d62728", stroke: "#d62728", label: "failures (marks above the rows)"})
	}
	return append(entries, p.marks.legend()...)
}

// aggNotes adds the notes under the legend of the aggregated view: what
// the rows show, the counts of failed and canceled attempts, and the
// colours' note.
func (p *picture) aggNotes(v *aggView, agg *aggregator) {
	what := "region"
	if !p.colors.byRegion {
		what, _ = p.colors.what()
	}
	note := fmt.Sprintf("%d task attempts on %d slots are too many for one bar each: each row is a group of %d slots, "+
		"filled to the share of them held over time, in the colour of the %s of the task that took the slot.", agg.attempts, p.tl.Slots, v.size, what)
	if agg.failed+agg.canceled > 0 {
		note += fmt.Sprintf(" Failed attempts: %d; canceled: %d.", agg.failed, agg.canceled)
	}
	p.notes = append(p.notes, note)
	if p.colors.note != "" {
		p.notes = append(p.notes, p.colors.note)
	}
}

// bandPath appends to d the rectangles of one colour band of a stacked
// area chart: bucket b is filled from cum[b] to cum[b]+vals[b] (of scale
// in all) of a row of height h with its bottom at y; cum is advanced.
// Neighbouring buckets with the same rectangle become one.
func bandPath(d *strings.Builder, left, bucketW, y, h float64, vals, cum []float64, scale float64) {
	type rect struct{ y0, y1 float64 }
	round := func(v float64) float64 { return math.Round(v*10) / 10 }
	start, cur := -1, rect{}
	flush := func(b int) {
		if start >= 0 && cur.y1 > cur.y0 {
			fmt.Fprintf(d, "M%.1f,%.1fH%.1fV%.1fH%.1fz", left+float64(start)*bucketW, cur.y0, left+float64(b)*bucketW, cur.y1, left+float64(start)*bucketW)
		}
	}
	for b, v := range vals {
		lo := min(cum[b]/scale, 1)
		hi := min((cum[b]+v)/scale, 1)
		cum[b] += v
		r := rect{round(y - hi*h), round(y - lo*h)}
		if start >= 0 && r == cur {
			continue
		}
		flush(b)
		start, cur = b, r
	}
	flush(len(vals))
}

// niceCount rounds n up to 1, 2 or 5 times a power of ten.
func niceCount(n int) int {
	for pow := 1; ; pow *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*pow >= n {
				return m * pow
			}
		}
	}
}
