package shapepoly

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// Metadata: set, read, saved and loaded back, kept by Grad, removed, and the errors.
func TestProgramMetadata(t *testing.T) {
	s := newScope(t)
	x := must(s.Input("x", F32, "n, 3"))
	y := must(must(x.Tanh()).Reduce(ReduceSum, nil, false))
	p := must(s.CreateProgram([]Tensor{x}, Output{Name: "y", Tensor: y}))
	defer p.Close()
	if len(p.Metadata()) != 0 {
		t.Fatalf("new program has metadata %v", p.Metadata())
	}
	q := must(must(p.WithMetadata("onnx.names", `{"inputs": {}}`)).WithMetadata("author", "\u00e9t\u00e9"))
	want := []MetadataEntry{{"author", "\u00e9t\u00e9"}, {"onnx.names", `{"inputs": {}}`}}
	if got := q.Metadata(); !reflect.DeepEqual(got, want) {
		t.Fatalf("metadata %v, want %v", got, want)
	}
	if len(p.Metadata()) != 0 {
		t.Fatalf("the original changed: %v", p.Metadata())
	}
	loaded := reload(t, q)
	if got := loaded.Metadata(); !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded metadata %v, want %v", got, want)
	}
	if v, ok := loaded.MetadataValue("author"); !ok || v != "\u00e9t\u00e9" {
		t.Fatalf("author = %q, %v", v, ok)
	}
	if _, ok := loaded.MetadataValue("missing"); ok {
		t.Fatal("a missing key was found")
	}
	if got := must(loaded.Grad("y", "x")).Metadata(); !reflect.DeepEqual(got, want) {
		t.Fatalf("grad's metadata %v, want %v", got, want)
	}
	none := must(must(loaded.WithoutMetadata("author")).WithoutMetadata("onnx.names"))
	if !bytes.Equal(must(none.Serialize()), must(p.Serialize())) {
		t.Fatal("removing every key does not give the original bytes")
	}
	_, err := p.WithMetadata("", "v")
	wantCode(t, err, InvalidArgument, "key must not be empty")
	_, err = p.WithMetadata(strings.Repeat("k", 257), "v")
	wantCode(t, err, InvalidArgument, "above the limit of 256")
	_, err = p.WithMetadata("k", strings.Repeat("v", 1<<20+1))
	wantCode(t, err, InvalidArgument, "above the limit of 1048576")
	_, err = p.WithMetadata("k", "a\x00b")
	wantCode(t, err, InvalidArgument, "NUL")
}
