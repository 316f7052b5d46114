package watcher

import (
	"testing"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// A pod's state is parsed again whenever its annotation changes, and
// only then; another pod (another UID) has its own.
func TestStatesFollowTheAnnotation(t *testing.T) {
	const succeeded = `{"upgradeID":"up-1","phase":"Succeeded","containers":[{"name":"app","previousImage":"a:1","targetImage":"a:2"}]}`
	var s states
	a := s.parse(pod("10", active, 0, "containerd://a"))
	if again := s.parse(pod("11", active, 1, "containerd://b")); again != a {
		t.Error("the same annotation of the same pod was parsed again")
	}
	if got := s.parse(pod("12", succeeded, 1, "containerd://b")); got == a || got.Phase != inplace.Phase("Succeeded") {
		t.Errorf("a changed annotation reads %+v, want phase Succeeded", got)
	}
	other := pod("13", active, 0, "containerd://c")
	other.UID = "uid-2"
	if got := s.parse(other); got == a || got == nil || got.Phase != a.Phase {
		t.Errorf("another pod of the same annotation reads %+v, want a state of its own", got)
	}
	if got := s.parse(pod("14", "", 1, "containerd://b")); got != nil {
		t.Errorf("a pod without the annotation reads %+v", got)
	}
	if got := s.parse(pod("15", "{", 1, "containerd://b")); got != nil {
		t.Errorf("an annotation that is not a state reads %+v", got)
	}
}
