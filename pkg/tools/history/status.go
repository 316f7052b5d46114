package history

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Summary is one workload's rollout as `inplace status` shows it.
type Summary struct {
	Workload   string        `json:"workload"`
	UpgradeID  string        `json:"upgradeID"`
	Phase      rollout.Phase `json:"phase"`
	Target     string        `json:"target"`
	Wave       int           `json:"wave"`
	Pods       int           `json:"pods"`
	Succeeded  int           `json:"succeeded"`
	Current    int           `json:"current"`
	InFlight   int           `json:"inFlight"`
	Pending    int           `json:"pending"`
	Failed     int           `json:"failed"`
	RolledBack int           `json:"rolledBack"`
	// Deleted are pods deleted or replaced in flight.
	Deleted int `json:"deleted,omitempty"`
	// Template is what became of the template once the rollout completed
	// (events.TemplateSynced, NotSynced, LeftToGitOps, ...), with its reason.
	Template       string    `json:"template,omitempty"`
	TemplateReason string    `json:"templateReason,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	Message        string    `json:"message,omitempty"`
	StartedAt      time.Time `json:"startedAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
	// ExpiresAt is when a finished restart request leaves the default
	// listing (its ttlSecondsAfterFinished).
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// Analysis is where the rollout's canary analysis stands.
	Analysis *AnalysisSummary `json:"analysis,omitempty"`
}

// Done is how many pods run the target: upgraded, or needing nothing.
func (s Summary) Done() int { return s.Succeeded + s.Current }

// Summarize counts r's pods by state.
func Summarize(r rollout.Rollout) Summary {
	s := Summary{
		Workload: r.Workload.String(), UpgradeID: r.UpgradeID, Phase: r.Phase, Target: r.Target(),
		Wave: r.Wave, Pods: len(r.Pods) + len(r.Gone), Reason: r.Reason, Message: r.Message,
		StartedAt: r.StartedAt, UpdatedAt: r.UpdatedAt, Analysis: summarizeAnalysis(r.Analysis),
	}
	if x := r.Restart; x != nil {
		s.UpgradeID = x.RequestID
		if x.Strategy.TTLSecondsAfterFinished > 0 && !x.FinishedAt.IsZero() {
			s.ExpiresAt = x.FinishedAt.Add(time.Duration(x.Strategy.TTLSecondsAfterFinished) * time.Second)
		}
	}
	if a := r.Approval; a != nil && r.Phase == rollout.AwaitingApproval {
		s.Reason, s.Message = "ApprovalRequired", fmt.Sprintf("%s; until %s: inplace approve %s (or reject)",
			a.Why, a.ExpiresAt.UTC().Format(time.RFC3339), r.UpgradeID)
	}
	if f := r.Refusal; f != nil && !r.Phase.Finished() {
		s.Message = strings.TrimPrefix(s.Message+"; ", "; ") + "a later push " + f.Target + " was refused: " + f.Message
		if s.Reason == "" {
			s.Reason = f.Reason
		}
	}
	if r.Sync != nil && r.Phase == rollout.Completed {
		s.Template, s.TemplateReason = r.Sync.Result, r.Sync.Reason
		if s.Reason == "" && (s.Template == events.TemplateNotSynced || s.Template == events.TemplateLeftToGitOps) {
			s.Reason, s.Message = "Template"+s.Template, r.Sync.Note
		}
	}
	for _, p := range append(slices.Collect(maps.Values(r.Pods)), r.Gone...) {
		switch p.State {
		case rollout.Succeeded:
			s.Succeeded++
		case rollout.Current:
			s.Current++
		case rollout.InFlight:
			s.InFlight++
		case rollout.Pending:
			s.Pending++
		case rollout.Failed:
			s.Failed++
		case rollout.RolledBack:
			s.RolledBack++
		case rollout.Deleted:
			s.Deleted++
		}
	}
	return s
}

// SelectStatus keeps the rollouts not yet completed and, unless all, only
// those completed within recent of now; in flight first, then the most
// recently updated.
func SelectStatus(in []Summary, all bool, recent time.Duration, now time.Time) []Summary {
	var out []Summary
	for _, s := range in {
		if !all && !s.ExpiresAt.IsZero() && now.After(s.ExpiresAt) {
			continue // a restart request past its ttlSecondsAfterFinished
		}
		if all || !s.Phase.Finished() || now.Sub(s.UpdatedAt) <= recent {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Phase.Finished() != b.Phase.Finished() {
			return !a.Phase.Finished()
		}
		if !a.UpdatedAt.Equal(b.UpdatedAt) {
			return a.UpdatedAt.After(b.UpdatedAt)
		}
		return a.Workload < b.Workload
	})
	return out
}

// Bar is a progress bar of done out of total, width cells wide, with the
// count: "[#######---] 7/10".
func Bar(done, total, width int) string {
	filled := 0
	if total > 0 {
		filled = min(width, done*width/total)
	}
	return fmt.Sprintf("[%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat("-", width-filled), done, total)
}

// WriteStatus writes the rollouts as a table, ages relative to now.
func WriteStatus(w io.Writer, rows []Summary, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tPHASE\tPROGRESS\tSUCCEEDED\tIN-FLIGHT\tFAILED\tROLLED-BACK\tDELETED\tAGE\tUPGRADE\tTARGET\tTEMPLATE\tREASON")
	for _, s := range rows {
		reason := s.Reason
		if s.Message != "" {
			reason = strings.TrimPrefix(reason+": "+s.Message, ": ")
		}
		template := s.Template
		if template == "" {
			template = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n",
			s.Workload, s.Phase, Bar(s.Done(), s.Pods-s.Deleted, 10), s.Succeeded, s.InFlight, s.Failed, s.RolledBack,
			s.Deleted, Age(now.Sub(s.StartedAt)), s.UpgradeID, Abbrev(s.Target), template, reason)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	writeAnalyses(w, rows)
	return nil
}

// Age is d rounded the way kubectl shows ages: 45s, 12m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
