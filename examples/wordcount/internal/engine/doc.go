// Package engine is a small dataflow runtime on top of the regionsched
// driver: it runs a job graph of word-count operators for real, with
// goroutines, bounded channels and files, and lets the library decide what
// runs when and where.
//
// # How the runtime maps onto the library
//
// Slots. The runtime owns N local slots. It declares them as the whole
// cluster (Driver.SetCapacity, so a region that needs more slots than
// exist fails the job at once with a *scheduler.RegionError instead of
// waiting) and offers them to the scheduler's pool (Driver.Offer). A
// task runs only when the scheduler deploys it into one of them; the
// runtime checks that a slot only ever holds subtasks of distinct vertices
// of one slot sharing group, and that a slot the scheduler says went back
// is empty.
//
// The Ready loop. Run starts a scheduler.Driver with the real clock and
// applies every Ready value it hands out: first Cancel (the attempt's
// context is canceled and the loop waits for its goroutine to end, so a
// slot is never used twice), then Released (checked), then
// PartitionsReleased (the files are deleted), then Deploy; Job ends the
// run. The loop is the only goroutine that creates or cancels attempts.
//
// Attempts. Every Deployment carries the attempt of its region; a task
// is one goroutine per attempt, and every report it makes
// (TaskRunning, TaskFinished, TaskFailed) names that attempt, so reports
// of attempts a restart replaced are dropped by the scheduler. When a
// task fails (an injected failure, Config.Fail), it reports TaskFailed
// and the scheduler names the regions to restart: their running tasks come
// back in Cancel and are stopped through their contexts, then the regions
// are deployed again with a new attempt.
//
// Data. A pipelined edge is one bounded channel per consumer subtask and
// region attempt, shared by the producers that feed it (the pointwise
// ranges of the execution topology, or all of them for all-to-all edges): a producer whose
// consumer is not running really stalls. Both ends of a pipelined edge
// are in one region, so a restart recreates its channels and whatever a
// failed attempt had sent is dropped with them. A blocking edge is one
// file per (producer, consumer) pair in a temporary directory, written
// under a temporary name and renamed when the producer finishes, so a
// failed or canceled producer leaves nothing behind and a restarted one
// rewrites its files; consumers read them once the producer finished. A
// hybrid edge is one log per (producer, consumer) pair, kept whole in
// memory: the producer appends to it without ever waiting, and the
// consumer, deployed once its producers are, reads it from the start while
// it grows; the producer seals it once the scheduler accepted the
// producer's finish, so no consumer reports its finish before its
// producers'. A consumer that runs again reads the log again; a producer
// that runs again writes new logs, and its consumers run again with it.
// With speculation on, a producer that may be speculated has each of its
// attempts write logs of its own, and its consumers read only the logs of
// the attempt that won, once sealed (scheduler.ReadsFinishedOnly).
// Records are routed by hash of the word (hash), round-robin
// (rebalance, and rescale within a pointwise range), to every consumer
// (broadcast) or to the one consumer (forward).
//
// Several jobs. RunJobs runs several jobs at once on one set of slots:
// one engine per job (its attempts, channels, blocking files in a
// directory of its own, timeline and result) on one host they share (the
// slots, the clock, the task goroutines). The jobs are submitted to one
// multijob.Scheduler before its multijob.Driver starts, so the driver's
// first turn decides over all of them as one instant, by the policy of
// the one queue they share (JobsConfig.Policy) and their priorities. The
// slots are the admission's cluster: a job whose largest region can never
// fit them is rejected (JobResult.Err) instead of failing at its start.
// One loop reads the driver's Ready values and routes each job's
// scheduler.Ready to its engine in the order a multijob.Ready asks: every
// job's Cancel, Released and PartitionsReleased first, then the jobs that
// ended, then every job's Deploy, since a slot one job gives up may be
// deployed by another in the same Ready. The slot table checks, besides
// the above, that a slot holds tasks of one job at a time. Each job's
// tasks report to the driver under the job's name; a job's injected
// failure restarts regions of that job only.
//
// Operators are named by vertex id (the part before an optional '.'):
// text-source, tokenizer, counter, top-k and result-sink (see Operators).
// The records the tasks of vertices without out-edges emit are the job's
// result, taken from each task's last finished attempt.
package engine
