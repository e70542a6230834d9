package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cases of examples/scenarios, run with the commands their READMEs
// show (the ones make demo runs), and checked against what the READMEs
// say of them.

// scenarioRun is one command of a scenario's README, run: its result,
// its trace, its audit lines (none without --audit) and its picture.
type scenarioRun struct {
	res   cliResult
	trace []admissionEvent
	audit []string
	svg   string
}

// scenarioCommandRE is a command line of a scenario README's sh block,
// its comment left out.
var scenarioCommandRE = regexp.MustCompile(`^bin/regionsched (simulate [^#]*?)\s*(#.*)?$`)

// runScenario runs every command of examples/scenarios/NAME/README.md,
// by the name of the picture it draws (out/gangs-none.svg: "gangs-none"):
// out/ becomes a temporary directory, the job globs are expanded and a
// --trace is added.
func runScenario(t *testing.T, name string) map[string]scenarioRun {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("../../examples/scenarios", name, "README.md"))
	require.NoError(t, err)
	dir := t.TempDir()
	runs := map[string]scenarioRun{}
	for _, line := range strings.Split(string(readme), "\n") {
		m := scenarioCommandRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var args []string
		var picture, svg, audit string
		for _, f := range strings.Fields(m[1]) {
			switch {
			case strings.HasPrefix(f, "out/"):
				f = filepath.Join(dir, strings.TrimPrefix(f, "out/"))
				if strings.HasSuffix(f, ".svg") {
					picture, svg = strings.TrimSuffix(filepath.Base(f), ".svg"), f
				}
				if strings.HasSuffix(f, ".jsonl") {
					audit = f
				}
			case strings.HasPrefix(f, "examples/"):
				files, err := filepath.Glob(filepath.Join("../..", f))
				require.NoError(t, err)
				require.NotEmpty(t, files, "%s names no file", f)
				args = append(args, files...)
				continue
			}
			args = append(args, f)
		}
		require.NotEmpty(t, picture, "the command draws a picture into out/: %s", line)
		trace := filepath.Join(dir, picture+".trace.jsonl")
		res := execCLI(t, "", append([]string{"simulate", "--trace", trace}, args[1:]...)...)
		run := scenarioRun{res: res, trace: readAdmissionTrace(t, trace)}
		if audit != "" {
			run.audit = readLines(t, audit)
		}
		if data, err := os.ReadFile(svg); err == nil { // none when the run failed before drawing
			run.svg = string(data)
		}
		runs[picture] = run
	}
	require.NotEmpty(t, runs, "the README of %s shows its commands", name)
	return runs
}

// readLines returns the lines of a file.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	require.NoError(t, sc.Err())
	return out
}

// ms is the time of a trace event in milliseconds.
func ms(e admissionEvent) int64 { return *e.T }

// firstDeploy is when job's task (its driver: "driver") is first
// deployed, -1 if never.
func firstDeploy(tr []admissionEvent, job, task string) int64 {
	for _, e := range tr {
		if e.Event == "deploy" && e.Job == job && (e.Task == task || task == "" && e.Task != "driver") {
			return ms(e)
		}
	}
	return -1
}

// lastFinish is when the last task of job finishes, -1 if none does.
func lastFinish(tr []admissionEvent, job string) int64 {
	last := int64(-1)
	for _, e := range tr {
		if e.Event == "finish" && e.Job == job {
			last = ms(e)
		}
	}
	return last
}

// holdingAt counts the slots each job's tasks hold just after the
// instant at (every event at or before it applied), drivers included;
// tasks sharing a slot count once.
func holdingAt(tr []admissionEvent, at int64) map[string]int {
	bySlot := map[int]string{}
	for _, e := range tr {
		if ms(e) > at {
			break
		}
		switch e.Event {
		case "deploy":
			bySlot[*e.Slot] = e.Job
		case "release":
			delete(bySlot, *e.Slot)
		}
	}
	held := map[string]int{}
	for _, job := range bySlot {
		held[job]++
	}
	return held
}

// Gangs: without gangs the three jobs deadlock with their drivers
// holding slots; with hard gangs they finish one after another; with
// soft gangs spark-2 and spark-3 fall back to normal admission after
// their timeout and the backoff, and finish.
func TestScenarioGangs(t *testing.T) {
	runs := runScenario(t, "gangs")
	require.Len(t, runs, 3)

	none := runs["gangs-none"]
	assert.Equal(t, 1, none.res.code, "without gangs the jobs deadlock:\n%s", none.res.stdout)
	assert.Contains(t, lastLine(none.res.stdout), "deadlock: at 1200 ms jobs spark-1, spark-2, spark-3 never finish")
	drivers, _ := ofKind(none.trace, "deploy")
	for _, e := range drivers {
		assert.Equal(t, "driver", e.Task, "without gangs only the drivers run: %+v", e)
	}
	assert.Len(t, drivers, 3)

	hard := runs["gangs-hard"]
	require.Equal(t, 0, hard.res.code, hard.res.stdout)
	assert.Equal(t, "finished: all 3 jobs finished at 12000 ms", lastLine(hard.res.stdout))
	// one after another: a job's driver starts when the one before has finished
	for i, job := range []string{"spark-1", "spark-2", "spark-3"} {
		assert.Equal(t, int64(4000*(i+1)), lastFinish(hard.trace, job), job)
		if i > 0 {
			prev := []string{"spark-1", "spark-2"}[i-1]
			assert.GreaterOrEqual(t, firstDeploy(hard.trace, job, "driver"), lastFinish(hard.trace, prev), "%s starts after %s", job, prev)
		}
	}
	// the claim of the demo: the run without gangs stalls (or, had it
	// finished, it would have had to be 1.5 times slower)
	if none.res.code == 0 {
		assert.GreaterOrEqual(t, lastFinish(none.trace, "spark-3")*2, lastFinish(hard.trace, "spark-3")*3)
	}

	soft := runs["gangs-soft"]
	require.Equal(t, 0, soft.res.code, soft.res.stdout)
	assert.Equal(t, "finished: all 3 jobs finished at 20100 ms", lastLine(soft.res.stdout))
	assert.Equal(t, int64(0), firstDeploy(soft.trace, "spark-1", "driver"), "spark-1's gang is reserved at once")
	for _, c := range []struct {
		job      string
		submitMs int64
	}{{"spark-2", 100}, {"spark-3", 200}} {
		// timeout 3 s, then the 10 s backoff; both drivers at once, as without gangs
		assert.Equal(t, c.submitMs+3000+10000, firstDeploy(soft.trace, c.job, "driver"), c.job)
		assert.Positive(t, lastFinish(soft.trace, c.job), c.job)
	}
	// spark-3's driver holds its slot while spark-2's executors run
	assert.Equal(t, map[string]int{"spark-2": 5, "spark-3": 1}, holdingAt(soft.trace, 14100))
	assert.Equal(t, int64(17100), firstDeploy(soft.trace, "spark-3", ""))
}

// The driver queue: unchanged, the drivers take the driver slot in the
// order the jobs came; with the events, carol's raise of dave's job is
// refused and audited, alice's applied, and spark-3's driver deploys
// before the two earlier ones.
func TestScenarioDriverQueue(t *testing.T) {
	runs := runScenario(t, "driver-queue")
	require.Len(t, runs, 2)

	order := func(tr []admissionEvent) []string {
		jobs := []string{"spark-1", "spark-2", "spark-3"}
		sort.SliceStable(jobs, func(i, j int) bool {
			return firstDeploy(tr, jobs[i], "driver") < firstDeploy(tr, jobs[j], "driver")
		})
		return jobs
	}
	unchanged := runs["driver-queue-unchanged"]
	require.Equal(t, 0, unchanged.res.code, unchanged.res.stdout)
	assert.Equal(t, []string{"spark-1", "spark-2", "spark-3"}, order(unchanged.trace))
	for i, job := range []string{"spark-1", "spark-2", "spark-3"} {
		assert.Equal(t, int64(2000*(i+1)), firstDeploy(unchanged.trace, job, "driver"), job)
	}

	raised := runs["driver-queue-raised"]
	require.Equal(t, 0, raised.res.code, raised.res.stdout)
	assert.Equal(t, []string{"spark-3", "spark-1", "spark-2"}, order(raised.trace), "the raised driver deploys before the two earlier ones")
	assert.Equal(t, int64(2000), firstDeploy(raised.trace, "spark-3", "driver"))
	assert.Equal(t, int64(4000), firstDeploy(raised.trace, "spark-1", "driver"))
	assert.Equal(t, int64(6000), firstDeploy(raised.trace, "spark-2", "driver"))
	// every driver in the one slot that fits one
	slots := map[int]bool{}
	for _, e := range raised.trace {
		if e.Event == "deploy" && e.Task == "driver" {
			slots[*e.Slot] = true
		}
	}
	assert.Len(t, slots, 1, "the drivers share one slot")

	refused, _ := ofKind(raised.trace, "refused")
	require.Len(t, refused, 1)
	assert.Equal(t, int64(800), ms(refused[0]))
	assert.Equal(t, "carol", refused[0].By)
	assert.Equal(t, "spark-3", refused[0].Job)
	assert.Contains(t, refused[0].Reason, "dave's")
	assert.Equal(t, []string{
		`{"t":800,"by":"carol","role":"user","action":"set-priority","job":"spark-3","old":3000,"new":5000,"accepted":false,"reason":"role user may change only their own jobs; the job is dave's"}`,
		`{"t":1200,"by":"alice","role":"admin","action":"set-priority","job":"spark-3","old":3000,"new":9000,"accepted":true}`,
	}, raised.audit)
}

// Notebooks: at equal priorities the two share 3 + 3; bob's raise at
// 4.5 s makes it 2 + 4 within one second (at once: the queue preempts
// at once), alice's cancelled cells run again, and the audit says who
// changed what.
func TestScenarioNotebooks(t *testing.T) {
	runs := runScenario(t, "notebooks")
	require.Len(t, runs, 2)
	const alice, bob = "notebook-alice", "notebook-bob"

	unchanged := runs["notebooks-unchanged"]
	require.Equal(t, 0, unchanged.res.code, unchanged.res.stdout)
	assert.Equal(t, "finished: all 2 jobs finished at 12000 ms", lastLine(unchanged.res.stdout))
	for at := int64(0); at < 12000; at += 500 {
		assert.Equal(t, map[string]int{alice: 3, bob: 3}, holdingAt(unchanged.trace, at), "at %d ms", at)
	}
	cancels, _ := ofKind(unchanged.trace, "cancel")
	assert.Empty(t, cancels)

	raised := runs["notebooks-raised"]
	require.Equal(t, 0, raised.res.code, raised.res.stdout)
	const update = 4500
	assert.Equal(t, map[string]int{alice: 3, bob: 3}, holdingAt(raised.trace, update-1), "1:1 before the update")
	// the shares flip within one second of the update, and stay 1:2
	// while bob's notebook has cells to run
	flipped := int64(-1)
	for at := int64(update); at <= update+1000; at++ {
		if h := holdingAt(raised.trace, at); h[alice] == 2 && h[bob] == 4 {
			flipped = at
			break
		}
	}
	require.NotEqual(t, int64(-1), flipped, "2 + 4 within one second of the update")
	assert.Equal(t, int64(update), flipped, "the queue preempts at once")
	for at := flipped; at < 9000; at += 100 {
		assert.Equal(t, map[string]int{alice: 2, bob: 4}, holdingAt(raised.trace, at), "at %d ms", at)
	}

	reclaims, _ := ofKind(raised.trace, "reclaim")
	require.Len(t, reclaims, 1)
	assert.Equal(t, int64(update), ms(reclaims[0]))
	assert.Equal(t, bob, reclaims[0].Job)
	assert.Equal(t, alice, reclaims[0].Victim)
	// alice's cancelled cells run again, as new attempts, and finish
	cancels, _ = ofKind(raised.trace, "cancel")
	require.NotEmpty(t, cancels)
	for _, c := range cancels {
		assert.Equal(t, alice, c.Job)
		assert.Equal(t, int64(update), ms(c))
		rerun := false
		for _, e := range raised.trace {
			if e.Event == "finish" && e.Job == alice && e.Task == c.Task && e.Attempt == c.Attempt+1 {
				rerun = true
			}
		}
		assert.True(t, rerun, "%s runs again and finishes", c.Task)
	}
	// as the README says: bob needs one slot more, so one of alice's
	// cells is cancelled and its slot goes to bob
	assert.Len(t, cancels, 1)
	assert.Equal(t, map[string]int{bob: 1}, deploysAt(raised.trace, update))
	assert.Equal(t, []string{
		`{"t":4500,"by":"bob","role":"user","action":"set-priority","job":"notebook-bob","old":2500,"new":5000,"accepted":true}`,
	}, raised.audit)
}

// tenantsJob is what a job file of the tenants case says of the job's
// queue and arrival; tenantsQueue what its cluster.json says of a queue.
type tenantsJob struct {
	Name       string `json:"name"`
	Queue      string `json:"queue"`
	SubmitAtMs int64  `json:"submitAtMs"`
}

type tenantsQueue struct {
	Name             string `json:"name"`
	GuaranteedSlots  int    `json:"guaranteedSlots"`
	ReclaimTimeoutMs *int64 `json:"reclaimTimeoutMs"`
}

// readTenantsCase reads the jobs of examples/scenarios/tenants by name,
// and the queues of its cluster.json by name.
func readTenantsCase(t *testing.T) (map[string]tenantsJob, map[string]tenantsQueue) {
	t.Helper()
	dir := "../../examples/scenarios/tenants"
	files, err := filepath.Glob(filepath.Join(dir, "*-*.json"))
	require.NoError(t, err)
	jobs := map[string]tenantsJob{}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "cluster") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var j tenantsJob
		require.NoError(t, json.Unmarshal(data, &j), f)
		jobs[j.Name] = j
	}
	data, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	require.NoError(t, err)
	var cluster struct {
		Queues []tenantsQueue `json:"queues"`
	}
	require.NoError(t, json.Unmarshal(data, &cluster))
	queues := map[string]tenantsQueue{}
	for _, q := range cluster.Queues {
		queues[q.Name] = q
	}
	return jobs, queues
}

// queueHoldingAt counts the slots each queue's jobs hold just after the
// instant at (holdingAt, summed by the jobs' queues).
func queueHoldingAt(tr []admissionEvent, at int64, jobs map[string]tenantsJob) map[string]int {
	held := map[string]int{}
	for job, n := range holdingAt(tr, at) {
		held[jobs[job].Queue] += n
	}
	return held
}

// Tenants: without guarantees the small team's burst keeps every slot
// until its tasks end, and the big team then gets half of them; with
// guarantees 2 and 6 the burst borrows the idle cluster, gives the
// borrowed slots back within the big queue's reclaim timeout of the
// big team's jobs coming, and each queue then holds its guarantee.
func TestScenarioTenants(t *testing.T) {
	runs := runScenario(t, "tenants")
	require.Len(t, runs, 2)
	jobs, queues := readTenantsCase(t)
	const small, big, burst = "root.small", "root.big", "small-burst"
	bigJobs := []string{"big-etl", "big-report"}
	require.Equal(t, small, jobs[burst].Queue)
	require.Equal(t, 2, queues[small].GuaranteedSlots)
	require.Equal(t, 6, queues[big].GuaranteedSlots)
	require.NotNil(t, queues[big].ReclaimTimeoutMs, "the big queue reclaims")
	timeout := *queues[big].ReclaimTimeoutMs
	arrival := jobs[bigJobs[0]].SubmitAtMs
	require.Positive(t, arrival)
	for _, j := range bigJobs {
		require.Equal(t, big, jobs[j].Queue, j)
		require.Equal(t, arrival, jobs[j].SubmitAtMs, "the big team's jobs come together")
	}
	firstFinish := func(tr []admissionEvent, job string) int64 {
		for _, e := range tr {
			if e.Event == "finish" && e.Job == job {
				return ms(e)
			}
		}
		return -1
	}

	none := runs["tenants-no-guarantees"]
	require.Equal(t, 0, none.res.code, none.res.stdout)
	reclaims, _ := ofKind(none.trace, "reclaim")
	assert.Empty(t, reclaims, "without guarantees nothing is reclaimed across queues")
	cancels, _ := ofKind(none.trace, "cancel")
	assert.Empty(t, cancels)
	freed := firstFinish(none.trace, burst)
	require.Greater(t, freed, arrival+timeout, "the burst's first tasks run past the reclaim timeout")
	for at := int64(0); at < freed; at += 100 {
		assert.Equal(t, map[string]int{small: 8}, queueHoldingAt(none.trace, at, jobs), "the burst keeps every slot at %d ms", at)
	}
	for _, j := range bigJobs {
		assert.Equal(t, freed, firstDeploy(none.trace, j, ""), "%s waits for the burst's tasks to end", j)
	}
	assert.Equal(t, map[string]int{small: 4, big: 4}, queueHoldingAt(none.trace, freed, jobs), "then the big team gets half")
	assert.Equal(t, int64(14000), lastFinish(none.trace, "big-report"))

	with := runs["tenants-guaranteed"]
	require.Equal(t, 0, with.res.code, with.res.stdout)
	assert.Contains(t, with.res.stdout, "queues root.small fifo guaranteed 2, root.big fifo guaranteed 6, any other queue fifo")
	// its picture is coloured by queue: the teams, not their jobs
	texts, _ := svgTexts(t, with.svg)
	assert.Equal(t, "colour = queue:", colourTitle(t, texts))
	assert.Subset(t, texts, []string{small, big})
	assert.NotContains(t, texts, "big-etl")
	texts, _ = svgTexts(t, none.svg)
	assert.Equal(t, "colour = job:", colourTitle(t, texts), "without guarantees the picture is by job")
	for at := int64(0); at < arrival; at += 100 {
		assert.Equal(t, map[string]int{small: 8}, queueHoldingAt(with.trace, at, jobs), "the burst borrows the idle cluster at %d ms", at)
	}
	reclaims, _ = ofKind(with.trace, "reclaim")
	require.Len(t, reclaims, 2)
	taken := 0
	for i, r := range reclaims {
		assert.Equal(t, arrival, ms(r), "reclaimed as the big team's jobs come")
		assert.Equal(t, bigJobs[i], r.Job)
		assert.Equal(t, burst, r.Victim)
		taken += r.Slots
	}
	assert.Equal(t, 6, taken, "the big queue takes back up to its guarantee, leaving the small one its 2")
	// the borrowed slots go back within the big queue's reclaim timeout
	back := int64(-1)
	for at := arrival; at <= arrival+timeout; at++ {
		if queueHoldingAt(with.trace, at, jobs)[big] == queues[big].GuaranteedSlots {
			back = at
			break
		}
	}
	require.NotEqual(t, int64(-1), back, "the big queue holds its guarantee within %d ms of its jobs coming", timeout)
	assert.Equal(t, arrival+timeout, back, "the burst's tasks had not ended: cancelled at the timeout")
	// each queue then holds its guarantee while the big team's jobs run
	end := lastFinish(with.trace, "big-report")
	require.Equal(t, end, lastFinish(with.trace, "big-etl"))
	assert.Equal(t, int64(7000), end, "the big team's jobs finish at 7 s, as the README says")
	for at := back; at < end; at += 100 {
		assert.Equal(t, map[string]int{small: 2, big: 6}, queueHoldingAt(with.trace, at, jobs), "at %d ms", at)
	}
	assert.Equal(t, map[string]int{small: 8}, queueHoldingAt(with.trace, end, jobs), "then the burst borrows the idle slots again")
	assert.Less(t, end, lastFinish(none.trace, "big-report"), "the big team finishes earlier with its guarantee")
	// the burst's cancelled tasks run again, as new attempts, and finish
	cancels, _ = ofKind(with.trace, "cancel")
	require.Len(t, cancels, 6)
	for _, c := range cancels {
		assert.Equal(t, burst, c.Job)
		assert.Equal(t, back, ms(c))
		rerun := false
		for _, e := range with.trace {
			if e.Event == "finish" && e.Job == burst && e.Task == c.Task && e.Attempt == c.Attempt+1 {
				rerun = true
			}
		}
		assert.True(t, rerun, "%s runs again and finishes", c.Task)
	}
}

// make demo runs every command of the scenario READMEs, as they are
// written there (the tests above run the READMEs' commands).
func TestScenarioCommandsInMakeDemo(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	joined := strings.ReplaceAll(string(makefile), "\\\n", " ")
	start := strings.Index(joined, "\ndemo:")
	require.Positive(t, start, "the Makefile has a demo target")
	end := strings.Index(joined[start+1:], "\n\n")
	require.Positive(t, end)
	demo := map[string]bool{}
	for _, line := range strings.Split(joined[start:start+1+end], "\n") {
		_, cmd, ok := strings.Cut(line, "./$(BIN) simulate ")
		if !ok {
			continue
		}
		cmd, _, _ = strings.Cut(cmd, "|")
		cmd, _, _ = strings.Cut(cmd, " 2>")
		cmd, _, _ = strings.Cut(cmd, ">")
		cmd, _, _ = strings.Cut(cmd, ")")
		demo[strings.Join(strings.Fields(cmd), " ")] = true
	}
	names, err := filepath.Glob("../../examples/scenarios/*/README.md")
	require.NoError(t, err)
	require.Len(t, names, 4)
	for _, name := range names {
		readme, err := os.ReadFile(name)
		require.NoError(t, err)
		n := 0
		for _, line := range strings.Split(string(readme), "\n") {
			if m := scenarioCommandRE.FindStringSubmatch(line); m != nil {
				n++
				cmd := strings.Join(strings.Fields(strings.TrimPrefix(m[1], "simulate ")), " ")
				assert.True(t, demo[cmd], "make demo does not run %s's command %q", name, cmd)
			}
		}
		assert.Positive(t, n, "%s shows its commands", name)
	}
}
