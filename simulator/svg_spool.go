package simulator

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// opSize is the size of one aggOp in a spool: kind, four int32, two int64.
const opSize = 1 + 4*4 + 2*8

// opSpool keeps the steps of the aggregated view in a temporary file, in
// order, until the picture can be drawn (its time axis is known only when
// the run ends): the memory it takes does not grow with the run.
type opSpool struct {
	f   *os.File
	bw  *bufio.Writer
	buf [opSize]byte
	err error
	n   int
}

// ErrSpool means the temporary file a TimelineRecorder keeps the steps of
// a large run's picture in could not be written or read.
var ErrSpool = errors.New("simulator: timeline spool")

func newOpSpool() (*opSpool, error) {
	f, err := os.CreateTemp("", "regionsched-timeline-*.bin")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpool, err)
	}
	return &opSpool{f: f, bw: bufio.NewWriterSize(f, 1<<16)}, nil
}

// put appends one step; after an error it writes nothing more.
func (s *opSpool) put(op aggOp) {
	if s.err != nil {
		return
	}
	b := s.buf[:0]
	b = append(b, byte(op.kind))
	for _, v := range [...]int32{op.slot, op.region, op.vertex, op.job} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(op.t0))
	b = binary.LittleEndian.AppendUint64(b, uint64(op.t1))
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
	var b [opSize]byte
	for range s.n {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return fmt.Errorf("%w: reading it back: %w", ErrSpool, err)
		}
		i32 := func(at int) int32 { return int32(binary.LittleEndian.Uint32(b[at:])) }
		apply(aggOp{kind: aggKind(b[0]), slot: i32(1), region: i32(5), vertex: i32(9), job: i32(13),
			t0: time.Duration(binary.LittleEndian.Uint64(b[17:])), t1: time.Duration(binary.LittleEndian.Uint64(b[25:]))})
	}
	// later steps go after these
	if _, err := s.f.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("%w: %w", ErrSpool, err)
	}
	return nil
}

// close removes the file.
func (s *opSpool) close() error {
	err := s.f.Close()
	if rerr := os.Remove(s.f.Name()); err == nil {
		err = rerr
	}
	return err
}
