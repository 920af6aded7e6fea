package orchestrator

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// keyInput is everything that determines a result; its JSON's SHA-256 is the record key.
type keyInput struct {
	Kind       string                   `json:"kind"`
	Variant    string                   `json:"variant"`
	SourceHash string                   `json:"source_hash,omitempty"`
	PTXHash    string                   `json:"ptx_hash,omitempty"`
	Arch       string                   `json:"arch,omitempty"`
	Shape      protocol.Shape           `json:"shape"`
	Verify     *protocol.VerifySettings `json:"verify,omitempty"`
	Timing     *protocol.TimingSettings `json:"timing,omitempty"`
	GPU        string                   `json:"gpu"`
	GPUUUID    string                   `json:"gpu_uuid"`
	Driver     int                      `json:"driver"`
	Cublas     int                      `json:"cublas,omitempty"`
}

func keyOf(k keyInput) string {
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // plain structs always marshal
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// settingsHash is Record.SettingsHash: the hash of the PTX target and the verification (seed
// included) and timing settings.
func settingsHash(arch string, vs *protocol.VerifySettings, ts *protocol.TimingSettings) string {
	return keyOf(keyInput{Kind: "settings", Arch: arch, Verify: vs, Timing: ts})
}

// skipKey identifies a skipped record: it depends on no device.
func skipKey(kind string, v *variant.Variant, s protocol.Shape) string {
	return keyOf(keyInput{Kind: kind + "/skipped", Variant: v.Name, SourceHash: v.SourceHash, Shape: s})
}

// DeriveSeed makes the verification seed of (variant, shape) under a run seed.
func DeriveSeed(name string, s protocol.Shape, runSeed uint64) uint64 {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d", name, results.ShapeString(s), runSeed)
	seed := binary.LittleEndian.Uint64(h.Sum(nil))
	if seed == 0 {
		seed = 1
	}
	return seed
}
