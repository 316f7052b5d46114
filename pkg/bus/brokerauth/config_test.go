package brokerauth

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromEnv(t *testing.T) {
	sa := "system:serviceaccount:inplace-system:inplace-verify-oidc-eventing.knative.dev-trigger"
	tests := []struct {
		name    string
		cfg     map[string]string
		want    Config
		on      bool
		wantErr string
	}{
		{name: "off", cfg: map[string]string{}},
		{name: "audience only", cfg: map[string]string{AudienceKey: "inplace.dev/verify"}, on: true,
			want: Config{Audience: "inplace.dev/verify"}},
		{name: "subjects and issuer", on: true,
			cfg:  map[string]string{AudienceKey: " a ", SubjectsKey: sa + ", ,system:serviceaccount:x:y", IssuerKey: "https://kubernetes.default.svc"},
			want: Config{Audience: "a", Subjects: []string{sa, "system:serviceaccount:x:y"}, Issuer: "https://kubernetes.default.svc"}},
		{name: "subjects without audience", cfg: map[string]string{SubjectsKey: sa}, wantErr: "without " + AudienceKey},
		{name: "issuer without audience", cfg: map[string]string{IssuerKey: "https://x"}, wantErr: "without " + AudienceKey},
		{name: "a subject that is no ServiceAccount", cfg: map[string]string{AudienceKey: "a", SubjectsKey: "alice"}, wantErr: `"alice" is not system:serviceaccount`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, on, err := FromEnv(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if on != tt.on {
				t.Errorf("on = %v, want %v", on, tt.on)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}
