package shapepoly

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// notWrapped lists the C functions the binding deliberately does not call, and why.
var notWrapped = map[string]string{
	"shp_array_create": "Go arrays hold Go memory and reach C through shp_array_wrap",
	"shp_program_load": "LoadProgram is LoadProgramWithOptions(data, nil): shp_program_load_with_options",
}

// TestHeaderCompleteness: every function the C header declares is called by the package (as
// C.shp_name or from a cgo preamble), or listed in notWrapped with the reason.
func TestHeaderCompleteness(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "c_api", "include", "shapepoly", "shapepoly.h"))
	if err != nil {
		t.Fatal(err)
	}
	header := regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`).ReplaceAllString(string(raw), "")
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`SHP_API\b[^;]*?\b(shp_\w+)\s*\(`).FindAllStringSubmatch(header, -1) {
		declared[m[1]] = true
	}
	if len(declared) < 100 {
		t.Fatalf("found only %d declarations in the header: the pattern is stale", len(declared))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	call := regexp.MustCompile(`\bC\.(shp_\w+)\b|\b(shp_\w+)\(`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			used[m[1]+m[2]] = true
		}
	}
	var missing []string
	for name := range declared {
		if !used[name] && notWrapped[name] == "" {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d C functions have no Go wrapper: %s", len(missing), strings.Join(missing, ", "))
	}
	for name := range notWrapped {
		if !declared[name] {
			t.Errorf("notWrapped lists %s, which the header does not declare", name)
		} else if used[name] {
			t.Errorf("notWrapped lists %s, which the package calls", name)
		}
	}
}
