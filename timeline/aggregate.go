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
	slots := max(p.tl.Slots, 1)
	size := niceCount((slots + maxSlotGroups - 1) / maxSlotGroups)
	groups := (slots + size - 1) / size
	groupSlots := func(g int) int { return min(size, slots-g*size) }
	labels := make([]string, groups)
	for g := range groups {
		if size == 1 {
			labels[g] = fmt.Sprintf("slot %d", g)
		} else {
			labels[g] = fmt.Sprintf("slots %d-%d", g*size, g*size+groupSlots(g)-1)
		}
	}
	labels = append(labels, "waiting")
	if p.marks.any() {
		labels = append(labels, marksLabel)
	}
	p.layoutX(labels)
	p.layoutMarks()
	buckets := max(1, int(p.timeW/bucketPx))
	keys := p.colors.numKeys()
	use := newOccupancy(groups, keys, buckets, p.span)
	wait := newOccupancy(1, 1, buckets, p.span)
	fails := make([]int, buckets+1)
	stats := src.agg.stats
	keyOf := func(region, vertex, job int32) int {
		name := stats.vertices.names[vertex]
		if p.colors.byJob {
			name = stats.jobs.names[job]
		}
		return p.colors.slot(p.colors.keyOf(int(region), name)) % keys
	}
	err := src.replay(func(op aggOp) {
		switch op.kind {
		case opHold:
			use.add(int(op.slot)/size, keyOf(op.region, op.vertex, op.job), op.t0, op.t1)
		case opWait:
			wait.add(0, 0, op.t0, op.t1)
		case opFail:
			fails[min(int(float64(op.t0)/use.width), buckets)]++
		}
	})
	if err != nil {
		return err
	}
	agg := src.agg
	attempts, failed, canceled := agg.attempts, agg.failed, agg.canceled
	end := p.end
	heldAtEnd := make([]int, groups)
	heldBy := make([]int, groups*keys) // slots held at the end per group and key
	for s := range agg.holders {
		if h := &agg.holders[s]; h.held {
			key := keyOf(h.region, h.vertex, h.job)
			use.add(s/size, key, h.since, end)
			heldAtEnd[s/size]++
			heldBy[s/size*keys+key]++
		}
	}
	oldest := end
	waitingSince := agg.waitingSince()
	for _, at := range waitingSince {
		wait.add(0, 0, at, end)
		oldest = min(oldest, at)
	}

	// waiting requests over time
	waitVals := wait.values(0, 0, nil)
	peak := 0.0
	for _, v := range waitVals {
		peak = max(peak, v)
	}
	waitRow := peak > 0 || len(waitingSince) > 0
	bottom := p.top + float64(groups)*(groupRowH+groupGap)
	if waitRow {
		bottom += groupRowH + groupGap
	}
	p.gridLines(bottom)
	p.deadlockMarks(bottom)
	p.streamMarks(bottom)

	// rows
	y := p.top
	var vals []float64
	cum := make([]float64, buckets)
	var d strings.Builder
	for g := range groups {
		n := float64(groupSlots(g))
		total := 0.0
		clear(cum)
		for k := range keys {
			vals = use.values(g, k, vals)
			for _, v := range vals {
				total += v
			}
		}
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f1f1f4"><title>%s: %.0f%% of the slot time held</title></rect>`+"\n",
			p.left, y, max(p.timeW, 1), groupRowH, labels[g], 100*total/(n*float64(buckets)))
		p.text(p.left-8, y+groupRowH/2, 12, "end", "#111", labels[g])
		if p.timeW > 0 {
			for k := range keys {
				vals = use.values(g, k, vals)
				d.Reset()
				bandPath(&d, p.left, p.timeW/float64(buckets), y+groupRowH, groupRowH, vals, cum, n)
				if d.Len() > 0 {
					p.printf(`<path d="%s" fill="%s"/>`+"\n", d.String(), p.colors.color(k))
				}
			}
		}
		if p.deadlock {
			msg := allOf(groupSlots(g), "slot") + " free"
			if heldAtEnd[g] > 0 {
				top := 0
				for k := range keys {
					if heldBy[g*keys+k] > heldBy[g*keys+top] {
						top = k
					}
				}
				by := p.colors.legendName(top)
				if heldBy[g*keys+top] < heldAtEnd[g] {
					by += " and others"
				}
				msg = fmt.Sprintf("%d of %d held by %s, cannot progress", heldAtEnd[g], groupSlots(g), by)
				wd := (p.panelW() - 8) * float64(heldAtEnd[g]) / n
				p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.35" stroke="#333" stroke-width="0.6"/>`,
					p.panelX+4, y+2, wd, groupRowH-4, p.colors.color(top))
				p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#held)"/>`+"\n", p.panelX+4, y+2, wd, groupRowH-4)
			}
			p.text(p.panelX+8, y+groupRowH/2, 11, "start", "#111", fitText(msg, 11, false, p.panelW()-12))
		}
		y += groupRowH + groupGap
	}
	if waitRow {
		vals = waitVals
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fdf3f3"/>`+"\n", p.left, y, max(p.timeW, 1), groupRowH)
		p.text(p.left-8, y+groupRowH/2, 12, "end", "#b3181b", "waiting")
		if p.timeW > 0 && peak > 0 {
			clear(cum)
			d.Reset()
			bandPath(&d, p.left, p.timeW/float64(buckets), y+groupRowH, groupRowH, vals, cum, peak)
			p.printf(`<path d="%s" fill="#e8a3a4"/>`+"\n", d.String())
		}
		if p.deadlock && len(waitingSince) > 0 {
			p.text(p.panelX+8, y+groupRowH/2, 11, "start", "#b3181b",
				fitText(fmt.Sprintf("%s %s, since %s", count(len(waitingSince), "request"), verb(len(waitingSince), "waits", "wait"), formatMillis(oldest)), 11, false, p.panelW()-12))
		}
	}
	if p.timeW > 0 { // failures: marks above the rows
		var f strings.Builder
		for b, n := range fails {
			if n > 0 {
				xb := p.left + p.timeW*(float64(b)+0.5)/float64(buckets)
				fmt.Fprintf(&f, "M%.1f,%.1fh%.0fl%.0f,%.0fz", xb-failMarkPx/2, p.top-failMarkPx-1, failMarkPx, -failMarkPx/2, failMarkPx)
			}
		}
		if f.Len() > 0 {
			p.printf(`<path d="%s" fill="#d62728"/>`+"\n", f.String())
		}
	}
	p.drawMarks(bottom)
	y = p.axis(bottom)

	entries := p.colors.legend()
	if p.timeW > 0 && peak > 0 {
		entries = append(entries, legendEntry{fill: "#e8a3a4", stroke: "#e8a3a4",
			label: fmt.Sprintf("requests waiting for a slot (full row: %.0f)", math.Ceil(peak-1e-9))})
	}
	if failed > 0 && p.timeW > 0 {
		entries = append(entries, legendEntry{fill: "#d62728", stroke: "#d62728", label: "failures (marks above the rows)"})
	}
	entries = append(entries, p.marks.legend()...)
	what := "region"
	switch {
	case p.colors.byJob:
		what = "job"
	case !p.colors.byRegion:
		what = "job vertex"
	}
	note := fmt.Sprintf("%d task attempts on %d slots are too many for one bar each: each row is a group of %d slots, "+
		"filled to the share of them held over time, in the colour of the %s of the task that took the slot.", attempts, p.tl.Slots, size, what)
	if failed+canceled > 0 {
		note += fmt.Sprintf(" Failed attempts: %d; canceled: %d.", failed, canceled)
	}
	p.notes = append(p.notes, note)
	if p.colors.note != "" {
		p.notes = append(p.notes, p.colors.note)
	}
	p.height = p.legend(y, entries)
	return nil
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
