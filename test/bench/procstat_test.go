package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// pid (comm with spaces) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	line := []byte("4242 (inplace run) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 12 0 100 0 0\n")
	got, err := parseStatCPU(line)
	if err != nil || got != 3250*time.Millisecond {
		t.Errorf("parseStatCPU = %v, %v; want 3.25s (250+75 ticks)", got, err)
	}
	if _, err := parseStatCPU([]byte("4242 (x) S 1")); err == nil {
		t.Error("a short line: want an error")
	}
	if d, err := cpuTime(os.Getpid()); err != nil || d < 0 {
		t.Errorf("cpuTime(self) = %v, %v", d, err)
	}
}

func TestParseStatusMemory(t *testing.T) {
	status := []byte("Name:\tinplace\nVmPeak:\t  900000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t   40960 kB\n" +
		"RssAnon:\t   30720 kB\nRssFile:\t    9216 kB\nRssShmem:\t    1024 kB\nThreads:\t12\n")
	got, err := parseStatusMemory(status)
	want := memory{RSS: 40 << 20, HWM: 80 << 20, Anon: 30 << 20, File: 9 << 20, Shmem: 1 << 20}
	if err != nil || got != want {
		t.Errorf("parseStatusMemory = %+v, %v; want %+v", got, err, want)
	}
	if _, err := parseStatusMemory([]byte("Name:\tx\n")); err == nil {
		t.Error("no VmRSS: want an error")
	}
	if m, err := memoryOf(os.Getpid()); err != nil || m.RSS <= 0 {
		t.Errorf("memoryOf(self) = %+v, %v", m, err)
	}
}

func TestParseSmapsFiles(t *testing.T) {
	smaps := []byte(`00400000-02000000 r-xp 00000000 08:01 1234 /bin/inplace
Size:              28672 kB
Rss:               20480 kB
02000000-04000000 r--p 01c00000 08:01 1234 /bin/inplace
Rss:               10240 kB
04000000-04100000 rw-p 00000000 00:00 0
Rss:                4096 kB
7f0000000000-7f0000100000 r-xp 00000000 08:01 99 /usr/lib/libc.so.6
Rss:                 512 kB
`)
	got := parseSmapsFiles(smaps)
	want := map[string]int64{"/bin/inplace": 30 << 20, "/usr/lib/libc.so.6": 512 << 10}
	if len(got) != len(want) || got["/bin/inplace"] != want["/bin/inplace"] || got["/usr/lib/libc.so.6"] != want["/usr/lib/libc.so.6"] {
		t.Errorf("parseSmapsFiles = %v; want %v (anonymous mappings left out)", got, want)
	}
}
