package analysis

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	target := Target{
		Namespace: "shop", Workload: "web", Kind: "Deployment",
		Canary:   []string{"web-7c9-b", "web-7c9-a"},
		Baseline: []string{"web-7c9-c", "web.old-1"},
		Version:  "1.1.0", PreviousVersion: "1.0.0",
		Image: "127.0.0.1:5000/app:1.1.0", PreviousImage: "127.0.0.1:5000/app:1.0.0",
	}
	q := func(text string) Query { return Query{Name: "q", Query: text} }
	for _, tc := range []struct {
		name     string
		query    Query
		target   Target
		args     map[string]string
		baseline bool
		want     string
		wantErr  string
	}{
		{name: "canary pods", query: q(`up{namespace="{{.Namespace}}",pod=~"{{.Pods}}"}`), target: target,
			want: `up{namespace="shop",pod=~"web-7c9-a|web-7c9-b"}`},
		{name: "baseline pods, a dot escaped", query: q(`up{pod=~"{{.Pods}}"}`), target: target, baseline: true,
			want: `up{pod=~"web-7c9-c|web\\.old-1"}`},
		{name: "both sides by name", query: q(`{{.CanaryPods}} {{.BaselinePods}}`), target: target,
			want: `web-7c9-a|web-7c9-b web-7c9-c|web\\.old-1`},
		{name: "versions, images, kind, args", query: q(`{{.Kind}}/{{.Workload}} {{.PreviousVersion}}->{{.Version}} {{.Image}} {{.PreviousImage}} {{.Args.job}}`),
			target: target, args: map[string]string{"job": "api"},
			want: `Deployment/web 1.0.0->1.1.0 127.0.0.1:5000/app:1.1.0 127.0.0.1:5000/app:1.0.0 api`},
		{name: "no baseline pods match nothing", query: q(`{{.Pods}}`), target: Target{Namespace: "a", Workload: "b", Canary: []string{"p"}}, baseline: true,
			want: `$^`},
		{name: "pod that is no DNS name", query: q(`{{.Pods}}`), target: Target{Namespace: "a", Workload: "b", Canary: []string{`x"}) or vector(1`}},
			wantErr: "render q: pod"},
		{name: "namespace that is no DNS name", query: q(`{{.Pods}}`), target: Target{Namespace: `a"`, Workload: "b"},
			wantErr: `name "a\""`},
		{name: "quote in a version", query: q(`{{.Version}}`), target: Target{Namespace: "a", Workload: "b", Version: `1"`},
			wantErr: "quotes"},
		{name: "missing arg", query: q(`{{.Args.nope}}`), target: target, wantErr: `no entry for key "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render(tc.query, tc.args, tc.target, tc.baseline)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
