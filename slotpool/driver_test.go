package slotpool

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/regionsched/regionsched/resource"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDriverManyGoroutines(t *testing.T) {
	mock := clock.NewMock()
	d := NewDriver(New(Config{Timeout: time.Hour}), DriverConfig{Clock: mock})
	defer d.Close()
	for i := range 10 {
		require.NoError(t, d.Offer(slot(SlotID(i), small)))
	}
	const workers, rounds = 50, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers+5)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				id := BulkID(w*rounds + r + 1)
				ctx, cancel := context.WithCancel(context.Background())
				if r%7 == 3 {
					cancel() // give up at once: canceled, or fulfilled and then canceled
				}
				res, err := d.AllocateBulk(ctx, Bulk{ID: id, Requests: reqs(times(1+(w+r)%3, small)...)})
				cancel()
				if r%7 == 3 {
					if err != nil && err != context.Canceled {
						errs <- fmt.Errorf("bulk %d: %w", id, err)
						return
					}
					if err == nil {
						for _, s := range res.Slots {
							_ = d.Release(s) // may have been taken back by the cancel
						}
					}
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("bulk %d: %w", id, err)
					return
				}
				for _, s := range res.Slots {
					if err := d.Release(s); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	for o := range 5 { // more slots arrive meanwhile
		wg.Go(func() {
			if err := d.Offer(slot(SlotID(100+o), small)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := d.Stats()
	require.NoError(t, err)
	assert.Equal(t, Stats{Slots: 15, Free: 15}, st)
}

func TestDriverTimeoutWithMockClock(t *testing.T) {
	mock := clock.NewMock()
	d := NewDriver(New(Config{Timeout: time.Minute}), DriverConfig{Clock: mock})
	defer d.Close()
	require.NoError(t, d.Offer(slot(1, small)))
	ch, err := d.Submit(Bulk{ID: 1, Requests: reqs(small, small)})
	require.NoError(t, err) // the timer is armed once Submit returns
	mock.Add(59 * time.Second)
	info, _, err := d.Bulk(1)
	require.NoError(t, err)
	assert.Equal(t, BulkWaiting, info.State)
	mock.Add(time.Second)
	res := <-ch
	assert.ErrorIs(t, res.Err, ErrNoResourceAvailable)
	st, err := d.Stats()
	require.NoError(t, err)
	assert.Equal(t, Stats{Slots: 1, Free: 1}, st, "the held slot went back")
}

func TestDriverContextCancelsTheBulk(t *testing.T) {
	d := NewDriver(New(Config{}), DriverConfig{Clock: clock.NewMock()})
	defer d.Close()
	require.NoError(t, d.Offer(slot(1, small)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the bulk is submitted, holds slot 1, and is canceled
	_, err := d.AllocateBulk(ctx, Bulk{ID: 1, Requests: reqs(small, small)})
	assert.ErrorIs(t, err, context.Canceled)
	info, _, err := d.Bulk(1)
	require.NoError(t, err)
	assert.Equal(t, BulkCanceled, info.State)
	st, _ := d.Stats()
	assert.Equal(t, 1, st.Free)
}

func TestDriverReportsLostTasksAndCloses(t *testing.T) {
	lost := make(chan Event, 1)
	d := NewDriver(New(Config{}), DriverConfig{Clock: clock.NewMock(), OnEvent: func(e Event) { lost <- e }})
	require.NoError(t, d.Offer(slot(1, small)))
	res, err := d.AllocateBulk(context.Background(), Bulk{ID: 1, Requests: reqs(small)})
	require.NoError(t, err)
	assert.Equal(t, []SlotID{1}, res.Slots)
	require.NoError(t, d.Lose(1))
	assert.Equal(t, Lost{Slot: 1, Bulk: 1, Request: 0, Reason: ReasonLost}, <-lost)
	assert.ErrorIs(t, d.Release(1), ErrUnknownSlot)

	ch, err := d.Submit(Bulk{ID: 2, Requests: reqs(small)})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	assert.ErrorIs(t, (<-ch).Err, ErrClosed)
	assert.ErrorIs(t, d.Offer(slot(2, small)), ErrClosed)
	require.NoError(t, d.Close())
}

// releaseSignal passes messages to an admission and reports the pool's
// slot releases on a channel.
type releaseSignal struct {
	Admission
	released chan SlotID
}

func (r releaseSignal) Handle(now time.Time, msg ToAdmission) error {
	err := r.Admission.Handle(now, msg)
	if m, ok := msg.(SlotRelease); ok {
		r.released <- m.Slot
	}
	return err
}

func TestDriverWithStaticCluster(t *testing.T) {
	mock := clock.NewMock()
	c, err := NewStaticCluster(0, slot(1, small), slot(2, small), slot(3, big))
	require.NoError(t, err)
	adm := releaseSignal{Admission: c, released: make(chan SlotID, 3)}
	d := NewDriver(New(Config{Admission: true, IdleTimeout: time.Minute}), DriverConfig{Clock: mock, Admission: adm})
	defer d.Close()
	res, err := d.AllocateBulk(context.Background(), Bulk{ID: 1, Requests: reqs(small, big)})
	require.NoError(t, err)
	assert.Equal(t, []SlotID{1, 3}, res.Slots)
	_, err = d.AllocateBulk(context.Background(), Bulk{ID: 2, Requests: reqs(big, big)})
	assert.ErrorIs(t, err, ErrNoResourceAvailable, "larger than the cluster's capacity")
	require.NoError(t, d.Release(1))
	require.NoError(t, d.Release(3))
	mock.Add(time.Minute) // idle: both slots go back and are confirmed
	assert.ElementsMatch(t, []SlotID{1, 3}, []SlotID{<-adm.released, <-adm.released})
	st, err := d.Stats()
	require.NoError(t, err)
	assert.Equal(t, Stats{}, st)
	assert.Len(t, c.Available(), 3)
}

// A rejected duplicate Submit must not take over the waiter of the bulk
// it duplicates: the first caller still learns its outcome.
func TestDriverDuplicateSubmitKeepsTheFirstWaiter(t *testing.T) {
	d := NewDriver(New(Config{}), DriverConfig{Clock: clock.NewMock()})
	defer d.Close()
	first, err := d.Submit(Bulk{ID: 1, Requests: reqs(small)})
	require.NoError(t, err)
	_, err = d.Submit(Bulk{ID: 1, Requests: reqs(small)})
	require.ErrorIs(t, err, ErrDuplicateBulk)
	require.NoError(t, d.Offer(slot(7, small)))
	res := <-first
	require.NoError(t, res.Err)
	assert.Equal(t, []SlotID{7}, res.Slots)
}

// Cancel, SetCapacity and Deliver reach the pool through the loop.
func TestDriverCancelCapacityAndDeliver(t *testing.T) {
	d := NewDriver(New(Config{}), DriverConfig{Clock: clock.NewMock()})
	defer d.Close()

	waiting, err := d.Submit(Bulk{ID: 1, Requests: reqs(big)})
	require.NoError(t, err)
	require.NoError(t, d.Cancel(1))
	assert.ErrorIs(t, (<-waiting).Err, ErrBulkCanceled, "a canceled bulk's waiter is told")
	assert.ErrorIs(t, d.Cancel(99), ErrUnknownBulk)

	// A declared capacity makes a bulk that can never fit fail at once.
	require.NoError(t, d.SetCapacity([]resource.Count{{Profile: small, N: 1}}))
	_, err = d.AllocateBulk(context.Background(), Bulk{ID: 2, Requests: reqs(big)})
	assert.ErrorIs(t, err, ErrNoResourceAvailable)

	// Deliver applies admission messages: a grant offers its slots.
	ch, err := d.Submit(Bulk{ID: 3, Requests: reqs(small)})
	require.NoError(t, err)
	require.NoError(t, d.Deliver(Grant{Slots: []Slot{slot(5, small)}}))
	res := <-ch
	require.NoError(t, res.Err)
	assert.Equal(t, []SlotID{5}, res.Slots)
	assert.ErrorIs(t, d.Deliver(Revoke{Slot: 42, Reason: ReasonPreempted}), ErrUnknownSlot)
}
