package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/regionsched/regionsched/scheduler"
)

// blockingResult is one attempt of a blocking result partition: done is
// closed once its producer put every file in place. A new attempt of the
// producer registers a new one. The Ready loop owns the registry; done is
// closed by the producer's goroutine.
type blockingResult struct {
	attempt scheduler.Attempt
	done    chan struct{}
}

// partitionDir is the directory of one blocking result partition.
func partitionDir(dir string, p scheduler.PartitionID) string {
	return filepath.Join(dir, fmt.Sprintf("partition-%d", p))
}

// dataFile is the file of partition p for consumer subtask c.
func dataFile(dir string, p scheduler.PartitionID, c scheduler.TaskID) string {
	return filepath.Join(partitionDir(dir, p), fmt.Sprintf("to-%d.data", c))
}

// fileTarget writes one producer's records for one consumer to a file:
// under a temporary name of the attempt, renamed to the final name when
// the producer finishes, so a consumer never sees a partial file and a
// restarted producer replaces the file whole.
type fileTarget struct {
	tmp, final string
	f          *os.File
	w          *bufio.Writer
}

// createFile opens the temporary file of an attempt for final.
func createFile(final string, attempt scheduler.Attempt) (*fileTarget, error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	tmp := fmt.Sprintf("%s.attempt-%d", final, attempt)
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	return &fileTarget{tmp: tmp, final: final, f: f, w: bufio.NewWriter(f)}, nil
}

// send writes a record as one line "N KEY"; a key never holds a newline
// (keys are lines or words).
func (t *fileTarget) send(_ context.Context, rec Record) error {
	if strings.ContainsRune(rec.Key, '\n') {
		return fmt.Errorf("record key %q holds a newline", rec.Key)
	}
	_, err := fmt.Fprintf(t.w, "%d %s\n", rec.N, rec.Key)
	return err
}

func (t *fileTarget) close(context.Context) error {
	if err := t.w.Flush(); err != nil {
		return err
	}
	if err := t.f.Close(); err != nil {
		return err
	}
	t.f = nil
	return os.Rename(t.tmp, t.final)
}

func (t *fileTarget) discard() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
		os.Remove(t.tmp)
	}
}

// fileRef is one producer's file for a consumer, and the partition
// attempt that writes it.
type fileRef struct {
	path   string
	result *blockingResult
}

// fileInput is a consumer's blocking input on one edge: the files of the
// producers of its partition group, each read once its producer finished.
type fileInput struct{ files []fileRef }

func (in fileInput) read(ctx context.Context, out chan<- Record) error {
	for _, f := range in.files {
		select {
		case <-f.result.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if err := readFile(ctx, f.path, out); err != nil {
			return err
		}
	}
	return nil
}

// readFile sends the records of one file.
func readFile(ctx context.Context, path string, out chan<- Record) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		n, key, ok := strings.Cut(sc.Text(), " ")
		count, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil {
			return fmt.Errorf("%s: bad record %q", path, sc.Text())
		}
		select {
		case out <- Record{Key: key, N: count}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return sc.Err()
}
