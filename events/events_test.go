package events

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

func TestEveryTypeRoundTrips(t *testing.T) {
	s := samples()
	for _, typ := range Types {
		t.Run(Short(typ), func(t *testing.T) {
			data, ok := s[typ]
			if !ok {
				t.Fatalf("no sample for %s", typ)
			}
			e, err := New("id-1", typ, Source("test"), "shop/web-0", data)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			wire, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var got cloudevents.Event
			if err := json.Unmarshal(wire, &got); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if err := Check(got); err != nil {
				t.Fatalf("Check: %v", err)
			}
			back := decodeLike(t, got, data)
			if diff := cmp.Diff(data, back); diff != "" {
				t.Errorf("data round trip (-want +got):\n%s", diff)
			}
			if got.ID() != "id-1" || got.Type() != typ || got.Subject() != "shop/web-0" {
				t.Errorf("attributes = %s %s %s", got.ID(), got.Type(), got.Subject())
			}
		})
	}
}

// decodeLike decodes e's data with As into the type of want.
func decodeLike(t *testing.T, e cloudevents.Event, want any) any {
	t.Helper()
	var got any
	var err error
	switch want.(type) {
	case ImagePushedData:
		got, err = As[ImagePushedData](e)
	case UpgradeRequestData:
		got, err = As[UpgradeRequestData](e)
	case Plan:
		got, err = As[Plan](e)
	case PrepulledData:
		got, err = As[PrepulledData](e)
	case PatchedData:
		got, err = As[PatchedData](e)
	case PodUpdatedData:
		got, err = As[PodUpdatedData](e)
	case ContainerRestartedData:
		got, err = As[ContainerRestartedData](e)
	case RestartRequestData:
		got, err = As[RestartRequestData](e)
	case RestartResultData:
		got, err = As[RestartResultData](e)
	case ResizeRequestData:
		got, err = As[ResizeRequestData](e)
	case ResizeResultData:
		got, err = As[ResizeResultData](e)
	case AnalysisData:
		got, err = As[AnalysisData](e)
	case OutcomeData:
		got, err = As[OutcomeData](e)
	case RolloutData:
		got, err = As[RolloutData](e)
	case ResumeData:
		got, err = As[ResumeData](e)
	case ApprovalData:
		got, err = As[ApprovalData](e)
	case DecisionData:
		got, err = As[DecisionData](e)
	default:
		t.Fatalf("no decoder for %s", reflect.TypeOf(want))
	}
	if err != nil {
		t.Fatalf("As: %v", err)
	}
	return got
}

func TestShortLong(t *testing.T) {
	for _, typ := range Types {
		if got := Long(Short(typ)); got != typ {
			t.Errorf("Long(Short(%q)) = %q", typ, got)
		}
	}
	if got := Short(ImagePushed); got != "image.pushed" {
		t.Errorf("Short = %q; want image.pushed", got)
	}
	if got := Short("com.example.x"); got != "com.example.x" {
		t.Errorf("Short(foreign) = %q", got)
	}
}

func TestDeriveIsDeterministic(t *testing.T) {
	in, err := New("in-1", ImagePushed, Source("receiver"), "x", samples()[ImagePushed])
	if err != nil {
		t.Fatal(err)
	}
	in.SetExtension(ExtUpgradeID, "u-1")
	in.SetExtension(ExtReplay, "r-9")
	a, err := Derive(in, UpgradePlanned, Source("compute-spec"), "shop/web-0", "shop/web-0", samplePlan())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Derive(in, UpgradePlanned, Source("compute-spec"), "shop/web-0", "shop/web-0", samplePlan())
	c, _ := Derive(in, UpgradePlanned, Source("compute-spec"), "shop/web-1", "shop/web-1", samplePlan())
	if a.ID() != b.ID() {
		t.Errorf("same input and key gave %s and %s", a.ID(), b.ID())
	}
	if a.ID() == c.ID() {
		t.Errorf("different keys gave the same id %s", a.ID())
	}
	if UpgradeID(a) != "u-1" || Ext(a, ExtReplay) != "r-9" {
		t.Errorf("extensions not carried: upgradeid=%q replay=%q", UpgradeID(a), Ext(a, ExtReplay))
	}
	if TraceID(Ext(a, ExtTraceParent)) != TraceID(Ext(in, ExtTraceParent)) || TraceID(Ext(a, ExtTraceParent)) == "" {
		t.Errorf("trace not continued: in %q out %q", Ext(in, ExtTraceParent), Ext(a, ExtTraceParent))
	}
	if Ext(a, ExtTraceParent) == Ext(in, ExtTraceParent) {
		t.Errorf("child has the parent's span")
	}
}

func TestReplayedInputsGetOutputsOfTheirOwn(t *testing.T) {
	in, _ := New("in-1", ImagePushed, Source("receiver"), "x", samples()[ImagePushed])
	id := DeriveID("u-1/uid-1", UpgradePlanned, "")
	orig, _ := Follow(in, id, UpgradePlanned, Source("compute-spec"), "s", samplePlan())
	in.SetExtension(ExtReplay, "r-1")
	replayed, _ := Follow(in, id, UpgradePlanned, Source("compute-spec"), "s", samplePlan())
	in.SetExtension(ExtReplay, "r-2")
	other, _ := Follow(in, id, UpgradePlanned, Source("compute-spec"), "s", samplePlan())
	if orig.ID() != id || replayed.ID() == id || replayed.ID() == other.ID() {
		t.Errorf("ids: original %s replayed %s other replay %s", orig.ID(), replayed.ID(), other.ID())
	}
	if Ext(replayed, ExtReplay) != "r-1" {
		t.Errorf("replay marker not carried")
	}
}

func TestValidationNamesTheField(t *testing.T) {
	plan := samplePlan()
	noUID := plan
	noUID.Pod.UID = ""
	noContainers := plan
	noContainers.Containers = nil
	badDigest := plan
	badDigest.Containers = []ContainerPlan{{Name: "app", FromImage: "a", ToImage: "b", ToDigest: "sha256:xyz"}}
	badKind := plan
	badKind.Owner.Kind = "CronJob"
	img := ImagePushedData{Registry: "r", Repository: "a", Tag: "1", Origin: "manual"}
	web := ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	tests := []struct {
		name      string
		typ       string
		data      any
		wantField string
	}{
		{"pushed without repository", ImagePushed, ImagePushedData{Registry: "r", Tag: "1", Origin: "x"}, "data.repository"},
		{"pushed without tag or digest", ImagePushed, ImagePushedData{Registry: "r", Repository: "a", Origin: "x"}, "data.tag"},
		{"pushed with a bad digest", ImagePushed, ImagePushedData{Registry: "r", Repository: "a", Digest: "md5:1", Origin: "x"}, "data.digest"},
		{"a request of no workload", UpgradeRequested, UpgradeRequestData{ImagePushedData: img, AllowOlder: true}, "data.target"},
		{"a request of a bad workload", UpgradeRequested, UpgradeRequestData{ImagePushedData: img, Target: &ObjectRef{Kind: "Job", Namespace: "shop", Name: "x"}}, "data.target.kind"},
		{"a request of no image", UpgradeRequested, UpgradeRequestData{ImagePushedData: ImagePushedData{Registry: "r", Repository: "a", Origin: "manual"}, Target: &web}, "data.tag"},
		{"a request naming a container twice", UpgradeRequested, UpgradeRequestData{ImagePushedData: img, Target: &web, Containers: []string{"app", "app"}}, "data.containers[1]"},
		{"an undo that does not go back", UpgradeRequested, UpgradeRequestData{ImagePushedData: img, Target: &web, Undo: "u-1"}, "data.undo"},
		{"plan without pod uid", UpgradePlanned, noUID, "data.pod.uid"},
		{"plan without containers", UpgradePlanned, noContainers, "data.containers"},
		{"plan with a bad digest", UpgradePlanned, badDigest, "data.containers[0].toDigest"},
		{"plan with an unknown owner kind", UpgradePlanned, badKind, "data.owner.kind"},
		{"outcome without outcome", UpgradeSucceeded, OutcomeData{Plan: plan}, "data.outcome"},
		{"patched without resourceVersion", PodPatched, PatchedData{Plan: plan}, "data.resourceVersion"},
		{"wrong JSON type", UpgradePlanned, map[string]any{"wave": "two"}, "data.wave"},
		{"no data", UpgradePlanned, nil, "data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := cloudevents.NewEvent()
			e.SetID("1")
			e.SetType(tt.typ)
			e.SetSource("/t")
			if tt.data != nil {
				if err := e.SetData(cloudevents.ApplicationJSON, tt.data); err != nil {
					t.Fatal(err)
				}
			}
			err := Check(e)
			if err == nil {
				t.Fatal("Check accepted a malformed event")
			}
			if !errors.Is(err, settle.ErrPermanent) {
				t.Errorf("error %v is not permanent", err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField {
				t.Errorf("error %v names field %v; want %q", err, fe, tt.wantField)
			}
		})
	}
}

func TestCheckRejectsUnknownTypesAndBadAttributes(t *testing.T) {
	e := cloudevents.NewEvent()
	e.SetID("1")
	e.SetType("com.example.unknown")
	e.SetSource("/t")
	if err := Check(e); err == nil || !strings.Contains(err.Error(), "type") {
		t.Errorf("unknown type: err = %v", err)
	}
	e.SetType(ImagePushed)
	e.SetSource("")
	if err := Check(e); err == nil || !errors.Is(err, settle.ErrPermanent) {
		t.Errorf("missing source: err = %v", err)
	}
}

// OperatorFields names what only an upgrade.requested may carry, in any
// letter case and whatever its value; nothing else.
func TestOperatorFields(t *testing.T) {
	tests := []struct {
		data string
		want []string
	}{
		{`{"registry":"r","repository":"a","tag":"1","origin":"distribution"}`, nil},
		{`{"registry":"r","target":{"kind":"Deployment"},"allowOlder":true}`, []string{"data.target", "data.allowOlder"}},
		{`{"Containers":["app"],"UNDO":"u-1","allowolder":false}`, []string{"data.containers", "data.allowOlder", "data.undo"}},
		{`{"target":null}`, []string{"data.target"}},
		{`[1,2]`, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, OperatorFields([]byte(tt.data))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.data, diff)
		}
	}
}
