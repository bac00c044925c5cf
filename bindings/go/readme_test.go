package shapepoly

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeGoBlock returns the first ```go block of the README's "## Go binding" section.
func readmeGoBlock(t *testing.T) string {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n## Go binding")
	if i < 0 {
		t.Fatal("README.md has no '## Go binding' section")
	}
	text = text[i:]
	start := strings.Index(text, "\n```go\n")
	if start < 0 {
		t.Fatal("the Go section has no ```go block")
	}
	text = text[start+len("\n```go\n"):]
	end := strings.Index(text, "\n```")
	if end < 0 {
		t.Fatal("unterminated ```go block")
	}
	return text[:end+1]
}

// TestReadmeExample checks that the README's Go example is Example (example_test.go) as a
// main program, then runs it as written in a module of its own and compares the output.
func TestReadmeExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(src), "package shapepoly_test", "package main", 1)
	want = strings.Replace(want, "func Example() {", "func main() {", 1)
	block := readmeGoBlock(t)
	if block != want {
		t.Fatalf("README.md's Go example differs from example_test.go; it should be:\n%s", want)
	}
	if testing.Short() {
		t.Skip("not running the example in -short mode")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	here, _ := filepath.Abs(".")
	dir := t.TempDir()
	gomod := "module readme\n\ngo 1.21\n\nrequire example.com/shapepoly v0.0.0\n\nreplace example.com/shapepoly => " + here + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
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
