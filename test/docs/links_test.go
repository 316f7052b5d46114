package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// maxREADME is the most README.md may weigh: a front page, the rest under docs/.
const maxREADME = 12 * 1024

// TestREADMEIsAFrontPage: README.md stays under 12 KiB.
func TestREADMEIsAFrontPage(t *testing.T) {
	fi, err := os.Stat(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxREADME {
		t.Errorf("README.md is %d bytes, more than %d: move the detail to docs/ and link it", fi.Size(), maxREADME)
	}
}

// markdownFiles are the documents whose links must resolve.
func markdownFiles(t *testing.T, dir string) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", filepath.Join("test", "README.md")}
	docs, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(dir, d)
		files = append(files, rel)
	}
	return files
}

// TestLinksResolve: every relative link of README.md, CONTRIBUTING.md,
// test/README.md and docs/*.md names a file of the repository, and every
// anchor a heading of the document it points to.
func TestLinksResolve(t *testing.T) {
	dir := root(t)
	for _, f := range markdownFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			if err := resolve(dir, f, l); err != "" {
				t.Errorf("%s: link %q: %s", f, l, err)
			}
		}
	}
}

// resolve says what is wrong with link in the document from, "" if nothing.
func resolve(dir, from, link string) string {
	if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(link) {
		return "" // a URL: not checked here
	}
	path, anchor, _ := strings.Cut(link, "#")
	target := filepath.Join(dir, from)
	if path != "" {
		target = filepath.Join(dir, filepath.Dir(from), filepath.FromSlash(path))
		if rel, err := filepath.Rel(dir, target); err != nil || strings.HasPrefix(rel, "..") {
			return "points outside the repository"
		}
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "no such file"
	}
	if anchor == "" {
		return ""
	}
	if fi.IsDir() || !strings.HasSuffix(target, ".md") {
		return "an anchor into something that is not a Markdown file"
	}
	b, err := os.ReadFile(target)
	if err != nil {
		return err.Error()
	}
	if !anchors(string(b))[anchor] {
		return "no heading has the anchor #" + anchor
	}
	return ""
}

var (
	reFence    = regexp.MustCompile("(?ms)^ {0,3}```.*?^ {0,3}```[^\n]*$")
	reCodeSpan = regexp.MustCompile("`[^`\n]*`")
	reLink     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reHeading  = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	reHTMLID   = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
)

// prose is the document without fenced code blocks and code spans.
func prose(doc string) string {
	doc = reFence.ReplaceAllString(doc, "")
	return reCodeSpan.ReplaceAllString(doc, "")
}

// links are the targets of the inline links of doc, outside code.
func links(doc string) []string {
	var out []string
	for _, m := range reLink.FindAllStringSubmatch(prose(doc), -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors are the anchors GitHub gives the headings of doc (and any
// explicit <a name> or <a id>).
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, m := range reHeading.FindAllStringSubmatch(reFence.ReplaceAllString(doc, ""), -1) {
		a := anchorOf(m[1])
		if n := count[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	for _, m := range reHTMLID.FindAllStringSubmatch(doc, -1) {
		out[m[1]] = true
	}
	return out
}

// anchorOf is GitHub's anchor of a heading: its text lower-cased, links
// and code marks dropped, punctuation but hyphens and underscores removed,
// spaces made hyphens.
func anchorOf(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
