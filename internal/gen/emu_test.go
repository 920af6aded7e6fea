package gen

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// TestSplitKernelsOnHost compiles committed sources of the split-rule families (deepk, gemvm, gemvn,
// streamk_async's op variants: one or two variants each, of different thread counts and tiles) and of gemvs (one pass, no split:
// two variants; gemvn, gemvn_g and gemvn_dot under NT, gemvn_t and gemvn_tr, B stored N x K) for the host against
// testdata/emu/emu.h, a small emulation of the CUDA they use, and checks them against a float64
// reference as the worker's verification does (NaN padding, alpha and beta, leading dimensions
// past the matrix, tile edges plus and minus one), at several slice counts including two-level
// fix-ups and a count beyond the workspace. It checks indexing, edges and the fix-up's order of
// work, not speed or the memory model: the GPU's verification stays the judge.
func TestSplitKernelsOnHost(t *testing.T) {
	if testing.Short() {
		t.Skip("emulating the kernels on the host takes a few minutes")
	}
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no g++")
		}
		t.Skip("needs g++")
	}
	var m variant.Manifest
	b, err := os.ReadFile(filepath.Join("..", "..", "generated", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	byName := map[string]variant.Variant{}
	for _, v := range m.Variants {
		byName[v.Name] = v
	}
	emu, err := filepath.Abs(filepath.Join("testdata", "emu"))
	if err != nil {
		t.Fatal(err)
	}
	// 4x4 and 8x8 thread tiles of deepk; gemvm with 16 rows (its reduction in chunks of 4 rows over
	// 8 thread groups); gemvn on 4 warps with one column (B read four k at a time) and on 8 warps
	// with 8 columns (B's rows as float4s); gemvn_dot on one warp with up to 1024 slices; gemvs (no
	// split) with 4 rows on 8 lanes across N and with 2 rows on one lane (every shuffle step);
	// streamk_async under NT, TN and TT (its op copies: cp.async made synchronous, the stream-K
	// schedule and fix-up on 1 to 409 persistent blocks). (A
	// block at a time on one thread per CUDA thread is slow: about six minutes for the first six.)
	for _, name := range []string{
		"deepk_32x32x32_t4x4_s4_b8", "deepk_128x64x16_t8x8_s3_b4", "gemvm_m16_x32_y8_u1_o2", "gemvn_n1_r4_u4_w2", "gemvn_n8_r8_u2_w1",
		"gemvnd_n1_r1_u4", "gemvs_m4_x8_t256_u8", "gemvs_m2_x1_t256_u8",
		"gemvn_n4_r4_u2_w1_nt", "gemvng_n2_r4_u2_w1_g8_nt", "gemvt_m4_r4_u2_w1_nt", "gemvt_m16_r8_u2_w2_nt", "gemvnd_n4_r1_u2_nt", "gemvtr_m4_r2_x4_u1_w1_nt", "gemvtr_m16_r4_x2_u2_w2_nt",
		"streamka_64x128x16_w64_t8x8_s3_b2_x0_nt", "streamka_64x128x16_w64_t8x8_s3_b3_x1_tn", "streamka_64x128x16_w64_t8x8_s3_b3_x1_tt",
	} {
		t.Run(name, func(t *testing.T) {
			v, ok := byName[name]
			if !ok {
				t.Fatalf("%s: not in generated/manifest.json", name)
			}
			maxSlices := 1 // no split rule: one slice only
			if v.Split != nil {
				maxSlices = v.Split.Max
			}
			src, err := os.ReadFile(filepath.Join("..", "..", "generated", "cuda", name+".cu"))
			if err != nil {
				t.Fatal(err)
			}
			// Dynamic shared memory becomes a static array of the variant's size.
			code := string(src)
			for _, smem := range []string{"tg_dk_smem", "tg_rt_smem"} {
				code = strings.Replace(code, "extern __shared__ float4 "+smem+"[];", fmt.Sprintf("static float4 %s[%d];", smem, v.DynamicShared/16+1), 1)
			}
			dir := t.TempDir()
			unit := "#include \"emu.h\"\n" + code + "\n#include \"main.inc\"\n"
			if err := os.WriteFile(filepath.Join(dir, "emu.cpp"), []byte(unit), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "emu")
			args := []string{"-std=c++20", "-O2", "-pthread", "-w", "-I", emu, "-o", bin, filepath.Join(dir, "emu.cpp"),
				"-DEMU_KERNEL=" + name, fmt.Sprintf("-DEMU_NAME=%q", name), fmt.Sprintf("-DEMU_THREADS=%d", v.Threads()),
				fmt.Sprintf("-DEMU_TILE_ROWS=%d", v.Tile.Rows), fmt.Sprintf("-DEMU_TILE_COLS=%d", v.Tile.Cols),
				fmt.Sprintf("-DEMU_MAX_SLICES=%d", maxSlices), fmt.Sprintf("-DEMU_OPA=%d", b2i(v.Op.TransA())), fmt.Sprintf("-DEMU_OPB=%d", b2i(v.Op.TransB())),
				fmt.Sprintf("-DEMU_STREAMK=%d", b2i(v.Split != nil && v.Split.StreamK))}
			if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
				t.Fatalf("g++: %v\n%s", err, out)
			}
			out, err := exec.Command(bin).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Log(strings.TrimSpace(string(out)))
		})
	}
}
