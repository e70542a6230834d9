package timeline

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// maxOpSize bounds the size of one aggOp in a spool: its kind, then its
// fields as varints (a hold: slot, region, job vertex, job, start and
// length; a wait: start and length; a failure: its time).
const maxOpSize = 1 + 4*binary.MaxVarintLen32 + 2*binary.MaxVarintLen64

// opSpool keeps the steps of the aggregated view in a temporary file, in
// order, until the picture can be drawn (its time axis is known only when
// the run ends): the memory it takes does not grow with the run; the file
// takes about 15 bytes per slot holding and per request that waited.
type opSpool struct {
	f       *os.File
	removed bool // the file's name is gone already (the open file lives on)
	bw      *bufio.Writer
	buf     [maxOpSize]byte
	err     error
	n       int
}

// ErrSpool means the temporary file a Recorder keeps the steps of
// a large run's picture in could not be written or read.
var ErrSpool = errors.New("timeline: spool")

func newOpSpool() (*opSpool, error) {
	f, err := os.CreateTemp("", "regionsched-timeline-*.bin")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpool, err)
	}
	// Where an open file can lose its name (not on Windows) it does at
	// once, so that a run killed before Close leaves nothing behind.
	removed := os.Remove(f.Name()) == nil
	return &opSpool{f: f, removed: removed, bw: bufio.NewWriterSize(f, 1<<16)}, nil
}

// put appends one step; after an error it writes nothing more.
func (s *opSpool) put(op aggOp) {
	if s.err != nil {
		return
	}
	b := append(s.buf[:0], byte(op.kind))
	switch op.kind {
	case opHold:
		for _, v := range [...]int32{op.slot, op.region, op.vertex, op.job} {
			b = binary.AppendVarint(b, int64(v))
		}
		b = binary.AppendVarint(b, int64(op.t0))
		b = binary.AppendVarint(b, int64(op.t1-op.t0))
	case opWait:
		b = binary.AppendVarint(b, int64(op.t0))
		b = binary.AppendVarint(b, int64(op.t1-op.t0))
	case opFail:
		b = binary.AppendVarint(b, int64(op.t0))
	}
	if _, err := s.bw.Write(b); err != nil {
		s.err = fmt.Errorf("%w: %w", ErrSpool, err)
	}
	s.n++
}

// replay hands every step put so far, in order, to apply.
func (s *opSpool) replay(apply func(aggOp)) error {
	if s.err != nil {
		return s.err
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("%w: %w", ErrSpool, err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%w: %w", ErrSpool, err)
	}
	br := bufio.NewReaderSize(s.f, 1<<16)
	for range s.n {
		op, err := readOp(br)
		if err != nil {
			return fmt.Errorf("%w: reading it back: %w", ErrSpool, err)
		}
		apply(op)
	}
	// later steps go after these
	if _, err := s.f.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("%w: %w", ErrSpool, err)
	}
	return nil
}

// readOp reads one step as put wrote it.
func readOp(br *bufio.Reader) (aggOp, error) {
	kind, err := br.ReadByte()
	if err != nil {
		return aggOp{}, err
	}
	op := aggOp{kind: aggKind(kind)}
	var all [6]int64
	var fields []int64
	switch op.kind {
	case opHold:
		fields = all[:6]
	case opWait:
		fields = all[:2]
	case opFail:
		fields = all[:1]
	default:
		return aggOp{}, fmt.Errorf("unknown step %d", kind)
	}
	for i := range fields {
		if fields[i], err = binary.ReadVarint(br); err != nil {
			return aggOp{}, err
		}
	}
	switch op.kind {
	case opHold:
		op.slot, op.region, op.vertex, op.job = int32(fields[0]), int32(fields[1]), int32(fields[2]), int32(fields[3])
		op.t0, op.t1 = time.Duration(fields[4]), time.Duration(fields[4]+fields[5])
	case opWait:
		op.t0, op.t1 = time.Duration(fields[0]), time.Duration(fields[0]+fields[1])
	case opFail:
		op.t0 = time.Duration(fields[0])
	}
	return op, nil
}

// close closes and removes the file.
func (s *opSpool) close() error {
	err := s.f.Close()
	if !s.removed {
		if rerr := os.Remove(s.f.Name()); err == nil {
			err = rerr
		}
	}
	return err
}
