package keylock_test

import (
	"sync"
	"testing"

	"github.com/inplace-dev/inplace/pkg/bus/keylock"
)

// TestOneAtATimePerKey: holders of one key never overlap, and the set is
// empty once every holder released.
func TestOneAtATimePerKey(t *testing.T) {
	var l keylock.Locks
	var wg sync.WaitGroup
	inside := map[string]int{}
	var mu sync.Mutex
	for i := range 200 {
		key := []string{"a", "b", "c"}[i%3]
		wg.Go(func() {
			unlock := l.Lock(key)
			defer unlock()
			mu.Lock()
			inside[key]++
			n := inside[key]
			mu.Unlock()
			if n != 1 {
				t.Errorf("key %s: %d holders at once, want 1", key, n)
			}
			mu.Lock()
			inside[key]--
			mu.Unlock()
		})
	}
	wg.Wait()
	if got := l.Len(); got != 0 {
		t.Errorf("Len after all released = %d, want 0", got)
	}
}

// TestOtherKeysRun: a held key blocks neither another key nor its release.
func TestOtherKeysRun(t *testing.T) {
	var l keylock.Locks
	unlockA := l.Lock("a")
	done := make(chan struct{})
	go func() {
		l.Lock("b")()
		close(done)
	}()
	<-done // would hang if "b" waited for "a"
	if got := l.Len(); got != 1 {
		t.Errorf("Len with a held = %d, want 1", got)
	}
	unlockA()
	if got := l.Len(); got != 0 {
		t.Errorf("Len after release = %d, want 0", got)
	}
}

// TestWaiterGetsKey: a second Lock of a held key waits for its release.
func TestWaiterGetsKey(t *testing.T) {
	var l keylock.Locks
	unlock := l.Lock("a")
	got := make(chan struct{})
	go func() {
		l.Lock("a")()
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second Lock of a held key returned before release")
	default:
	}
	unlock()
	<-got
}

// TestTryLockDoesNotWait: a held key is refused at once and left as it
// was; a free key is held, and the set is empty once it is released.
func TestTryLockDoesNotWait(t *testing.T) {
	var l keylock.Locks
	unlockA := l.Lock("a")
	if _, ok := l.TryLock("a"); ok {
		t.Fatal("TryLock held a key someone holds")
	}
	if got := l.Len(); got != 1 {
		t.Errorf("Len after a refused TryLock = %d, want 1", got)
	}
	unlockB, ok := l.TryLock("b")
	if !ok {
		t.Fatal("TryLock refused a free key")
	}
	if _, ok := l.TryLock("b"); ok {
		t.Error("TryLock held a key TryLock holds")
	}
	unlockA()
	unlockB()
	if got := l.Len(); got != 0 {
		t.Errorf("Len after all released = %d, want 0", got)
	}
	l.Lock("a")() // released by TryLock's refusal: not held
}
