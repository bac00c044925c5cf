package shapepoly

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// markedBlock returns the fenced block right after the line "<!-- go_project_test: name -->"
// of bindings/go/README.md (the blocks tests/install/go_project_test.sh runs).
func markedBlock(t *testing.T, name string) string {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	marker := "<!-- go_project_test: " + name + " -->\n"
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("README.md has no block marked %q", name)
	}
	return fencedBlock(t, text[i+len(marker):], "```", "README.md block "+name)
}

// fencedBlock returns the body of the first block of text that opens with fence.
func fencedBlock(t *testing.T, text, fence, what string) string {
	start := strings.Index(text, fence)
	if start < 0 {
		t.Fatalf("%s: no %s block", what, fence)
	}
	text = text[start+len(fence):]
	if !strings.HasSuffix(fence, "\n") { // skip the rest of the fence line (its language)
		text = text[strings.Index(text, "\n")+1:]
	}
	end := strings.Index(text, "\n```")
	if end < 0 {
		t.Fatalf("%s: unterminated block", what)
	}
	return text[:end+1]
}

// topReadmeGoBlock returns the first ```go block of the top-level README's "## Go binding"
// section, or "" when that section shows none.
func topReadmeGoBlock(t *testing.T) string {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n## Go binding")
	if i < 0 {
		return ""
	}
	text = text[i+1:]
	if j := strings.Index(text, "\n## "); j >= 0 {
		text = text[:j+1]
	}
	if !strings.Contains(text, "\n```go\n") {
		return ""
	}
	return fencedBlock(t, text, "\n```go\n", "README.md's Go section")
}

// TestReadmeExample checks that the example of bindings/go/README.md (and the one of the
// top-level README's Go section, if it shows one) is Example (example_test.go) as a main
// program, then runs it as written in a module made from the README's go.mod stanza and
// compares the output.
func TestReadmeExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(src), "package shapepoly_test", "package main", 1)
	want = strings.Replace(want, "func Example() {", "func main() {", 1)
	block := markedBlock(t, "main.go")
	if block != want {
		t.Fatalf("bindings/go/README.md's example differs from example_test.go; it should be:\n%s", want)
	}
	if top := topReadmeGoBlock(t); top != "" && top != want {
		t.Fatalf("README.md's Go example differs from example_test.go; it should be:\n%s", want)
	}
	gomod := markedBlock(t, "go.mod")
	if !strings.Contains(gomod, "/path/to/libshapepoly/bindings/go") {
		t.Fatalf("the go.mod stanza does not replace with /path/to/libshapepoly/bindings/go:\n%s", gomod)
	}
	if testing.Short() {
		t.Skip("not running the example in -short mode")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	gomod = strings.ReplaceAll(gomod, "/path/to/libshapepoly", root)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "run", ".")
	cmd.Dir = dir
	// GOFLAGS empty: the stanza must be complete as written (no -mod=mod to patch go.mod).
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	var expected []string
	if i := strings.Index(block, "// Output:\n"); i >= 0 {
		for _, line := range strings.Split(block[i+len("// Output:\n"):], "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "//") {
				break
			}
			expected = append(expected, strings.TrimSpace(strings.TrimPrefix(line, "//")))
		}
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(expected, "\n") {
		t.Fatalf("output:\n%s\nwant:\n%s", got, strings.Join(expected, "\n"))
	}
}

// TestReadmeDataDependentExample: the README's block marked
// "<!-- go_example: ExampleTensor_BooleanMask -->" is the body of that example (which go test
// runs and checks the output of), one tab less indented.
func TestReadmeDataDependentExample(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	marker := "<!-- go_example: ExampleTensor_BooleanMask -->\n"
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatal("README.md has no block marked ExampleTensor_BooleanMask")
	}
	block := fencedBlock(t, text[i+len(marker):], "```", "README.md's data-dependent example")
	src, err := os.ReadFile("data_dependent_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	open := "func ExampleTensor_BooleanMask() {\n"
	start := strings.Index(code, open)
	if start < 0 {
		t.Fatal("data_dependent_example_test.go has no ExampleTensor_BooleanMask")
	}
	body := code[start+len(open):]
	body = body[:strings.Index(body, "\n}\n")+1]
	lines := strings.Split(body, "\n")
	for k, l := range lines {
		lines[k] = strings.TrimPrefix(l, "\t")
	}
	if want := strings.Join(lines, "\n"); block != want {
		t.Fatalf("README.md's data-dependent example differs from ExampleTensor_BooleanMask; it should be:\n%s", want)
	}
}
