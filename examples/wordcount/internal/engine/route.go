package engine

import (
	"context"
	"hash/fnv"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/scheduler"
)

// target is where one producer's records for one consumer subtask go: a
// pipelined channel, a blocking file or a hybrid log.
type target interface {
	// send writes one record; it may block (a full channel).
	send(ctx context.Context, rec Record) error
	// close ends the data: an end-of-stream marker, or the file put in
	// place.
	close(ctx context.Context) error
	// discard drops what a failed or canceled attempt wrote.
	discard()
}

// output is one out-edge of a task: the consumer subtasks its partition
// feeds (the consumers of its partition group) and how records are
// spread over them.
type output struct {
	ship    exchange.ShipStrategy
	targets []target
	next    int // round-robin position

	// For a blocking edge: the files to write, one per target (opened
	// when the task starts), and the partition to mark done once they
	// are all in place.
	paths     []string
	partition *blockingResult
	attempt   scheduler.Attempt

	// For a hybrid edge: the logs of the targets, sealed once the
	// scheduler accepted the producer's finish.
	logs []*hybridLog
}

// seal ends the logs of a hybrid output.
func (o *output) seal() {
	for _, l := range o.logs {
		l.seal()
	}
}

// open creates the files of a blocking output.
func (o *output) open() error {
	for _, p := range o.paths {
		f, err := createFile(p, o.attempt)
		if err != nil {
			return err
		}
		o.targets = append(o.targets, f)
	}
	return nil
}

// write routes one record: to the only consumer, by hash of the key
// (hash), to every consumer (broadcast), or round-robin (rebalance, and
// rescale over a pointwise range of several consumers).
func (o *output) write(ctx context.Context, rec Record) error {
	n := len(o.targets)
	switch {
	case n == 1:
		return o.targets[0].send(ctx, rec)
	case o.ship == exchange.Hash:
		return o.targets[hashKey(rec.Key)%uint32(n)].send(ctx, rec)
	case o.ship == exchange.Broadcast:
		for _, t := range o.targets {
			if err := t.send(ctx, rec); err != nil {
				return err
			}
		}
		return nil
	default:
		t := o.targets[o.next%n]
		o.next++
		return t.send(ctx, rec)
	}
}

// finish closes every target and, for a blocking edge, marks the
// partition done.
func (o *output) finish(ctx context.Context) error {
	for _, t := range o.targets {
		if err := t.close(ctx); err != nil {
			return err
		}
	}
	if o.partition != nil {
		close(o.partition.done)
	}
	return nil
}

// discard drops what the targets got so far.
func (o *output) discard() {
	for _, t := range o.targets {
		t.discard()
	}
}

// hashKey is the hash partitioner's hash of a key (FNV-1a).
func hashKey(key string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()
}
