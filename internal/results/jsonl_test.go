package results

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tilegen/internal/protocol"
)

func TestReadJSONLPlainAndGzipped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.jsonl")
	recs := []Record{{Key: "k1", Kind: KindTune, Variant: "a", Status: StatusOK, Shape: protocol.Shape{M: 1, N: 2, K: 3}},
		{Key: "k2", Kind: KindCublas, Variant: CublasName, Status: StatusOK}}
	b, err := EncodeJSONL(recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, err := ReadJSONL(path)
	if err != nil || !reflect.DeepEqual(plain, recs) {
		t.Fatalf("plain: %v, %+v", err, plain)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(b)
	zw.Close()
	os.Remove(path)
	if err := os.WriteFile(path+".gz", zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	name, raw, err := ReadFile(path)
	if err != nil || name != path+".gz" || !bytes.Equal(raw, b) {
		t.Fatalf("ReadFile: %v, %s", err, name)
	}
	gz, err := ReadJSONL(path)
	if err != nil || !reflect.DeepEqual(gz, recs) {
		t.Fatalf("gzipped: %v, %+v", err, gz)
	}
	os.Remove(path + ".gz")
	if _, err := ReadJSONL(path); err == nil || !os.IsNotExist(err) {
		t.Fatalf("neither file: %v", err)
	}
}

func TestDecodeJSONLNamesTheLine(t *testing.T) {
	_, err := DecodeJSONL("r.jsonl", []byte("{\"key\":\"a\"}\n\n{oops\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:3: ") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes("1x2x3, 4x5x6,1x2x3")
	if err != nil || !reflect.DeepEqual(got, []protocol.Shape{{M: 1, N: 2, K: 3}, {M: 4, N: 5, K: 6}}) {
		t.Fatalf("%v %v", got, err)
	}
	if ShapeString(got[1]) != "4x5x6" || Flops(got[0]) != 12 {
		t.Fatal(ShapeString(got[1]), Flops(got[0]))
	}
	if _, err := ParseShape("1x0x3"); err == nil {
		t.Fatal("1x0x3 parsed")
	}
}
