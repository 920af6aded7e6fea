package export

import (
	"fmt"
	"sort"

	"tilegen/internal/dispatch"
	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workload"
)

// HoldoutSamples reads a measurement made apart from the corpus (tune results directories, every
// kernel timed next to cuBLAS on each shape) as holdout samples of d's kernels: per single FP32 NN
// product, cuBLAS's median time and each of d's kernels' (the larger median when timed on several
// devices). A record of another build than generated's (otherBuild, as the export judges its own
// records) is left out: it timed other code than the export launches. With shapes (a shapes file's entries), only those
// shapes are kept, each with its source, and each must have been timed with cuBLAS. The measurement
// must be of one GPU model, which it returns; it may differ from the corpus's (the summary says both).
func HoldoutSamples(dirs []string, generated string, allowUnhashed bool, shapes []workload.Entry, d *dispatch.Data) ([]dispatch.HoldoutSample, string, error) {
	rs, err := readResults(dirs)
	if err != nil {
		return nil, "", err
	}
	cat, err := orchestrator.LoadDir(generated)
	if err != nil {
		return nil, "", err
	}
	byName := map[string]*variant.Variant{}
	vs := cat.Variants()
	for i := range vs {
		byName[vs[i].Name] = &vs[i]
	}
	index := map[string]int{}
	for j, k := range d.Kernels {
		index[k.Name] = j
	}
	var keep []results.Record
	for _, r := range precisionRecords(rs.records, variant.PrecisionFP32) {
		switch r.Kind {
		case results.KindCublas:
		case results.KindTune:
			if _, ok := index[r.Variant]; !ok || byName[r.Variant] == nil || otherBuild(r, byName[r.Variant], allowUnhashed) != "" {
				continue
			}
		default:
			continue
		}
		keep = append(keep, r)
	}
	gpu, err := tunedGPU(keep, "holdout results")
	if err != nil {
		return nil, "", err
	}
	ms, err := measuresOf(keep, func(s protocol.Shape) bool {
		return s.Op == variant.OpNN && s.Batch == 0 && s.Epilogue == variant.EpiNone
	}, true)
	if err != nil {
		return nil, "", err
	}
	want := map[protocol.Shape]string{}
	var order []protocol.Shape
	if shapes != nil {
		want = workload.Sources(shapes)
		for _, s := range workload.Unique(shapes) {
			if s.Op != variant.OpNN || s.Batch != 0 || s.Epilogue != variant.EpiNone {
				return nil, "", fmt.Errorf("holdout shape %s: only single NN products are judged", results.ShapeString(s))
			}
			if len(ms[s]) == 0 {
				return nil, "", fmt.Errorf("holdout shape %s: no kernel of the export timed with cuBLAS there in the holdout results", results.ShapeString(s))
			}
			order = append(order, s)
		}
	} else {
		for s := range ms {
			order = append(order, s)
		}
		sort.Slice(order, func(a, b int) bool { return results.ShapeString(order[a]) < results.ShapeString(order[b]) })
	}
	var out []dispatch.HoldoutSample
	for _, s := range order {
		hs := dispatch.HoldoutSample{Shape: s, Source: want[s], Times: make([]float64, len(d.Kernels))}
		// Each kernel's ratio is to cuBLAS on its own record's device; the times are put on one
		// cuBLAS time (the first kernel's by name) so that they keep those ratios.
		names := make([]string, 0, len(ms[s]))
		for name := range ms[s] {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			m := ms[s][name]
			if hs.CublasMS == 0 {
				hs.CublasMS = m.CublasMS
			}
			hs.Times[index[name]] = hs.CublasMS * m.MedianMS / m.CublasMS
		}
		if hs.CublasMS > 0 {
			out = append(out, hs)
		}
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("holdout results: no single NN product with an exported kernel timed next to cuBLAS")
	}
	return out, gpu, nil
}
