package orchestrator

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// List prints the catalog's variants: geometry, requirements and resources. It needs no GPU.
func List(c Catalog, f Filter, stdout io.Writer) error {
	vs, err := f.Select(c.Variants())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d variants, nvcc %s, %s\n", len(vs), c.NVCC(), c.Arch())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tfamily\tparams\tblock\ttile\tgrid_z\tdyn smem\trequires\tregs\tsmem\tspills\t")
	for i := range vs {
		v := &vs[i]
		r := v.Resources
		gz := fmt.Sprint(v.GridZ)
		if v.Split != nil {
			gz = fmt.Sprintf("auto<=%d", v.Split.Max) // chosen per launch by the split rule
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%dx%d\t%dx%d\t%s\t%d\t%s\t%d\t%d\t%d\t\n", v.Name, v.Family, v.ParamString(),
			v.Block.X, v.Block.Y, v.Tile.Rows, v.Tile.Cols, gz, v.DynamicShared, claims(v.Requires),
			r.Registers, r.SharedStatic, r.SpillStores+r.SpillLoads)
	}
	return tw.Flush()
}
