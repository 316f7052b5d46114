package notify

import "testing"

func TestWakeClosesOnlyItsKey(t *testing.T) {
	var k Keys
	a, stopA := k.Changed("a")
	b, stopB := k.Changed("b")
	defer stopB()
	k.Wake("a")
	select {
	case <-a:
	default:
		t.Error("a waiter of a was not woken")
	}
	select {
	case <-b:
		t.Error("a waiter of b was woken by a")
	default:
	}
	stopA() // after its wake-up: no double close
	again, stop := k.Changed("a")
	stop()
	if _, open := <-again; open {
		t.Error("stop left the channel open")
	}
}
