package main

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// kubeletLevel is the real kubelets' log level in the benchmark: at 2 the
// kubelet logs each pod update it receives, each PLEG event, each
// container it stops and each probe result change (what the timeline
// reads); it changes nothing the kubelet does.
const kubeletLevel = 2

// kubeletLine is the part of a kubelet log line (klog's text format) the
// timeline reads: its time and message, and the keys named below.
var (
	klogHead  = regexp.MustCompile(`^[IWE](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ \S+\] "([^"]*)"(.*)$`)
	klogPod   = regexp.MustCompile(`\bpod="([^"]+)"`)
	klogPods  = regexp.MustCompile(`\bpods=\[([^\]]*)\]`)
	klogKey   = regexp.MustCompile(`\b(containerName|gracePeriod|probe|status)="?([^" ]*)"?`)
	klogEvent = regexp.MustCompile(`"Type":"(\w+)","Data":"?([0-9a-f]{0,6})`)
)

// kubeletMoments are the moments the kubelet's log at path names for the
// pods of ns between from and to: each update it received, each container
// it began to stop (after any preStop hook), each PLEG event (what its
// relist found), each probe result that changed.
func kubeletMoments(path, ns string, pods map[string]bool, from, to time.Time) []moment {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []moment
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		for _, m := range kubeletLine(sc.Text(), ns, pods, from.Year()) {
			if !m.At.Before(from) && !m.At.After(to) {
				out = append(out, m)
			}
		}
	}
	return out
}

// kubeletLine reads one line of the kubelet's log: the moments it names
// for the pods of ns (a line may name several pods).
func kubeletLine(line, ns string, pods map[string]bool, year int) []moment {
	h := klogHead.FindStringSubmatch(line)
	if h == nil {
		return nil
	}
	at, err := time.ParseInLocation("2006 0102 15:04:05.000000", strconv.Itoa(year)+" "+h[1], time.Local)
	if err != nil {
		return nil
	}
	msg, rest := h[2], h[3]
	what := ""
	keys := map[string]string{}
	for _, k := range klogKey.FindAllStringSubmatch(rest, -1) {
		keys[k[1]] = k[2]
	}
	switch msg {
	case "SyncLoop ADD", "SyncLoop UPDATE", "SyncLoop DELETE", "SyncLoop REMOVE":
		what = strings.ToLower(strings.TrimPrefix(msg, "SyncLoop ")) + " received"
	case "SyncLoop (PLEG): event for pod":
		e := klogEvent.FindStringSubmatch(rest)
		if e == nil {
			return nil
		}
		what = "PLEG " + e[1] + " " + e[2]
	case "Killing container with a grace period":
		what = "stopping " + keys["containerName"] + " (preStop done; SIGTERM, grace " + keys["gracePeriod"] + " s)"
	case "SyncLoop (probe)":
		what = keys["probe"] + " probe " + keys["status"]
	default:
		return nil
	}
	var names []string
	if p := klogPod.FindStringSubmatch(rest); p != nil {
		names = append(names, p[1])
	}
	if p := klogPods.FindStringSubmatch(rest); p != nil {
		for _, n := range strings.Split(p[1], ",") {
			names = append(names, strings.Trim(n, `" `))
		}
	}
	var out []moment
	for _, n := range names {
		pod, ok := strings.CutPrefix(n, ns+"/")
		if ok && pods[pod] {
			out = append(out, moment{At: at, Pod: pod, Actor: actorKubelet, What: what})
		}
	}
	return out
}
