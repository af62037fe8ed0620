package parts

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamOrderAndBound: parts come back in the order given however their
// decoders finish, with no more than ahead decoding at once beyond the one
// being consumed, and an error arrives with its own part.
func TestStreamOrderAndBound(t *testing.T) {
	const n, ahead = 50, 3
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	bad := errors.New("part 37")
	var running, most atomic.Int32
	stop := make(chan struct{})
	defer close(stop)
	s := Start(stop, parts, ahead, 2, func(p int, reuse []int) ([]int, error) {
		r := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if r <= m || most.CompareAndSwap(m, r) {
				break
			}
		}
		time.Sleep(time.Duration((n-p)%7) * 100 * time.Microsecond) // later parts finish first
		if p == 37 {
			return nil, bad
		}
		return append(reuse[:0], p), nil
	})
	for i := range n {
		v, ok, err := s.Pull()
		if !ok {
			t.Fatalf("part %d: stream ended early", i)
		}
		if i == 37 {
			if !errors.Is(err, bad) {
				t.Fatalf("part 37: err %v, want its decoder's", err)
			}
			continue
		}
		if err != nil || len(v) != 1 || v[0] != i {
			t.Fatalf("part %d: got %v, %v", i, v, err)
		}
		s.Give(v)
	}
	if _, ok, err := s.Pull(); ok || err != nil {
		t.Fatalf("after the last part: ok %v err %v", ok, err)
	}
	if m := most.Load(); m > ahead {
		t.Errorf("%d decoders at once, want at most %d", m, ahead)
	}
}

// TestStreamStop: once stop is closed Pull says ErrStopped rather than wait
// for a part that will never be decoded, and Stopped sees it.
func TestStreamStop(t *testing.T) {
	stop := make(chan struct{})
	block := make(chan struct{})
	defer close(block)
	s := Start(stop, []int{0, 1}, 1, 0, func(int, struct{}) (struct{}, error) {
		<-block
		return struct{}{}, nil
	})
	if Stopped(stop) {
		t.Fatal("Stopped before close")
	}
	close(stop)
	if !Stopped(stop) {
		t.Fatal("not Stopped after close")
	}
	if _, ok, err := s.Pull(); !ok || !errors.Is(err, ErrStopped) {
		t.Fatalf("Pull after stop: ok %v err %v, want ErrStopped", ok, err)
	}
}
