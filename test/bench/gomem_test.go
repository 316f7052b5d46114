package main

import (
	"strings"
	"testing"
)

func TestParseGoMemory(t *testing.T) {
	const text = `# HELP go_memstats_heap_inuse_bytes Number of heap bytes that are in use.
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 1.048576e+08
go_memstats_heap_idle_bytes 6.291456e+07
go_memstats_heap_released_bytes 4.194304e+07
go_memstats_heap_objects 123456
go_memstats_stack_inuse_bytes 4.194304e+06
go_memstats_sys_bytes 2.097152e+08
go_goroutines 321
`
	g, err := parseGoMemory(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := goMemory{HeapInUseMiB: 100, HeapIdleMiB: 20, StackMiB: 4, SysMiB: 200, HeapObjects: 123456}
	if g != want {
		t.Errorf("parseGoMemory = %+v, want %+v", g, want)
	}
	if w := g.where(150); !strings.Contains(w, "heap in use 100 MiB") || !strings.Contains(w, "26 MiB") {
		t.Errorf("where = %q: want the heap and the rest (150-100-20-4 = 26 MiB)", w)
	}
	if _, err := parseGoMemory(strings.NewReader("go_goroutines 3\n")); err == nil {
		t.Error("no memstats: want an error")
	}
}
