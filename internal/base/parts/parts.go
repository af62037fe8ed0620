package parts

import "errors"

// Stream decodes parts ahead of its consumer, several at once, and hands
// them over in order. At most ahead parts are decoded or decoding beyond
// the one being consumed, which bounds memory.
type Stream[T any] struct {
	stop    <-chan struct{}
	results []chan result[T]
	tokens  chan struct{}
	free    chan T // consumed parts, for decoders to reuse their memory
	next    int
}

type result[T any] struct {
	v   T
	err error
}

// ErrStopped ends a decoder whose consumer has gone: Pull returns it once
// stop is closed, and decoders that poll Stopped return it.
var ErrStopped = errors.New("stopped")

// Start decodes parts with decode, at most ahead at once, in the
// background; up to free consumed parts wait for reuse (decode gets one as
// reuse, else T's zero value). Closing stop ends it: no further part starts.
func Start[P, T any](stop <-chan struct{}, parts []P, ahead, free int, decode func(p P, reuse T) (T, error)) *Stream[T] {
	s := &Stream[T]{stop: stop, results: make([]chan result[T], len(parts)), tokens: make(chan struct{}, ahead), free: make(chan T, free)}
	for i := range s.results {
		s.results[i] = make(chan result[T], 1)
	}
	go func() {
		for i, p := range parts {
			select {
			case s.tokens <- struct{}{}:
			case <-stop:
				return
			}
			var reuse T
			select {
			case reuse = <-s.free:
			default:
			}
			go func() {
				v, err := decode(p, reuse)
				s.results[i] <- result[T]{v, err}
			}()
		}
	}()
	return s
}

// Pull returns the next part and its decoder's error; ok is false after
// the last. Once stop is closed it may return ErrStopped instead (the part
// may never be decoded).
func (s *Stream[T]) Pull() (v T, ok bool, err error) {
	if s.next >= len(s.results) {
		return v, false, nil
	}
	var r result[T]
	select {
	case r = <-s.results[s.next]:
	case <-s.stop:
		return v, true, ErrStopped
	}
	s.results[s.next] = nil
	s.next++
	<-s.tokens
	return r.v, true, r.err
}

// Give hands a consumed part back for a later decoder to reuse; it is
// dropped when the free list is full.
func (s *Stream[T]) Give(v T) {
	select {
	case s.free <- v:
	default:
	}
}

// Stopped reports whether stop is closed; decoders poll it between rows
// and return ErrStopped.
func Stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
