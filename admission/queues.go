package admission

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/internal/rbtree"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Config configures a Queues admission.
type Config struct {
	// Slots is the cluster: every slot the admission may grant.
	Slots []slotpool.Slot
	// Matching says when a slot serves an ask's profile.
	Matching resource.Matching
	// Queues configures queues by name; a job names its queue.
	Queues []QueueConfig
	// DefaultPolicy is the policy of root.default when Queues does not
	// configure it (it always exists), and of a queue created for a job
	// that names a queue not in Queues (see CreateQueues).
	DefaultPolicy Policy
	// CreateQueues creates a queue (with DefaultPolicy, no limits) for a
	// job that names an unknown queue under root; without it such a job is
	// refused with ErrUnknownQueue.
	CreateQueues bool
	// Backoff is the requeue backoff of soft gangs that timed out; zero
	// means DefaultBackoff.
	Backoff Backoff
	// Audit, if set, receives every priority change and kill, accepted or
	// refused (SetPriority, Kill).
	Audit AuditSink
	// Logger receives debug logs of every decision: who was granted what,
	// and why a job waits. nil means zap.NewNop().
	Logger *zap.Logger
	// Cluster, if set, is the cluster as configured (slot counts by
	// profile; a profile may repeat)
	// when Slots lists only the part of it a run can use (a simulator
	// models only the slots its jobs can hold at once): a job whose gang,
	// driver or largest region can never fit it is rejected, and the
	// rejection says what it lacks, against Cluster, not Slots. The
	// caller then lists in Slots every slot the accepted jobs can hold at
	// once (their tasks, drivers and gangs), or a job may wait for slots
	// that exist only in Cluster. nil: Slots is the whole cluster.
	Cluster []resource.Count
}

// JobSpec is a job submitted to the admission.
type JobSpec struct {
	// Name is unique among the jobs submitted.
	Name string
	// Queue names the job's queue; "" means "root.default".
	Queue string
	// User owns the job; "" means "anonymous".
	User string
	// Priority is 1 ... 10000 (higher first under Priority, a larger
	// share under FairShare); 0 means 5000.
	Priority int
	// Driver, if set, is the profile of the job's driver (job master): it
	// gets its own slot from the admission before anything else of the
	// job, and keeps it until the job ends.
	Driver *resource.Profile
	// Largest is what the job's largest region needs at once (one count
	// per slot profile). A job whose driver plus largest region can never
	// fit its queue is rejected at once.
	Largest []resource.Count
	// LargestName names that region in a rejection ("region 3 {A#0, ...}").
	LargestName string
	// Regions lists what each region of the job needs at once (regions
	// that need the same may be listed once). A driver keeps its slot for
	// the job's life, so with a driver and slots of several profiles the
	// admission grants the driver only a slot that leaves each of these
	// room in the cluster as configured (see driverslot.go); a job whose
	// driver leaves them too little in every slot it fits is rejected at
	// once. nil: the admission knows only Largest.
	Regions []RegionNeed
	// Start is what the job asks for first once its driver is up: the
	// slots of its regions scheduled at the start, together (as a gang
	// counts them, region.Regions.GangMinSlots). A reclaim for the driver
	// counts them with it, and a driver is not granted a slot that a
	// waiting job's request needs while they could not follow (see
	// startNeed). nil: the driver alone.
	Start []resource.Count
	// StartAtOnce says that the asks of Start come at the instant the
	// driver is granted (a driver with no startup time, in virtual
	// time): the runtime starts the job, and the job asks, before the
	// next Decide of that instant. A decision that grants such a driver
	// then decides nothing more (NextDeadline is its instant), and the
	// next one decides the rest together with those asks, as if they had
	// waited from the start of the instant: a slot granted to another job
	// at that instant is not reclaimed from it a moment later for them.
	// It matters only with a Driver and a Start.
	StartAtOnce bool
	// Gang, if set, reserves slots for the job at once before anything of
	// it runs (see Gang).
	Gang *Gang
}

// RegionNeed is what one region of a job needs at once.
type RegionNeed struct {
	// Name names the region in a rejection, e.g. "region 3 {B#0}".
	Name string
	// Slots counts its slots per profile.
	Slots []resource.Count
}

// JobID numbers the submitted jobs 0, 1, ... in submission order.
type JobID int32

// EventKind says what an Event reports.
type EventKind uint8

// The kinds of events.
const (
	// StateChanged: a job moved from From to To (Reason says why).
	StateChanged EventKind = iota + 1
	// DriverGranted: a job's driver got slot Slot; the runtime deploys the
	// driver there and starts the job's scheduler after its startup time.
	DriverGranted
	// PlaceholdersReleased: a job's unused gang placeholders went back
	// (Reason: replaced, as nothing of the job waits, or the gang timeout).
	PlaceholdersReleased
	// PlaceholderMismatch: a request of a job is larger than its gang's
	// placeholders, which cannot serve it (Reason says which): the job's
	// gang does not hold what it runs; the request is served from free
	// slots as if there were no gang (YuniKorn's placeholder size mismatch).
	PlaceholderMismatch
	// Reclaimed: Count slots of job Victim are taken for job Job (the
	// claimant) by preemption; Reason says why and when their tasks are
	// cancelled. Reported before the Revokes that cancel them. Slots the
	// same decision had just granted to Victim, and takes back before its
	// pool heard of them, are not reported: the grant is retracted.
	Reclaimed
	// ReclaimWithdrawn: Count slots of job Victim reclaimed for job Job
	// with a timeout are left to Victim, before the timeout: the reason is
	// gone (Reason says which); nothing of Victim is cancelled for them.
	// Or a higher-priority job of Job's queue took them over (Reason
	// says which; its Reclaimed event comes first): they are cancelled
	// for it, at the same time.
	ReclaimWithdrawn
	// SpeculativeGranted: job Job's speculative ask (slotpool.Ask.Speculative)
	// was granted slot Slot, as no regular ask waited that it could serve.
	SpeculativeGranted
	// PriorityChanged: job Job's priority went from OldPriority to
	// NewPriority (Reason names who set it); the change is audited too.
	PriorityChanged
)

// Event is something the admission tells the runtime about a job (its
// pools get their own messages through their JobPort).
type Event struct {
	// At is when it happened.
	At time.Time
	// Job and ID name the job it is about (for Reclaimed: the claimant).
	Job string
	ID  JobID
	// Kind says what happened.
	Kind EventKind
	// From and To: the states of a StateChanged.
	From JobState
	To   JobState
	// Slot: the slot of a DriverGranted.
	Slot slotpool.SlotID
	// Victim and Count: a Reclaimed takes Count slots from job Victim.
	Victim string
	Count  int
	// OldPriority and NewPriority: the priorities of a PriorityChanged.
	OldPriority, NewPriority int
	// Reason says why.
	Reason string
}

// slot states in the cluster.
type slotState uint8

const (
	slotFree        slotState = iota
	slotGranted               // granted to a job's pool
	slotDriver                // a job's driver runs in it
	slotReclaiming            // granted, asked back with Reclaim
	slotReserved              // free, but kept for the job that claimed it
	slotPlaceholder           // a gang placeholder of its owner, not in its pool
	slotGone                  // removed from the cluster (RemoveSlots): in no place
)

// noJob is the claimant of a slot nobody claimed.
const noJob JobID = -1

// cslot is one slot of the cluster.
type cslot struct {
	slot     slotpool.Slot
	profile  int32 // index into Queues.profiles
	state    slotState
	owner    JobID // valid when granted, a driver's or reclaiming
	claimant JobID // reclaiming or reserved: the job it goes to (noJob: none)
	pos      int32 // granted: its index in the owner's held list
	idle     bool  // granted, and its owner's pool said it holds it unused (Ask.Holding)
	// revokeAt: reclaiming, and revoked then if still not back (zero: never).
	revokeAt time.Time
	// preempt: reclaiming for its claimant by preemption (preempt.go):
	// the claimant keeps it coming when its claim is given up.
	preempt bool
	// from: reserved for a claim, the job it came back from (noJob: it
	// was free when the claim was made).
	from JobID
	// fromPreempt: reserved, it came back from a preemption for its
	// claimant (see keepPreempted).
	fromPreempt bool
	// atShare: reclaiming or reserved for a claimant of a fair-share
	// queue that held its share or more when it claimed the slot (see
	// Queues.overtaken).
	atShare bool
	// passedAt: reclaiming for a claim, a preemption at that instant
	// passed it over as leaving its job and took a slot of a job later in
	// victim order in its place (see unyield).
	passedAt time.Time
	// reclaimSent: granted or reclaiming, and its owner's pool was sent a
	// Reclaim for it since it was granted: the pool gives it back when its
	// task ends, whether or not the admission still wants it then (a
	// claim withdrawn, see unyield), so it is never asked again.
	reclaimSent bool
	// revoked: a Revoke was sent and the slot is not back; the pool
	// removes the slot on it and needs no ReleaseConfirmed for its
	// SlotRelease (the echo, or its own release that crossed the Revoke).
	revoked bool
	// For CheckInvariants (checkDriversDecided): heldSince, when it was
	// last granted (a driver's slot too); freedAt and freedStamp, when it
	// last became free or came back for a claim (Queues.stamp orders
	// them within an instant); freedInput: it became free by an input of
	// that instant (its job released it, or ended, holding it since an
	// earlier instant), not as an answer to the admission's own messages
	// or decisions.
	heldSince  time.Time
	freedAt    time.Time
	freedStamp uint64
	freedInput bool
}

// jobAsk is an outstanding ask of a job's pool.
type jobAsk struct {
	id               slotpool.AskID
	bulk             slotpool.BulkID
	head             bool    // the ask of its pool\'s head (slotpool.Ask.Head)
	holding          []int32 // the slots its bulk held unused when it asked
	n                int     // slots it still lacks: the sum of left
	mismatchReported bool    // a PlaceholderMismatch was reported for it
	stamp            uint64  // when it came (Queues.stamp)
	// its place in the job's jobAsks
	prev, next   *jobAsk
	bucket       int
	left         []resource.Count
	allOrNothing bool
}

// job is one submitted job.
type job struct {
	id         JobID
	spec       JobSpec
	queue      *queue
	submit     time.Time
	state      JobState
	err        error
	driver     bool  // a driver is to be granted
	hasSlot    bool  // the driver has its slot
	driverSlot int32 // the driver's slot index, once granted
	asks       jobAsks
	granted    int // slots held: driver + granted to the pool (reclaiming ones too)
	started    time.Time
	out        []slotpool.FromAdmission
	spare      []slotpool.FromAdmission // what port.Ready returned last: out's next storage
	listed     bool                     // in Queues.pending
	key        orderKey                 // its key in the queue's trees, while waiting
	nameHead   uint64                   // the head of its keys (orderKey.head)
	// inTree: in its queue's order tree (by orderNode) and in one of its
	// per-size trees (by fitsNode).
	inTree              bool
	orderNode, fitsNode rbtree.Node[*job]
	// bucket and bucketStarted: its per-size tree in its queue's fits
	// while in the tree; bucketDriver: it waited for its driver alone
	// then (waitsForDriver), else it is in its queue's asking tree too
	// (by askingNode).
	bucket        int
	bucketStarted bool
	bucketDriver  bool
	askingNode    rbtree.Node[*job]
	// held lists its granted slots that may be reclaimed (not its
	// driver's, not those being reclaimed already); hkey is its key in
	// its queue's holders tree (linked by holderNode) while held is not
	// empty.
	held []int32
	// idleHeld counts the slots of held that its pool holds unused (idle).
	idleHeld   int
	hkey       orderKey
	holderNode rbtree.Node[*job]
	inHolders  bool
	// victim is its place in Queues.victims and its queue's victims
	// tree (claim_merge.go); idle its place in Queues.idleVictims
	// (claim_streams.go).
	victim victimLink
	idle   idleLink
	// The gang: reserved (or given up) yet, its timer fired, its
	// deadline, its unused placeholders; soft timeouts so far and the
	// end of the requeue backoff.
	gangDone, gangExpired bool
	gangDeadline          time.Time
	placeholders          []int32
	timeouts              int
	notBefore             time.Time
	// yielding lists its slots being reclaimed (for whichever job).
	yielding []int32
	// reserved lists the free slots kept for it, incoming the slots being
	// reclaimed for it: its claim (see Queues.claim).
	reserved []int32
	incoming []int32
	// claimAdds counts the slots ever added to reserved and incoming, and
	// rest is the mark of its last visit that changed nothing (resting.go).
	claimAdds uint64
	rest      restMark
	// reserverPos is its place in its queue's reservers while reserved
	// is not empty.
	reserverPos int
	// claimListed: in its queue's claimants.
	claimListed bool
	// entitled is its share of its fair-share queue's slots, in whole
	// slots (see entitle); entitledNext is entitle's scratch.
	entitled, entitledNext int
	// heldBackAt: when a decision last found it held back by its queue
	// (StateAware, maxRunningJobs), if heldBack; it does not reclaim in
	// that instant (see preemptFor).
	heldBackAt time.Time
	heldBack   bool
	// acceptStamp and leftAcceptStamp: when it was accepted, and when it
	// left JobAccepted (0 until then; Queues.stamp): whether a mark of its
	// queue held it back (heldBackNow).
	acceptStamp, leftAcceptStamp uint64
	// reclaimAt: when a preemption was last made for it, if reclaimed;
	// driverReclaim: that one was for its driver. heldBackStamp and
	// reclaimStamp order both within an instant (Queues.stamp). For
	// CheckInvariants.
	reclaimAt                   time.Time
	reclaimed, driverReclaim    bool
	heldBackStamp, reclaimStamp uint64
	// driverAt and driverStamp: when its driver got its slot.
	driverAt    time.Time
	driverStamp uint64
	// gangStamp: when its gang's timer fired (Queues.stamp).
	gangStamp uint64
	// askedBackAt and askedBackStamp: when the admission last asked a
	// slot of it back (Reclaim or Revoke; for CheckInvariants: what its
	// pool gives back later in that instant answers it).
	askedBackAt    time.Time
	askedBackStamp uint64
	// placeholdersStamp: when its unused placeholders last went back
	// (Queues.stamp; for CheckInvariants: the room they leave its queues
	// came with the admission's own decision or gang timer).
	placeholdersStamp uint64
	// askDoneAt and askDoneStamp: when an ask of it was last granted
	// whole (for CheckInvariants: the ask it waits for first now was not
	// first before).
	askDoneAt    time.Time
	askDoneStamp uint64
	// retractedAt and retractStamp: when a grant of it was last
	// retracted (retract.go; for CheckInvariants: the ask it waits for
	// came back then).
	retractedAt  time.Time
	retractStamp uint64
	// startFollowed: when its driver got its slot, its first regions
	// could follow (see driverYields).
	startFollowed bool
	// noClaimIn: the decision (Queues.decision) in which its claim was
	// given up without a grant; it claims nothing more in that one.
	noClaimIn uint64
	// handedIn: the decision in which its claim kept slots that came
	// back for it since the decision before (Queues.handed).
	handedIn uint64
	// lostAt and lostTo: when preemptions, or claims of jobs of other
	// queues, last took slots of it, and for which jobs (see lostNowTo).
	lostAt time.Time
	lostTo []JobID
	// driverOK caches driverSlots (driverslot.go) for the cluster's
	// slots of generation driverOKGen-1 (Queues.capGen).
	driverOK    []bool
	driverOKGen uint64
	// startDemand and startN cache startNeed (drivers.go) for the
	// cluster's slots of generation startGen-1 (Queues.capGen).
	startDemand []resource.Count
	startN      int
	startGen    uint64
}

// waiting reports whether the job wants a grant.
func (j *job) waiting() bool {
	return (j.driver && !j.hasSlot) || j.asks.len() > 0
}

// active reports whether a job may hold and ask for slots: accepted, and
// not ended.
func (j *job) active() bool {
	return j.state == JobAccepted || j.state == JobStarting || j.state == JobRunning
}

// queue is one queue and its waiting jobs in policy order.
type queue struct {
	cfg     QueueConfig
	order   *rbtree.Tree[*job] // by key: jobs that want a grant
	holders *rbtree.Tree[*job] // by hkey: jobs with slots that may be reclaimed
	// fits holds the same jobs as order, by the same keys, split by the
	// size of the smallest grant they could take (job.sizeBucket), [0]
	// those not started yet (they may be blocked by StateAware or
	// maxRunningJobs), [1] the others: the per-size trees of walkSparse
	// and the counts of fitCount (created when first used).
	fits [2][maxBucket + 1]*rbtree.Tree[*job]
	// asking holds the jobs of order that wait for a request or a gang,
	// not for their driver alone (job.waitsForDriver), by the same keys:
	// the jobs a driver yields to (driverYields). Nil until a job with a
	// driver is submitted to the queue: order is that tree until then
	// (askingTree).
	asking *rbtree.Tree[*job]
	// reservers lists its jobs with reserved slots (claimants: few).
	reservers []*job
	// heldSlots counts the slots its jobs hold that a claim may take;
	// heldBy counts its jobs by how many such slots each holds (heldBy[0]
	// unused), maxHeld is the most any of them holds (heldResized).
	heldSlots int
	heldBy    []int
	maxHeld   int
	starting  int // jobs in JobStarting
	// heldAt and heldStamp, if heldSet: when a walk first found, in that
	// instant, that the queue may start no job (walk.go): every job of it
	// not started then was held back (heldBackNow).
	heldAt    time.Time
	heldStamp uint64
	heldSet   bool
	running   int // jobs counted running (first grant until end)
	weight    int // sum of priorities of active jobs (fair share)
	// idleHeld counts the slots of heldSlots that their jobs' pools hold
	// unused (cslot.idle): a queue without any progresses, and claims
	// nothing within itself (claim_within.go).
	idleHeld int
	// victims holds its jobs that are in Queues.victims, in victim
	// order (claim_streams.go); nil until it has one.
	victims *rbtree.Tree[*job]
	// liveIn is claimScratch.liveStamp while the claim being made may
	// take slots of this queue (yieldingQueues).
	liveIn uint64
	// startingJobs lists the jobs starting under StateAware (their timeouts).
	startingJobs []*job
	// jobs lists, in a fair-share queue, its jobs not known to have ended;
	// entitleDirty says their set or priorities changed since entitle.
	jobs         []*job
	entitleDirty bool
	// claimants lists its jobs whose claims keep slots (reserved, or
	// coming back for them), and some that no longer do (see claims).
	claimants []*job
	// prios counts its accepted jobs that have not ended, by priority
	// (claims walk faster when there is one priority).
	prios map[int]int
	// node is its place in the hierarchy (queuetree.go); submitted counts
	// the jobs submitted to it, firstJob names the first.
	node      *qnode
	submitted int
	firstJob  string
	// rank is its place in the fair order of queues (rankQueues);
	// resume, in the decide pass resumeIn, where its last turn stopped
	// (at the job being served when it stopped coming first).
	rank   int32
	resume cursor
	// doneIn is the decide pass that was done with it (queuesort.go).
	doneIn uint64
	// orderChangedIn is the pass in which a job last went in or out of
	// order; waitedBefore: it had jobs then, before the first change
	// (waitedAtStart). resumeIn is the pass resume was set in.
	orderChangedIn, resumeIn uint64
	waitedBefore             bool
	// hasWaiting: its order is not empty (kept beside the pass's marks,
	// which a pass reads for every queue).
	hasWaiting bool
	// pos is its place in Queues.qorder; inSet its place in each of
	// Queues.sets, plus one (0: not listed).
	pos int
	// fit is the count of its walks (a turn resumed goes on with it).
	fit fitCount
}

// Queues is the queue-level admission for many jobs on one cluster: a
// deterministic state machine like the pool (no goroutines, time as an
// argument). Each job's slot pool talks to it through the job's JobPort,
// a slotpool.Admission. It is a Cluster: package multijob runs jobs over
// one. Grants are whole asks (the pool asks for whole
// bulks, all-or-nothing), given to the jobs of each queue in the queue's
// policy order; a job that cannot be served does not hold back the jobs
// behind it, and when the first waiting job cannot be served from the free
// slots, slots of the jobs behind it (never drivers) are reclaimed for it,
// so no job sits on part of what the first one needs.
type Queues struct {
	cfg           Config
	log           *zap.Logger
	slots         []cslot
	index         map[slotpool.SlotID]int32
	profiles      []resource.Profile
	profIdx       map[resource.Profile]int32
	free          [][]int32 // per profile: free slot indexes (a stack)
	nFree         int       // free slots in all stacks
	nReserved     int       // slots reserved for claims
	nPlaceholders int       // gang placeholders of all jobs
	nStarting     int       // jobs in the queues' startingJobs lists
	// pass counts the decide passes; byRank lists the queues by rank
	// (rankQueues), rankGen counts their numberings; scanAt is where
	// firstWaiting found the last queue to serve, in the numbering
	// scanGen (queuesort.go).
	pass, rankGen, scanGen uint64
	// leftIn is the last pass that was done with a whole branch
	// (leaveBranch).
	leftIn  uint64
	byRank  []*queue
	scanAt  int
	scanned bool
	// pinned counts per profile the slots of drivers and placeholders
	// (wedged.go).
	pinned   []int
	capacity []resource.Count
	// capGen counts the changes of the cluster's slots (AddSlots,
	// RemoveSlots).
	capGen uint64
	// nGone counts the slots removed (RemoveSlots); lostSlots are those
	// revoked from a job's pool as they were removed, by id: the pool's
	// answer (a SlotRelease) is still to come.
	nGone     int
	lostSlots map[slotpool.SlotID]JobID
	queues    map[string]*queue
	qorder    []*queue // by name
	// sets lists the queues of a few kinds (queuesets.go); fairShareQueues
	// the fair-share ones, by name.
	sets            [numQueueSets]queueSet
	fairShareQueues []*queue
	// nWaitingQueues counts the queues with jobs in their order.
	nWaitingQueues int
	nodes          map[string]*qnode
	nodeList       []*qnode // the nodes of nodes, as created
	resvStamp      uint64   // markReservers' current mark
	// marked lists the queues markReservers marked, when q.uses was
	// markedUses.
	marked     []*queue
	markedUses uint64
	// visitAll: no job is ever at rest, every pass visits them all, and
	// a claim looks at every job behind it (for tests: the reference
	// resting.go and claim_passover.go must decide as).
	visitAll bool
	// checkLive: every claim that pickLive decides is checked against
	// the walk of the victims tree (for tests, claim_streams.go).
	checkLive bool
	// checkReclaims: every preemptAll is checked not to take a queue
	// above its guarantee by preemptions across queues (for tests,
	// checkGuaranteeReclaims).
	checkReclaims bool
	root          *qnode // nodes["root"]
	// victims holds every job with slots a claim may take, in victim
	// order (claim_merge.go); nil while there is one queue.
	victims *rbtree.Tree[*job]
	// idleVictims holds the jobs of victims that hold idle slots, in
	// victim order (claim_streams.go).
	idleVictims *rbtree.Tree[*job]
	// turn is the queue a decide pass serves, while it comes first in
	// the fair order of turnQueues queues (queuesort.go); turnEnded: it
	// stopped coming first.
	turn       *queue
	turnQueues int
	turnEnded  bool
	// broken is the first reclaim across queues found breaking the
	// guarantees (checkReclaimGuarantee), for CheckInvariants.
	broken error
	// anyPreempt: a queue preempts (preemptAll has work).
	anyPreempt bool
	// uses counts the changes of what queues hold; ranked is its value
	// when rankQueues last ran over rankedQueues queues (it runs again
	// only after a change).
	uses, ranked uint64
	// grantLog records the grants of asks of this call of Decide, and
	// retracted says a preemption retracted one (retract.go); repass,
	// that a preemption took the free slots of claims and keeps them for
	// its claimant (preempt_claims.go): the passes run again.
	grantLog  []grantRecord
	retracted bool
	repass    bool
	// heldToStart lists the jobs a pass of this call of decideNow held
	// back because another job of their stateaware queue preempts to
	// start (preemptedToStart); repassUnheld runs the passes again for
	// them once that preemption is gone within the decision.
	heldToStart  []*job
	rankedOnce   bool
	rankedQueues int
	jobs         []*job
	byName       map[string]*job
	events       []Event // since the last Events call (storage reused)
	pending      []JobID // jobs given messages since the last Pending call
	// revokes lists the slots with a revokeAt (some stale).
	revokes []int32
	now     time.Time
	// scratch, reused by decide and claim
	touched []*job
	// unreserved: a claim gave up reserved slots during a decide pass.
	unreserved bool
	// regrant: a fair-share job was granted during a decide pass; the
	// pass ends, and the next one sorts the jobs by their new shares.
	regrant bool
	// driverYielded: a driver left a free slot to a waiting job's
	// request during a decide pass (drivers.go).
	driverYielded bool
	yielder       *job // the job whose driver yielded last (visit reads it)
	yieldRepassed bool // decideNow ran a pass again for a yielded driver
	// startCut: the decision granted a driver whose first asks follow at
	// once (JobSpec.StartAtOnce) and decides nothing more; Decide clears
	// it (see startcut.go).
	startCut bool
	// cancelCut: the decision cancelled a task of a job that runs tasks
	// in other slots, and decides nothing more; Decide clears it (see
	// cancelcut.go). cutFor lists the claimants of such cancellations,
	// whose grants the cut keeps.
	cancelCut bool
	cutFor    []*job
	// decision counts the decisions (decideNow), from 1; visits the jobs
	// their passes visited (visit), which bounds their work (the tests
	// check that a queue's held-back jobs cost none).
	decision uint64
	visits   uint64
	// yields counts the calls of driverYields that looked for a request
	// to yield to, yieldVisits the jobs they looked at (the tests check
	// that jobs waiting for their drivers cost none).
	yields, yieldVisits uint64
	// preemptLooks counts the jobs preemptAll asked preemptFor about
	// (the tests check that jobs with nothing to preempt cost none).
	preemptLooks uint64
	// stamp counts asks, grants of drivers, marks of held-back jobs,
	// acceptances and preemptions, to order them within an instant (for
	// CheckInvariants).
	stamp uint64
	// backoff is Config.Backoff or its default.
	backoff Backoff
	// gangJobs lists the jobs with a gang timer or a backoff running.
	gangJobs []*job
	// debug: the logger logs debug entries (per-job waits are costly).
	debug  bool
	counts []int
	// handedTo lists the claimants slots came back for since the last
	// decision (grant.go: dropPassedClaims).
	handedTo []*job
	// handed lists the claimants of handedTo whose claims kept their
	// slots at the start of the decision, and handedUses is q.uses when
	// the fair order was last looked at for them (see
	// dropOutrankedInPass).
	handed     []*job
	handedUses uint64
	// passScratch is dropPassedClaims' storage.
	passScratch []*job
	// helpCounts and helpLack are servedMore's storage
	// (grant.go).
	helpCounts   []int
	helpLack     []resource.Count
	availCounts  []resource.Count
	availProf    []int32
	asg          resource.Assignment // the storage of assign's results
	claimScratch claimScratch
	// specAsks are the speculative asks of every job, oldest first
	// (speculative.go).
	specAsks []*specAsk
}

// Decide grants, reserves and reclaims over everything waiting, by the
// queue policies, as of now, then fires the timers due (see Tick) and
// decides again if one fired. Inputs (Submit, a port's messages and
// reports, SetPriority, Kill, Tick) only record what happened: the
// caller calls Decide once it has applied every input of an instant (and
// again after the pools took what it granted, until Pending is empty), so
// the order of simultaneous inputs never decides who gets a slot. A
// decision that grants a driver whose first asks follow at once
// (JobSpec.StartAtOnce) ends there, timers unfired, and NextDeadline is
// now: the next Decide of the instant decides the rest. So does one that
// cancels a task of a job that runs tasks in other slots too, once that
// preemption is made and its timers fired, its grants of asks taken back
// (but its claimant's):
// the next Decide, after the job's pool took the Revoke, decides them with
// the slots its cancelled region gave back (Pending lists that pool).
func (q *Queues) Decide(now time.Time) {
	q.now = now
	q.grantLog = q.grantLog[:0]
	q.startCut, q.cancelCut = false, false
	clear(q.cutFor)
	q.cutFor = q.cutFor[:0]
	q.decideNow()
	if !q.startCut && q.fireTimers(now) && !q.cancelCut {
		q.decideNow()
	}
	if q.cancelCut {
		// (A decision cut by a cancellation, or a revoke that fired
		// cancelling a region: the next Decide decides its grants with
		// the slots that come back, cancelcut.go.)
		q.retractBeforeCut()
	}
}

// New returns an admission over the configured cluster and queues. Bad
// configuration (duplicate slot ids, a bad queue limit or policy, a queue
// configured twice) returns a typed error.
func New(cfg Config) (*Queues, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	q := &Queues{
		cfg:       cfg,
		log:       cfg.Logger,
		index:     make(map[slotpool.SlotID]int32, len(cfg.Slots)),
		lostSlots: map[slotpool.SlotID]JobID{},
		profIdx:   map[resource.Profile]int32{},
		queues:    map[string]*queue{},
		byName:    map[string]*job{},
		nodes:     map[string]*qnode{},
		debug:     cfg.Logger.Core().Enabled(zap.DebugLevel),
		backoff:   cfg.Backoff,
	}
	if q.backoff == (Backoff{}) {
		q.backoff = DefaultBackoff
	}
	all := make([]resource.Profile, len(cfg.Slots))
	for i, s := range cfg.Slots {
		if _, dup := q.index[s.ID]; dup {
			return nil, &slotpool.SlotError{Op: "cluster", Slot: s.ID, Err: slotpool.ErrDuplicateSlot}
		}
		q.index[s.ID] = int32(i)
		p, ok := q.profIdx[s.Profile]
		if !ok {
			p = int32(len(q.profiles))
			q.profIdx[s.Profile] = p
			q.profiles = append(q.profiles, s.Profile)
			q.free = append(q.free, nil)
		}
		q.slots = append(q.slots, cslot{slot: s, profile: p, owner: noJob, claimant: noJob, from: noJob})
		all[i] = s.Profile
	}
	// Free stacks pop the lowest index first.
	for i := len(q.slots) - 1; i >= 0; i-- {
		p := q.slots[i].profile
		q.free[p] = append(q.free[p], int32(i))
	}
	q.nFree = len(q.slots)
	q.capacity = resource.Tally(all)
	for _, qc := range cfg.Queues {
		if err := qc.validate(); err != nil {
			return nil, err
		}
		if _, dup := q.queues[qc.Name]; dup {
			return nil, &ConfigError{Queue: qc.Name, Field: "name", Value: qc.Name, Err: fmt.Errorf("%w: configured twice", ErrBadQueueName)}
		}
		q.addQueue(qc)
	}
	if _, ok := q.queues["root.default"]; !ok {
		q.addQueue(QueueConfig{Name: "root.default", Policy: cfg.DefaultPolicy}) // where jobs that name no queue go
	}
	if err := q.checkCapacities(); err != nil {
		return nil, err
	}
	return q, nil
}

func (q *Queues) addQueue(qc QueueConfig) *queue {
	if qc.StartingTimeout == 0 {
		qc.StartingTimeout = DefaultStartingTimeout
	}
	qu := &queue{cfg: qc, order: rbtree.New(byKey), holders: rbtree.New(byHolderKey)}
	q.anyPreempt = q.anyPreempt || qc.Preempt
	qu.node = q.node(qc.Name)
	qu.node.qu, qu.node.guaranteed, qu.node.max = qu, qc.GuaranteedSlots, qc.MaxSlots
	qu.node.markStale()
	qu.node.updateKept()
	if p := qu.node.parent; p != nil {
		p.unsorted = true // (its guarantee orders it among its siblings)
	}
	q.queues[qc.Name] = qu
	q.qorder = append(q.qorder, qu)
	sort.Slice(q.qorder, func(a, b int) bool { return q.qorder[a].cfg.Name < q.qorder[b].cfg.Name })
	q.fairShareQueues = q.fairShareQueues[:0]
	for i, x := range q.qorder {
		x.pos = i
		if x.cfg.Policy == FairShare {
			q.fairShareQueues = append(q.fairShareQueues, x)
		}
	}
	q.relist()
	q.startVictims()
	return qu
}

// Capacity returns the cluster's slots, counted per profile.
func (q *Queues) Capacity() []resource.Count { return slices.Clone(q.capacity) }

// Pending returns the jobs whose ports were given messages for their
// pools since the last call, each once, in the order of their first
// message, and forgets them: a runtime with many jobs pumps those ports
// (JobPort.Ready) instead of asking every port. A job listed may have
// nothing left if its port's Ready was called meanwhile.
func (q *Queues) Pending() []JobID {
	ids := q.pending
	q.pending = nil
	for _, id := range ids {
		q.jobs[id].listed = false
	}
	return ids
}

// send queues a message for j's pool.
func (q *Queues) send(j *job, msg slotpool.FromAdmission) {
	if !j.listed {
		j.listed = true
		q.pending = append(q.pending, j.id)
	}
	j.out = append(j.out, msg)
}

// Events returns what happened to jobs since the last call, in order.
// The caller owns the returned slice.
func (q *Queues) Events() []Event {
	if len(q.events) == 0 {
		return nil
	}
	// A copy of exactly their size: the storage they were collected in
	// collects the next ones.
	ev := slices.Clone(q.events)
	clear(q.events)
	q.events = q.events[:0]
	return ev
}

// event records e for Events.
func (q *Queues) event(e Event) { q.events = append(q.events, e) }

// Submit adds a job at time now and returns its JobPort, through which
// its slot pool talks to the admission. A job whose driver plus largest
// region can never fit the cluster is rejected at once: its port reports
// JobRejected and Err, and a StateChanged event says why; it holds
// nothing back. An accepted job is granted in the next Decide.
//
// Errors (nothing changes): ErrDuplicateJob for a name already
// submitted, ErrUnknownQueue for an unknown queue without CreateQueues,
// ErrBadPriority, ErrBadLimit for a bad gang.
func (q *Queues) Submit(now time.Time, spec JobSpec) (JobPort, error) {
	p, err := q.submit(now, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// submit is Submit, returning the port itself.
func (q *Queues) submit(now time.Time, spec JobSpec) (*port, error) {
	if spec.Queue == "" {
		spec.Queue = "root.default"
	}
	if spec.User == "" {
		spec.User = "anonymous"
	}
	if spec.Priority == 0 {
		spec.Priority = DefaultPriority
	}
	if spec.Priority < MinPriority || spec.Priority > MaxPriority {
		return nil, fmt.Errorf("%w: job %q: priority %d is outside %d ... %d", ErrBadPriority, spec.Name, spec.Priority, MinPriority, MaxPriority)
	}
	if _, dup := q.byName[spec.Name]; dup {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateJob, spec.Name)
	}
	qu, ok := q.queues[spec.Queue]
	if !ok {
		if !q.cfg.CreateQueues {
			return nil, fmt.Errorf("%w %q for job %q: configure it in Config.Queues, or set Config.CreateQueues to create queues for the jobs that name them", ErrUnknownQueue, spec.Queue, spec.Name)
		}
		qc := QueueConfig{Name: spec.Queue, Policy: q.cfg.DefaultPolicy}
		if err := qc.validate(); err != nil {
			return nil, err
		}
		if err := q.checkNewLeaf(spec.Queue, spec.Name); err != nil {
			return nil, err
		}
		qu = q.addQueue(qc)
	}
	if err := q.checkLeaf(qu, spec.Name); err != nil {
		return nil, err
	}
	q.now = now
	if g := spec.Gang; g != nil {
		if g.MinSlots < 1 {
			return nil, fmt.Errorf("%w: job %q: gang minSlots %d must be >= 1", ErrBadLimit, spec.Name, g.MinSlots)
		}
		if g.Timeout < 0 && g.Timeout != NoGangWait {
			return nil, fmt.Errorf("%w: job %q: gang timeout %v must be >= 0 (0: the default of %v) or NoGangWait", ErrBadLimit, spec.Name, g.Timeout, DefaultGangTimeout)
		}
		gc := *g
		if gc.Timeout == 0 {
			gc.Timeout = DefaultGangTimeout
		}
		spec.Gang = &gc
	}
	j := &job{id: JobID(len(q.jobs)), spec: spec, queue: qu, submit: now, driver: spec.Driver != nil, driverSlot: -1, nameHead: nameHead(spec.Name)}
	if j.driver {
		q.keepAsking(qu)
	}
	if spec.Gang != nil {
		j.gangDeadline = now.Add(max(spec.Gang.Timeout, 0)) // NoGangWait: at arrival
		q.gangJobs = append(q.gangJobs, j)
	}
	q.jobs = append(q.jobs, j)
	if qu.submitted++; qu.submitted == 1 {
		qu.firstJob = spec.Name
	}
	if qu.cfg.Policy == FairShare {
		qu.jobs = append(qu.jobs, j)
	}
	q.byName[spec.Name] = j
	q.send(j, slotpool.Capacity{Slots: q.Capacity()})
	if reason, fits := q.fits(j); !fits {
		j.err = &RejectedError{Job: spec.Name, Queue: spec.Queue, Reason: reason}
		q.move(j, JobRejected, reason)
		return &port{q: q, j: j}, nil
	}
	q.move(j, JobAccepted, "submitted to "+spec.Queue)
	q.updateOrder(j)
	return &port{q: q, j: j}, nil
}

// fits checks that the job's gang, and its driver plus largest region,
// fit the cluster as configured (Config.Cluster, else the slots) and its
// queue's maxSlots (and its parents'), and that a slot serves its driver
// and leaves room for each of its regions (driverslot.go).
func (q *Queues) fits(j *job) (string, bool) { return q.fitsNeed(j, true) }

// fitsNeed is fits, checking the job's gang only if gang says so.
func (q *Queues) fitsNeed(j *job, gang bool) (string, bool) {
	if reason, ok := q.fitsQueue(j); !ok {
		return reason, false
	}
	capacity := q.configuredCapacity()
	need := slices.Clone(j.spec.Largest)
	if j.spec.Driver != nil {
		need = append(need, resource.Count{Profile: *j.spec.Driver, N: 1})
	}
	if g := j.spec.Gang; g != nil && gang {
		if ga := resource.Assign(j.gangNeed(), capacity, q.cfg.Matching); !ga.Complete() {
			total := 0
			for _, c := range capacity {
				total += c.N
			}
			return fmt.Sprintf("its gang of %s can never be reserved: the queue's cluster has %s; missing %s",
				plural.Count(g.MinSlots, "slot"), plural.Count(total, "slot"), ga.MissingString()), false
		}
	}
	a := resource.Assign(need, capacity, q.cfg.Matching)
	if a.Complete() {
		return q.fitsDriverSlot(j)
	}
	what := j.spec.LargestName
	if what == "" {
		what = "the largest region"
	}
	n := 0
	for _, c := range need {
		n += c.N
	}
	with := ""
	if j.spec.Driver != nil {
		with = " with the driver"
	}
	return fmt.Sprintf("%s needs %s at once%s; the queue's cluster can never give %s: missing %s",
		what, plural.Count(n, "slot"), with, plural.Of(n, "it", "them"), a.MissingString()), false
}

// countPrio counts d more jobs of priority p in the queue.
func (qu *queue) countPrio(p, d int) {
	qu.entitleDirty = true // the shares change with the jobs and their priorities
	if qu.prios == nil {
		qu.prios = map[int]int{}
	}
	if qu.prios[p] += d; qu.prios[p] == 0 {
		delete(qu.prios, p)
	}
}

// move changes a job's state and reports it.
func (q *Queues) move(j *job, to JobState, reason string) {
	from := j.state
	if !CanMove(from, to) {
		panic(fmt.Sprintf("admission: job %q: %v -> %v", j.spec.Name, from, to)) // a bug of this package
	}
	j.state = to
	if to == JobAccepted || from == JobAccepted {
		q.stamp++
		if to == JobAccepted {
			j.acceptStamp = q.stamp
		} else {
			j.leftAcceptStamp = q.stamp
		}
	}
	qu := j.queue
	switch {
	case to == JobAccepted:
		qu.countPrio(j.spec.Priority, +1)
	case to.Terminal() && from != JobRejected && from != JobNew && !from.Terminal():
		qu.countPrio(j.spec.Priority, -1)
	}
	switch {
	case to == JobStarting:
		qu.starting++
		qu.running++
		qu.node.addRunning(1)
		qu.weight += j.spec.Priority
		j.started = q.now
	case from == JobStarting:
		qu.starting--
	}
	if (from == JobStarting || from == JobRunning) && (to == JobCompleting || to == JobFailing) {
		qu.running--
		qu.node.addRunning(-1)
		qu.weight -= j.spec.Priority
	}
	q.event(Event{At: q.now, Job: j.spec.Name, ID: j.id, Kind: StateChanged, From: from, To: to, Reason: reason})
	if q.debug {
		q.log.Debug("job state", zap.String("job", j.spec.Name), zap.Stringer("from", from), zap.Stringer("to", to), zap.String("why", reason))
	}
}
