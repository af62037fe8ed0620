package analysis

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestInOrderFirstError: the error reported is the lowest index's, even
// when a later index fails first; the later failure does not cancel the
// earlier run, and an index after the failure is cancelled.
func TestInOrderFirstError(t *testing.T) {
	laterFailed, lastStarted := make(chan struct{}), make(chan struct{})
	var cancelledLate error
	err := inOrder(context.Background(), 3, 3, func(ctx context.Context, i int) error {
		switch i {
		case 0:
			<-laterFailed // fail only after index 1 has failed
			if ctx.Err() != nil {
				return fmt.Errorf("index 0 cancelled: %w", ctx.Err())
			}
			return errors.New("index 0")
		case 1:
			<-lastStarted
			defer close(laterFailed)
			return errors.New("index 1")
		default:
			close(lastStarted)
			<-ctx.Done() // index 1's failure cancels the indices after it
			cancelledLate = ctx.Err()
			return ctx.Err()
		}
	})
	if err == nil || err.Error() != "index 0" {
		t.Errorf("got %v, want the error of index 0", err)
	}
	if !errors.Is(cancelledLate, context.Canceled) {
		t.Errorf("index 2: %v, want it cancelled", cancelledLate)
	}
}
