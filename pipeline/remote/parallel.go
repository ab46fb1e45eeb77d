package remote

import (
	"context"
	"errors"
	"sync"
)

// parallel calls fn for every item on at most jobs goroutines. The first
// failure stops the items not yet started (and cancels the context fn
// gets); the error returned is that of the lowest-numbered item that
// failed of itself (not because that failure cancelled it), so that the
// message does not depend on scheduling; ctx's error if ctx was
// cancelled.
func parallel[T any](parent context.Context, jobs int, items []T, fn func(ctx context.Context, i int, item T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	errs := make([]error, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(jobs, len(items))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i, items[i]); err != nil {
					errs[i] = err
					cancel()
				}
			}
		}()
	}
	for i := range items {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := parent.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
