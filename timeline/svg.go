package timeline

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/regionsched/regionsched/runfile"
)

// Timeline is what WriteSVG draws: one row per slot, one bar per task
// attempt from its deploy to its finish, failure or cancellation. Its
// fields but Events, Verdict and Reason say how to draw the run; those
// three are the run's (a simulator.Result's).
type Timeline struct {
	// Title heads the picture (the job's name, say); Subtitle is the
	// line under it (the cluster, the mode, the seed).
	Title    string
	Subtitle string
	// Slots is the number of slot rows (simulator.Result.Slots). A slot
	// the events name beyond it still gets its row.
	Slots int
	// Regions is the number of pipelined regions of the run: under
	// ColorAuto it decides whether the colours stand for regions.
	Regions int
	// Makespan is where the time axis ends: the run's last event
	// (simulator.Result.Makespan).
	Makespan time.Duration
	// Events are the run's events in time order (simulator.Result.Events
	// of a run with Config.Record). Recorder.WriteSVG ignores them and
	// draws the events it was handed instead.
	Events []runfile.Event
	// Verdict is how the run ended. For a runfile.Deadlock the bars
	// stop at Makespan, the time of the deadlock, the requests still
	// waiting for a slot are drawn, and a column shows what every slot
	// holds then; when a task was deployed at that very instant, the
	// axis goes on for a tenth of Makespan past it, what holds a slot
	// drawn on to its end, so that every bar the column names shows. For runfile.Steady (a stream deployed in full, which
	// runs on) the time axis goes on for StreamWindow after Makespan, the
	// last event, and what still holds its slot is drawn running on to
	// the end of the axis.
	Verdict runfile.Verdict
	// Reason is the verdict line (simulator.Result.Reason), written into
	// the picture under the title.
	Reason string
	// ColorBy says what a bar's colour stands for.
	ColorBy ColorBy
	// Progress says the events include when tasks make progress (kinds
	// runfile.Progress and Stall: simulator.Config.Detail): the time a
	// task holds its slot without making progress, what the summary
	// counts as held while waiting, is drawn hatched. Without it, bars
	// are plain.
	Progress bool
	// Jobs lists the job names of a run of several jobs in the order
	// their colours and legend entries take under ColorByJob (every job
	// gets a legend entry, even one that never got a slot); jobs of the
	// events not listed follow in order of appearance. Under ColorByQueue
	// their queues come first, in the order of their first job.
	Jobs []string
	// JobQueues maps every job to the queue it was submitted to (the
	// leaf queue, its hierarchical name as given: "root.prod.etl") for
	// ColorByQueue; the key is runfile.Event.Job, "" for the one job of
	// a run of one job. Under ColorByQueue a job of the events or of Jobs
	// missing from it is an error (*JobQueueError); other modes ignore it.
	JobQueues map[string]string
}

// ColorBy says what the colours of a timeline stand for.
type ColorBy uint8

const (
	// ColorAuto colours by region when there are at most as many regions
	// as colours, by job vertex otherwise.
	ColorAuto ColorBy = iota
	// ColorByRegion colours by pipelined region (colours repeat when
	// there are more regions than colours).
	ColorByRegion
	// ColorByVertex colours by job vertex (the eager policy has no
	// regions); the most frequent vertices get colours, the rest grey.
	ColorByVertex
	// ColorByJob colours by job (runfile.Event.Job), for runs of
	// several jobs: one colour per job with the job names in the legend
	// (the most frequent jobs get colours, the rest grey), and drivers
	// (task runfile.DriverTask) drawn hatched in their job's colour and
	// labelled.
	ColorByJob
	// ColorByQueue colours by the queue of each job (Timeline.JobQueues),
	// for the tenants of a shared cluster: one colour per queue with the
	// queue names in the legend (the most frequent queues get colours,
	// the rest grey), and drivers drawn hatched in their queue's colour
	// as under ColorByJob.
	ColorByQueue
)

// JobQueueError is the error of a picture coloured by queue
// (ColorByQueue) when Timeline.JobQueues lacks a job the events or
// Timeline.Jobs name.
type JobQueueError struct {
	// Job is the job without a queue ("" for the one job of a run of
	// one job).
	Job string
	// Jobs are the jobs JobQueues maps, sorted.
	Jobs []string
}

// Error names the job without a queue and the jobs JobQueues maps.
func (e *JobQueueError) Error() string {
	const shown = 10 // the jobs mapped the message names
	names := strings.Join(e.Jobs[:min(len(e.Jobs), shown)], ", ")
	if len(e.Jobs) > shown {
		names += fmt.Sprintf(" and %d more", len(e.Jobs)-shown)
	}
	if len(e.Jobs) == 0 {
		names = "none"
	}
	return fmt.Sprintf("timeline: job %q has no queue in Timeline.JobQueues (ColorByQueue); the jobs it maps: %s", e.Job, names)
}

// StreamWindow is how far the picture of a stream (runfile.Steady) draws
// past the run's last event: the stream runs on beyond it.
const StreamWindow = time.Second

// Above these sizes WriteSVG draws slot use per group of slots instead of
// one bar per task attempt: the picture keeps a bounded size.
const (
	maxDetailedBars  = 3000
	maxDetailedSlots = 120
	maxSlotGroups    = 24
	maxWaitLanes     = 12
)

// Layout of the picture, in pixels.
const (
	canvasW   = 1200.0
	margin    = 16.0
	rightPad  = 28.0
	laneH     = 22.0
	rowGap    = 6.0
	panelW    = 250.0
	panelGap  = 14.0
	axisH     = 44.0
	legendRow = 22.0
)

// WriteSVG renders the timeline as a standalone SVG picture: slots on the
// vertical axis, virtual time on the horizontal one. Small runs get one
// bar per task attempt, coloured by region or job vertex with a legend,
// failed attempts outlined in red, canceled ones faded with a dashed
// outline, attempts still holding a slot at the end with a hatched end. A
// deadlock stops the time axis at the deadlock, draws the requests that
// wait for a slot and the state of every slot then, and writes the
// verdict. Runs of more than a few thousand task attempts (or more than
// 120 slots) are drawn as slot use over time per group of
// slots, at a size that does not grow with the run. The cost is linear in
// the number of events.
func WriteSVG(w io.Writer, tl Timeline) error {
	// a row for every slot the events name, even if tl.Slots is too small
	deploys := 0
	var stats colorStats
	for _, e := range tl.Events {
		if e.Slot >= tl.Slots {
			tl.Slots = e.Slot + 1
		}
		if e.Kind == runfile.Deploy {
			deploys++
		}
		stats.observe(e)
	}
	pic, err := newPicture(tl, &stats)
	if err != nil {
		return err
	}
	for _, e := range tl.Events {
		pic.marks.observe(e)
	}
	if aggregated(deploys, tl.Slots) {
		if err := pic.aggregate(eventSource(tl.Events, &stats)); err != nil {
			return err
		}
	} else {
		pic.detail()
	}
	return pic.write(w)
}

// aggregated reports whether a run of this many task attempts on this
// many slots is drawn as slot use per group of slots.
func aggregated(deploys, slots int) bool {
	return deploys > maxDetailedBars || slots > maxDetailedSlots
}

// picture is a timeline being laid out; its elements are written at the
// end, when the height is known.
type picture struct {
	tl       Timeline
	colors   colorKeys
	deadlock bool
	stream   bool          // Steady: the axis goes on for StreamWindow
	span     time.Duration // the time axis: 0 to span
	end      time.Duration // where what is open at the end of the run is drawn to
	marks    markSet       // the admission's lane
	left     float64       // x of the time axis' origin
	timeW    float64       // width of the time axis (0: every event at time 0 of a deadlock)
	panelX   float64       // x of the column showing the state at the deadlock
	top      float64       // y of the first row
	header   []line
	body     strings.Builder
	height   float64
	notes    []string
}

// line is a line of header text.
type line struct {
	text, fill string
	size       float64
	bold       bool
}

// newPicture starts the picture of tl, whose events (so far) stats
// gathered: its colours and its header. A job without a queue under
// ColorByQueue is an error (*JobQueueError).
func newPicture(tl Timeline, stats *colorStats) (*picture, error) {
	p := &picture{tl: tl, deadlock: tl.Verdict == runfile.Deadlock, span: tl.Makespan, end: tl.Makespan}
	if tl.Verdict == runfile.Steady {
		p.stream, p.span = true, tl.Makespan+StreamWindow
		p.end = p.span
	}
	var err error
	if p.colors, err = newColorKeys(tl, stats); err != nil {
		return nil, err
	}
	textW := canvasW - 2*margin
	for _, l := range wrapText(tl.Title, 18, true, textW) {
		p.header = append(p.header, line{l, "#111", 18, true})
	}
	for _, l := range wrapText(tl.Subtitle, 13, false, textW) {
		p.header = append(p.header, line{l, "#444", 13, false})
	}
	fill := "#2b6a2b"
	if !tl.Verdict.OK() {
		fill = "#b3181b"
	}
	for _, l := range wrapText(tl.Reason, 13, true, textW) {
		p.header = append(p.header, line{l, fill, 13, true})
	}
	y := 12.0
	for _, l := range p.header {
		y += l.size * 1.4
	}
	p.top = y + 34 // room for the marker of the deadlock and the column title
	return p, nil
}

// deadlockTail is the fraction of the run (one over it) a deadlock's
// picture draws past the deadlock when a task deployed at that instant
// holds a slot.
const deadlockTail = 10

// deployedAtTheEnd reports whether a task was deployed at the last
// instant of a run that took some time.
func deployedAtTheEnd(tl Timeline) bool {
	if tl.Makespan <= 0 {
		return false
	}
	for i := len(tl.Events) - 1; i >= 0 && tl.Events[i].At == tl.Makespan; i-- {
		if tl.Events[i].Kind == runfile.Deploy {
			return true
		}
	}
	return false
}

// layoutX places the time axis and the deadlock column right of the row
// labels.
func (p *picture) layoutX(labels []string) {
	labelW := 0.0
	for _, l := range labels {
		labelW = max(labelW, textWidth(l, 12, false))
	}
	p.left = max(60, math.Ceil(labelW)+margin+8)
	p.timeW = canvasW - p.left - rightPad
	if p.deadlock {
		p.timeW -= panelW + panelGap
		if p.span <= 0 { // everything happened at 0 ms: only the state at the deadlock
			p.timeW = 0
		}
		p.panelX = p.left + p.timeW
		if p.timeW > 0 {
			p.panelX += panelGap
		}
	}
	if p.span <= 0 {
		p.span = time.Millisecond
	}
}

func (p *picture) x(t time.Duration) float64 {
	return p.left + p.timeW*float64(min(t, p.span))/float64(p.span)
}

// endX is x for the end t of what is drawn: what is still open at a
// deadlock is drawn on to the end of the axis, which goes past the
// deadlock when a task was deployed at that instant.
func (p *picture) endX(t time.Duration, open bool) float64 {
	if open && p.deadlock && t >= p.end {
		return p.x(p.span)
	}
	return p.x(t)
}

func (p *picture) printf(format string, a ...any) { fmt.Fprintf(&p.body, format, a...) }

// text writes a label; s is escaped here.
func (p *picture) text(x, y, size float64, anchor, fill, s string) {
	// y is the middle of the text: the baseline sits 0.35 em below it
	// (dominant-baseline is not honoured by every renderer)
	p.printf(`<text x="%.1f" y="%.1f" font-size="%.0f" text-anchor="%s" fill="%s">%s</text>`+"\n",
		x, y+0.35*size, size, anchor, fill, xmlText(s))
}

// deadlockMarks draws the line at the time of the deadlock and the title
// of the column showing the state then.
func (p *picture) deadlockMarks(bottom float64) {
	if !p.deadlock {
		return
	}
	ty := p.top - 14
	at := formatMillis(p.tl.Makespan)
	if p.timeW > 0 {
		xe := p.x(p.tl.Makespan)
		p.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6,3"/>`+"\n", xe, ty+8, xe, bottom)
		p.text(xe-5, ty, 11, "end", "#d62728", fitText("deadlock at "+at+": nothing progresses after", 11, false, p.timeW-5))
	}
	p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fbeeee" stroke="#d62728" stroke-width="0.8"/>`+"\n",
		p.panelX, p.top-4, p.panelW(), bottom-p.top+4)
	p.printf(`<text x="%.1f" y="%.1f" font-size="12" font-weight="bold" fill="#b3181b">%s</text>`+"\n",
		p.panelX+4, ty+0.35*12, xmlText(fitText("at the deadlock ("+at+")", 12, true, p.panelW()-8)))
}

func (p *picture) panelW() float64 { return canvasW - rightPad - p.panelX }

// axis draws the time axis under the rows and returns the y below it.
func (p *picture) axis(bottom float64) float64 {
	if p.timeW <= 0 {
		p.text(p.left, bottom+16, 11, "start", "#444", "every event of the run happened at 0 ms")
		return bottom + 30
	}
	step := niceStep(p.span, max(2, int(p.timeW/110)))
	p.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", p.left, bottom, p.left+p.timeW, bottom)
	for t := time.Duration(0); t <= p.span; t += step {
		xt := p.x(t)
		p.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", xt, bottom, xt, bottom+5)
		p.text(xt, bottom+16, 11, "middle", "#111", formatTick(t, step))
	}
	p.text(p.left+p.timeW/2, bottom+32, 12, "middle", "#444", "virtual time")
	return bottom + axisH
}

// gridLines draws faint vertical lines at the ticks behind the bars.
func (p *picture) gridLines(bottom float64) {
	if p.timeW <= 0 {
		return
	}
	step := niceStep(p.span, max(2, int(p.timeW/110)))
	for t := time.Duration(0); t <= p.span; t += step {
		xt := p.x(t)
		p.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ccc" stroke-dasharray="2,3"/>`+"\n", xt, p.top-4, xt, bottom)
	}
}

// legendEntry is one swatch of the legend.
type legendEntry struct {
	fill, stroke, pattern, label string
}

// legend draws entries flowing left to right, wrapping at the canvas
// edge, then the notes; it returns the y below.
func (p *picture) legend(y float64, entries []legendEntry) float64 {
	x := p.left
	y += 12
	if t := p.colors.title; t != "" && len(entries) > 0 {
		p.text(x, y, 12, "start", "#444", t)
		x += textWidth(t, 12, false) + 10
	}
	for _, e := range entries {
		label := fitText(e.label, 12, false, canvasW-rightPad-p.left-20)
		w := 20 + textWidth(label, 12, false) + 18
		if x > p.left && x+w > canvasW-rightPad {
			x, y = p.left, y+legendRow
		}
		stroke := e.stroke
		if stroke == "" {
			stroke = "#333"
		}
		p.printf(`<rect x="%.1f" y="%.1f" width="14" height="14" rx="2" fill="%s" stroke="%s"/>`, x, y-7, e.fill, stroke)
		if e.pattern != "" {
			p.printf(`<rect x="%.1f" y="%.1f" width="14" height="14" fill="%s"/>`, x, y-7, e.pattern)
		}
		p.text(x+20, y, 12, "start", "#111", label)
		x += w
	}
	if len(entries) > 0 {
		y += legendRow
	}
	for _, n := range p.notes {
		for _, l := range wrapText(n, 11, false, canvasW-rightPad-p.left) {
			p.text(p.left, y, 11, "start", "#555", l)
			y += 15
		}
	}
	return y
}

// write emits the SVG document.
func (p *picture) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	height := math.Ceil(p.height + margin)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`+"\n",
		canvasW, height, canvasW, height)
	bw.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#000" fill-opacity="0.35"/></pattern>` +
		`<pattern id="held" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="2" height="8" fill="#d62728" fill-opacity="0.25"/></pattern>` +
		`<pattern id="driver" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="4" height="8" fill="#ffffff" fill-opacity="0.6"/></pattern>` +
		`<pattern id="kept" width="10" height="10" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="1.5" height="10" fill="#555" fill-opacity="0.45"/></pattern></defs>` + "\n")
	bw.WriteString(`<rect width="100%" height="100%" fill="#ffffff"/>` + "\n")
	y := 12.0
	for _, l := range p.header {
		y += l.size * 1.4
		weight := ""
		if l.bold {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(bw, `<text x="%.0f" y="%.1f" font-size="%.0f"%s fill="%s">%s</text>`+"\n", margin, y-l.size*0.3, l.size, weight, l.fill, xmlText(l.text))
	}
	bw.WriteString(p.body.String())
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// span is one task attempt in one slot (or, for the aggregated view, one
// holding of a slot).
type span struct {
	job, task             string
	key                   int // colour key
	region, slot, attempt int
	start, end            time.Duration
	outcome               runfile.Kind // Finish, Fail, Cancel, or Deploy if still holding its slot at the end
	seq                   int          // order of the deploy in the trace
	lane                  int
	// stalls are the times it held its slot without progress
	// (Timeline.Progress), in order; stallFrom is when the current one
	// began, -1 while it progresses.
	stalls    []window
	stallFrom time.Duration
	// endStalled: it held its slot without progress when the run ended
	// (still open then).
	endStalled bool
	// speculative: a speculative attempt (speculation.go).
	speculative bool
}

// window is a stretch of time.
type window struct{ from, to time.Duration }

// stalled reports whether the attempt was still open and made no
// progress when the run ended.
func (s *span) stalled() bool { return s.endStalled }

// stall ends the current stall at t.
func (s *span) stall(t time.Duration) {
	if s.stallFrom >= 0 && t > s.stallFrom {
		s.stalls = append(s.stalls, window{s.stallFrom, t})
	}
	s.stallFrom = -1
}

// request is a slot request that waited: from its request to its deploy,
// to its withdrawal when its job ended without it or its region
// restarted before it got its slots (withdrawn; restarted: the task asked
// again at that instant), or to the end of the run if it never got a slot
// and is still asked for (open).
type request struct {
	job, task                  string
	key                        int
	from, to                   time.Duration
	open, withdrawn, restarted bool
	seq                        int
	attemptKey                 taskKey
}

// keptSpan is a slot the admission kept for a job with nothing of the
// job in it (Reserve to Unreserve): a gang placeholder, or a free slot
// reserved for the job's claim; open if still kept at the end.
type keptSpan struct {
	job        string
	slot       int
	from, to   time.Duration
	gang, open bool
}

// taskKey names one attempt of a task; tasks of different jobs may have
// the same name.
type taskKey struct {
	job, task string
	attempt   int
}

// scan pairs deploys with the events ending them, requests with their
// deploys or withdrawals and reserves with their unreserves, in one pass over the
// events. onBar gets every attempt (open ones last, in deploy order);
// onRequest every request, open ones last; onKept every slot kept, open
// ones last.
func (p *picture) scan(onBar func(span), onRequest func(request), onKept func(keptSpan)) {
	end := p.end
	open := map[taskKey]*span{}
	asked := map[taskKey]request{}
	// withdrawnNow holds the requests withdrawn at instant now, by job and
	// task, until it passes: one whose task asks again at that instant
	// was withdrawn as its region restarted.
	withdrawnNow := map[[2]string]request{}
	var now time.Duration
	passed := func() {
		for _, r := range withdrawnNow {
			onRequest(r)
		}
		clear(withdrawnNow)
	}
	kept := map[int]*keptSpan{}
	var keptOrder []*keptSpan
	for i, e := range p.tl.Events {
		k := taskKey{e.Job, e.Task, e.Attempt}
		if e.At != now {
			passed()
			now = e.At
		}
		switch e.Kind {
		case runfile.Request:
			if r, ok := withdrawnNow[[2]string{e.Job, e.Task}]; ok {
				r.restarted = true
				withdrawnNow[[2]string{e.Job, e.Task}] = r
			}
			asked[k] = request{job: e.Job, task: e.Task, key: p.colors.of(e), from: e.At, seq: i, attemptKey: k}
		case runfile.Deploy:
			if r, ok := asked[k]; ok {
				delete(asked, k)
				r.to = e.At
				onRequest(r)
			}
			s := &span{job: e.Job, task: e.Task, key: p.colors.of(e), region: e.Region, slot: e.Slot, attempt: e.Attempt, start: e.At, end: end,
				outcome: runfile.Deploy, seq: i, stallFrom: -1, speculative: e.Speculative}
			if p.tl.Progress && !p.isDriver(*s) {
				s.stallFrom = e.At // held without progress until it progresses
			}
			open[k] = s
		case runfile.Withdraw:
			if r, ok := asked[k]; ok {
				delete(asked, k)
				r.to, r.withdrawn = e.At, true
				withdrawnNow[[2]string{e.Job, e.Task}] = r
			}
		case runfile.Progress:
			if s, ok := open[k]; ok {
				s.stall(e.At)
			}
		case runfile.Stall:
			if s, ok := open[k]; ok && s.stallFrom < 0 && p.tl.Progress {
				s.stallFrom = e.At
			}
		case runfile.Finish, runfile.Fail, runfile.Cancel:
			if s, ok := open[k]; ok {
				delete(open, k)
				s.end, s.outcome = e.At, e.Kind
				s.stall(e.At)
				onBar(*s)
			}
		case runfile.Reserve:
			if _, ok := kept[e.Slot]; !ok {
				ks := &keptSpan{job: e.Job, slot: e.Slot, from: e.At, gang: e.Reason == "gang"}
				kept[e.Slot] = ks
				keptOrder = append(keptOrder, ks)
			}
		case runfile.Unreserve:
			if ks, ok := kept[e.Slot]; ok {
				delete(kept, e.Slot)
				ks.to = e.At
				onKept(*ks)
			}
		}
	}
	passed()
	rest := make([]*span, 0, len(open))
	for _, s := range open {
		s.endStalled = s.stallFrom >= 0
		s.stall(end)
		rest = append(rest, s)
	}
	sort.Slice(rest, func(a, b int) bool { return rest[a].seq < rest[b].seq })
	for _, s := range rest {
		onBar(*s)
	}
	waiting := make([]request, 0, len(asked))
	for _, r := range asked {
		r.to, r.open = end, true
		waiting = append(waiting, r)
	}
	sort.Slice(waiting, func(a, b int) bool { return waiting[a].seq < waiting[b].seq })
	for _, r := range waiting {
		onRequest(r)
	}
	for _, ks := range keptOrder {
		if _, ok := kept[ks.slot]; ok && kept[ks.slot] == ks {
			ks.to, ks.open = end, true
			onKept(*ks)
		}
	}
}

// detail draws one bar per task attempt.
func (p *picture) detail() {
	if p.deadlock && deployedAtTheEnd(p.tl) {
		// A bar that starts at the deadlock would have no width: what
		// every slot holds is drawn on past the deadlock's line (endX).
		p.span = p.tl.Makespan + p.tl.Makespan/deadlockTail
	}
	d := p.collectSpans()
	rows := p.layoutRows(d)

	// rows, labels, grid
	p.drawRows(rows)
	p.gridLines(rows.bottom)
	p.deadlockMarks(rows.bottom)
	p.streamMarks(rows.bottom)
	p.drawBars(rows, d)
	p.winMarks(rows.rowTop)
	// the slots at the deadlock
	if p.deadlock {
		p.deadlockColumn(rows, d)
	}
	// requests still waiting for a slot at the end
	p.waitingRequests(rows, d.waiting)
	p.drawMarks(rows.bottom)

	y := p.axis(rows.bottom)
	counts := p.countBars(d.bars)
	entries := p.detailLegend(rows, d, counts)
	p.detailNotes(rows, counts)
	p.height = p.legend(y, entries)
}

// detailSpans is what the detailed view draws.
type detailSpans struct {
	bars []span // every task attempt, in deploy order
	// waiting is the requests drawn in the waiting row, in request
	// order: those still waiting for a slot at the end, and those
	// withdrawn when their job ended or their region restarted
	waiting []request
	kept    []keptSpan // the slots kept for jobs
}

// collectSpans collects the bars, the open and withdrawn requests and
// the slots kept of the run (scan), the bars in deploy order and the
// requests in request order.
func (p *picture) collectSpans() detailSpans {
	var d detailSpans
	p.scan(func(s span) { d.bars = append(d.bars, s) }, func(r request) {
		if r.open || r.withdrawn {
			d.waiting = append(d.waiting, r)
		}
	}, func(k keptSpan) { d.kept = append(d.kept, k) })
	sort.SliceStable(d.bars, func(a, b int) bool { return d.bars[a].seq < d.bars[b].seq })
	sort.SliceStable(d.waiting, func(a, b int) bool { return d.waiting[a].seq < d.waiting[b].seq })
	return d
}

// detailRows is the vertical layout of the detailed view.
type detailRows struct {
	lanes     []int     // lanes per slot: bars sharing a slot are stacked
	labels    []string  // the row labels: every slot's, then "waiting" and the admission's lane when drawn
	rowTop    []float64 // the top of each slot's row; rowTop[Slots] is below the last
	waitTop   float64   // the top of the row of waiting requests
	waitLanes int       // the lanes of that row (0: no such row)
	bottom    float64   // the y below the rows
}

// layoutRows stacks the bars sharing a slot in lanes (setting each bar's
// lane), places the time axis right of the row labels and lays out the
// rows top to bottom: a row per slot, then the waiting requests.
func (p *picture) layoutRows(d detailSpans) detailRows {
	var rows detailRows
	rows.lanes = assignLanes(d.bars, p.tl.Slots)
	rows.labels = make([]string, 0, p.tl.Slots+2)
	for s := range p.tl.Slots {
		rows.labels = append(rows.labels, fmt.Sprintf("slot %d", s))
	}
	if len(d.waiting) > 0 {
		rows.labels = append(rows.labels, "waiting")
	}
	if p.marks.any() {
		rows.labels = append(rows.labels, marksLabel)
	}
	p.layoutX(rows.labels)
	p.layoutMarks()

	rows.rowTop = make([]float64, p.tl.Slots+1)
	y := p.top
	for s := range p.tl.Slots {
		rows.rowTop[s] = y
		y += float64(max(1, rows.lanes[s]))*laneH + rowGap
	}
	rows.rowTop[p.tl.Slots] = y
	rows.waitLanes = min(len(d.waiting), maxWaitLanes)
	rows.waitTop = y + 4
	if rows.waitLanes > 0 {
		y = rows.waitTop + float64(rows.waitLanes)*laneH + rowGap
	}
	rows.bottom = y
	return rows
}

// drawRows draws the background and label of every slot's row and of
// the row of waiting requests.
func (p *picture) drawRows(rows detailRows) {
	rowTop := rows.rowTop
	for s := range p.tl.Slots {
		fill := "#f4f4f6"
		if s%2 == 1 {
			fill = "#eaeaef"
		}
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", p.left, rowTop[s], max(p.timeW, 1), rowTop[s+1]-rowTop[s]-rowGap, fill)
		p.text(p.left-8, (rowTop[s]+rowTop[s+1]-rowGap)/2, 12, "end", "#111", rows.labels[s])
	}
	if rows.waitLanes > 0 {
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fdf3f3"/>`+"\n", p.left, rows.waitTop, max(p.timeW, 1), float64(rows.waitLanes)*laneH)
		p.text(p.left-8, rows.waitTop+laneH/2, 12, "end", "#b3181b", "waiting")
	}
}

// drawBars draws the slots kept for jobs, then a bar per task attempt in
// its slot's row and lane.
func (p *picture) drawBars(rows detailRows, d detailSpans) {
	// the slots kept for jobs, behind the bars
	for _, k := range d.kept {
		if k.slot >= 0 && k.slot < p.tl.Slots {
			p.keptBar(k, rows.rowTop[k.slot]+2)
		}
	}
	// bars
	for _, b := range d.bars {
		if b.slot < 0 || b.slot >= p.tl.Slots {
			continue
		}
		y0 := rows.rowTop[b.slot] + float64(b.lane)*laneH + 2
		p.bar(b, y0)
	}
}

// deadlockColumn fills the column showing the slots at the deadlock: what
// holds each slot then, or that it is kept for a job, or free.
func (p *picture) deadlockColumn(rows detailRows, d detailSpans) {
	rowTop := rows.rowTop
	pw := p.panelW() - 8
	held := make([]bool, p.tl.Slots)
	for _, b := range d.bars {
		if b.outcome != runfile.Deploy || b.slot < 0 || b.slot >= p.tl.Slots {
			continue
		}
		held[b.slot] = true
		y0 := rowTop[b.slot] + float64(b.lane)*laneH + 2
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" fill-opacity="0.35" stroke="#333" stroke-width="0.8"/>`,
			p.panelX+4, y0, pw, laneH-4, p.colors.color(b.key))
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#held)"/>`, p.panelX+4, y0, pw, laneH-4)
		p.text(p.panelX+8, y0+(laneH-4)/2, 11, "start", "#111", fitText(p.holdsText(b), 11, false, pw-8))
		p.printf("\n")
	}
	keptAt := map[int]keptSpan{}
	for _, k := range d.kept {
		if k.open {
			keptAt[k.slot] = k
		}
	}
	for s := range p.tl.Slots {
		if held[s] {
			continue
		}
		msg, fill := "free", "#777"
		if k, ok := keptAt[s]; ok {
			msg, fill = keptText(k)+", idle", "#333"
		}
		p.text(p.panelX+8, (rowTop[s]+rowTop[s+1]-rowGap)/2, 11, "start", fill, fitText(msg, 11, false, pw-8))
	}
}

// waitingRequests draws the requests still waiting for a slot at the end
// and those withdrawn when their job ended or their region restarted (up
// to the withdrawal), one per
// lane of the waiting row (the last lane sums up the rest), and at a
// deadlock lists them in the deadlock's column too.
func (p *picture) waitingRequests(rows detailRows, waiting []request) {
	for i := range rows.waitLanes {
		r := waiting[i]
		y0 := rows.waitTop + float64(i)*laneH + 2
		name := qualified(r.job, r.task)
		label := name + " waits for a slot since " + formatMillis(r.from)
		if r.withdrawn {
			why := " as its job ended"
			if r.restarted {
				why = " as its region restarted"
			}
			label = name + " withdrawn at " + formatMillis(r.to) + why + ", after waiting since " + formatMillis(r.from)
		}
		if i == maxWaitLanes-1 && len(waiting) > maxWaitLanes {
			label = moreRequests(name, waiting[i+1:])
		}
		if p.timeW > 0 {
			x0, x1 := p.x(r.from), p.endX(r.to, r.open)
			wd := math.Max(x1-x0, 1.5)
			class, fill, stroke := "waiting", "#f7c6c7", "#d62728"
			if r.withdrawn {
				class, fill, stroke = "withdrawn", "#f4e9e9", "#9a6b6c"
			}
			p.printf(`<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" stroke="%s" stroke-width="1" stroke-dasharray="4,2"><title>%s</title></rect>`+"\n",
				class, x0, y0, wd, laneH-4, fill, stroke, xmlText(label))
			if textWidth(name, 11, false)+8 < wd {
				p.text(x0+4, y0+(laneH-4)/2, 11, "start", "#7a1012", fitText(label, 11, false, wd-8))
			}
		}
		if p.deadlock {
			if textWidth(label, 11, false) > p.panelW()-12 && !strings.Contains(label, " more ") {
				label = name + " waits since " + formatMillis(r.from) // the time matters more than the words
			}
			p.text(p.panelX+8, y0+(laneH-4)/2, 11, "start", "#b3181b", fitText(label, 11, false, p.panelW()-12))
		}
	}
}

// moreRequests is the label of the last lane of the waiting row when
// more requests than lanes are drawn: the lane's own (name) and how many
// more wait, or were withdrawn.
func moreRequests(name string, rest []request) string {
	withdrawn := 0
	for _, r := range rest {
		if r.withdrawn {
			withdrawn++
		}
	}
	if withdrawn == 0 {
		return fmt.Sprintf("%s and %d more %s for a slot", name, len(rest), verb(len(rest), "request wait", "requests wait"))
	}
	return fmt.Sprintf("%s and %d more %s for a slot, %d withdrawn", name, len(rest), verb(len(rest), "request", "requests"), withdrawn)
}

// barCounts counts the bars of the detailed view the legend and the
// notes explain.
type barCounts struct {
	outcomes [runfile.Release + 1]int // bars per outcome
	drivers  int                      // drivers of jobs (isDriver)
	stalled  int                      // bars that held their slot without progress for a while
	tails    int                      // bars still holding their slot at the end, progressing (or not known)
}

// countBars counts the bars by outcome and by what the legend explains.
func (p *picture) countBars(bars []span) barCounts {
	var c barCounts
	for _, b := range bars {
		c.outcomes[b.outcome]++
		if p.isDriver(b) {
			c.drivers++
		}
		if len(b.stalls) > 0 {
			c.stalled++
		}
		if b.outcome == runfile.Deploy && !b.stalled() {
			c.tails++
		}
	}
	return c
}

// detailLegend lists the legend entries of the detailed view: the
// colours, then a swatch for every kind of mark the picture has.
func (p *picture) detailLegend(rows detailRows, d detailSpans, c barCounts) []legendEntry {
	entries := p.colors.legend()
	if c.drivers > 0 && p.timeW > 0 {
		what, _ := p.colors.what()
		entries = append(entries, legendEntry{fill: "#bbbbbb", stroke: "#777", pattern: "url(#driver)", label: "driver (job master) in its " + what + "'s colour"})
	}
	if c.stalled > 0 && p.timeW > 0 {
		entries = append(entries, legendEntry{fill: "#e4e4e4", pattern: "url(#held)", label: "holds its slot without progress (held while waiting)"})
	}
	if c.outcomes[runfile.Fail] > 0 {
		entries = append(entries, legendEntry{fill: "#ffffff", stroke: "#d62728", label: "failed ✗"})
	}
	if c.outcomes[runfile.Cancel] > 0 {
		entries = append(entries, legendEntry{fill: "#dddddd", stroke: "#888", label: "canceled (faded)"})
	}
	if c.tails > 0 && p.timeW > 0 {
		label := "holds its slot when the run ends"
		if p.stream {
			label = "runs on beyond this window"
		}
		entries = append(entries, legendEntry{fill: "#ffffff", pattern: "url(#hatch)", label: label})
	}
	if len(d.kept) > 0 && p.timeW > 0 {
		entries = append(entries, legendEntry{fill: "#ffffff", stroke: "#555", pattern: "url(#kept)", label: "slot kept for a job, idle (gang placeholder or claim)"})
	}
	if rows.waitLanes > 0 && p.timeW > 0 {
		open, ended, restarted := 0, 0, 0
		for _, r := range d.waiting {
			switch {
			case r.restarted:
				restarted++
			case r.withdrawn:
				ended++
			default:
				open++
			}
		}
		if open > 0 {
			entries = append(entries, legendEntry{fill: "#f7c6c7", stroke: "#d62728", label: "request waiting for a slot"})
		}
		if ended > 0 {
			entries = append(entries, legendEntry{fill: "#f4e9e9", stroke: "#9a6b6c", label: "request withdrawn when its job ended"})
		}
		if restarted > 0 {
			entries = append(entries, legendEntry{fill: "#f4e9e9", stroke: "#9a6b6c", label: "request withdrawn when its region restarted"})
		}
	}
	entries = append(entries, p.marks.legend()...)
	entries = append(entries, p.speculationLegend(d.bars)...)
	return entries
}

// detailNotes adds the notes under the legend of the detailed view: the
// colours', slot sharing, and the time of drivers.
func (p *picture) detailNotes(rows detailRows, c barCounts) {
	if p.colors.note != "" {
		p.notes = append(p.notes, p.colors.note)
	}
	for _, n := range rows.lanes {
		if n > 1 {
			p.notes = append(p.notes, "Bars stacked in one row share the slot (slot sharing).")
			break
		}
	}
	if c.drivers > 0 && p.tl.Progress {
		p.notes = append(p.notes, "A driver runs no task: its slot time is counted apart, as held by drivers.")
	}
}

// keptBar draws a slot kept for a job: hatched, outlined in the job's
// colour, labelled.
func (p *picture) keptBar(k keptSpan, y0 float64) {
	if p.timeW <= 0 {
		return
	}
	x0, x1 := p.x(k.from), p.x(k.to)
	wd := math.Max(x1-x0, 1.5)
	color := "#555"
	if p.colors.byJob {
		color = p.colors.color(p.colors.keyOf(runfile.NoRegion, p.colors.ofJob(k.job)))
	}
	title := fmt.Sprintf("slot %d %s: %s - %s", k.slot, keptText(k), formatMillis(k.from), formatMillis(k.to))
	if k.open {
		title += ", still kept at the end"
	}
	p.printf(`<rect class="kept" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="#ffffff" stroke="%s" stroke-width="1.5" stroke-dasharray="5,3"><title>%s</title></rect>`,
		x0, y0, wd, laneH-4, color, xmlText(title))
	p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#kept)"/>`, x0, y0, wd, laneH-4)
	for _, label := range []string{keptText(k), k.job} {
		if textWidth(label, 11, false)+8 <= wd {
			p.text(x0+4, y0+(laneH-4)/2, 11, "start", "#222", label)
			break
		}
	}
	p.printf("\n")
}

// keptText says what a slot kept for a job is.
func keptText(k keptSpan) string {
	if k.gang {
		return "reserved for gang of " + k.job
	}
	return "kept for " + k.job + "'s claim"
}

// streamMarks writes, for a stream, where its window ends.
func (p *picture) streamMarks(bottom float64) {
	if !p.stream || p.timeW <= 0 {
		return
	}
	xe := p.x(p.tl.Makespan)
	if p.tl.Makespan > 0 {
		p.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#2b6a2b" stroke-width="1" stroke-dasharray="3,3"/>`+"\n", xe, p.top-6, xe, bottom)
	}
	p.text(p.left+p.timeW, p.top-14, 11, "end", "#2b6a2b",
		fitText(fmt.Sprintf("stream: runs on beyond this window (last event at %s, drawn %s further)", formatMillis(p.tl.Makespan), formatMillis(StreamWindow)), 11, false, p.timeW))
}

// qualified names a task in the picture: "job:task" in a run of several
// jobs (as the verdict does), the task alone otherwise.
func qualified(job, task string) string {
	if job == "" {
		return task
	}
	return job + ":" + task
}

// holdsText says what a bar still holding its slot at a deadlock is.
func (p *picture) holdsText(b span) string {
	if p.isDriver(b) {
		return b.job + " driver holds the slot, job waits"
	}
	return qualified(b.job, b.task) + " holds the slot, cannot progress"
}

// isDriver reports whether a bar is a job's driver (drawn apart under
// ColorByJob and ColorByQueue).
func (p *picture) isDriver(b span) bool {
	return p.colors.byJob && b.task == runfile.DriverTask && b.region == runfile.NoRegion
}

// bar draws one task attempt. A driver is hatched in its job's colour,
// outlined in it, and labelled "driver".
func (p *picture) bar(b span, y0 float64) {
	if p.timeW <= 0 {
		return
	}
	x0, x1 := p.x(b.start), p.endX(b.end, b.outcome == runfile.Deploy)
	wd := math.Max(x1-x0, 1.5)
	stroke, dash, opacity, fg := "#333", "", 0.9, p.colors.textColor(b.key)
	sw := strokeWidth(b.outcome)
	driver := p.isDriver(b)
	switch {
	case b.outcome == runfile.Fail:
		stroke = "#d62728"
	case b.outcome == runfile.Cancel:
		dash, opacity, fg = ` stroke-dasharray="3,2"`, 0.3, "#222"
	case driver:
		stroke, opacity, fg, sw = p.colors.color(b.key), 0.35, "#111", "2"
	}
	if b.speculative {
		stroke, dash, sw = speculativeStroke, ` stroke-dasharray="4,2"`, "1.5"
	}
	if driver {
		p.printf(`<g class="driver"><title>%s, the driver of job %s, slot %d: %s - %s, %s</title>`, xmlText(b.task), xmlText(b.job), b.slot,
			formatMillis(b.start), formatMillis(b.end), p.outcomeName(b.outcome))
	} else {
		held := ""
		if len(b.stalls) > 0 {
			var d time.Duration
			for _, w := range b.stalls {
				d += w.to - w.from
			}
			held = "; held without progress for " + formatMillis(d)
		}
		p.printf(`<g><title>%s (region %d, %sattempt %d) slot %d: %s - %s, %s%s</title>`, xmlText(qualified(b.job, b.task)), b.region,
			speculativeWord(b.speculative), b.attempt, b.slot, formatMillis(b.start), formatMillis(b.end), p.outcomeName(b.outcome), held)
	}
	p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" fill-opacity="%.2f" stroke="%s" stroke-width="%s"%s/>`,
		x0, y0, wd, laneH-4, p.colors.color(b.key), opacity, stroke, sw, dash)
	if driver {
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#driver)"/>`, x0, y0, wd, laneH-4)
	}
	// the times it held its slot without progress: faded and hatched
	for _, w := range b.stalls {
		sx0, sx1 := p.x(w.from), p.endX(w.to, b.outcome == runfile.Deploy)
		if sx1-sx0 < 0.5 {
			continue
		}
		p.printf(`<rect class="stalled" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#ffffff" fill-opacity="0.6"/>`, sx0, y0+0.5, sx1-sx0, laneH-5)
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#held)"/>`, sx0, y0+0.5, sx1-sx0, laneH-5)
	}
	if len(b.stalls) > 0 && b.stalls[0].from == b.start && fg == "#fff" {
		fg = "#111" // the label sits on the faded part
	}
	if b.outcome == runfile.Deploy && !b.stalled() { // still holding its slot at the end, and progressing (or not known)
		p.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#hatch)"/>`, math.Max(x0, x1-24), y0, math.Min(24, wd), laneH-4)
	}
	// the longest label that fits: job:task, task, then the subtask index
	labels := []string{qualified(b.job, b.task), b.task}
	if driver {
		labels = []string{b.job + " driver", "driver"}
	}
	if i := strings.LastIndexByte(b.task, '#'); i > 0 {
		labels = append(labels, b.task[i:])
	}
	for _, label := range labels {
		if b.outcome == runfile.Fail {
			label += " ✗"
		}
		if textWidth(label, 11, false)+8 <= wd {
			p.text(x0+4, y0+(laneH-4)/2, 11, "start", fg, label)
			break
		}
	}
	p.printf("</g>\n")
}

// assignLanes stacks overlapping bars of one slot (slot sharing) in lanes
// and returns the number of lanes per slot. bars are in deploy order.
func assignLanes(bars []span, slots int) []int {
	laneEnds := make([][]time.Duration, slots)
	for i := range bars {
		b := &bars[i]
		if b.slot < 0 || b.slot >= slots {
			continue
		}
		ends := laneEnds[b.slot]
		lane := -1
		for l, end := range ends {
			if end <= b.start {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(ends)
			ends = append(ends, 0)
		}
		ends[lane] = b.end
		laneEnds[b.slot] = ends
		b.lane = lane
	}
	out := make([]int, slots)
	for s := range out {
		out[s] = len(laneEnds[s])
	}
	return out
}

func strokeWidth(k runfile.Kind) string {
	if k == runfile.Fail {
		return "2.5"
	}
	return "0.8"
}

func (p *picture) outcomeName(k runfile.Kind) string {
	switch k {
	case runfile.Finish:
		return "finished"
	case runfile.Fail:
		return "failed"
	case runfile.Cancel:
		return "canceled"
	}
	if p.stream {
		return "still running at the end of the window"
	}
	return "still holding its slot at the end"
}

// niceStep picks a tick step of 1, 2 or 5 times a power of ten
// milliseconds giving at most about n ticks.
func niceStep(span time.Duration, n int) time.Duration {
	raw := float64(span.Milliseconds()) / float64(n)
	if raw < 1 {
		return time.Millisecond
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return time.Duration(m*pow) * time.Millisecond
		}
	}
	return time.Duration(10*pow) * time.Millisecond
}

func formatTick(t, step time.Duration) string {
	if step >= time.Second && step%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(t/time.Second))
	}
	if step >= 100*time.Millisecond {
		return fmt.Sprintf("%.1fs", t.Seconds())
	}
	return fmt.Sprintf("%dms", t.Milliseconds())
}

func formatMillis(t time.Duration) string { return fmt.Sprintf("%d ms", t.Milliseconds()) }
