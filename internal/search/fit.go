package search

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// sparse is a feature vector by index.
type sparse struct {
	idx []int
	val []float64
}

func (x sparse) dot(b []float64) float64 {
	s := 0.0
	for i, j := range x.idx {
		s += x.val[i] * b[j]
	}
	return s
}

// Ridge penalties, in units of one measurement's weight. A global factor needs a few measurements
// before it moves far from 1; a per-shape family or tile factor one or two; the per-shape level
// is almost free (it only shifts the shape).
const (
	penFamily = 1.0
	penParam  = 2.0
	penCont   = 2.0
	penLevel  = 1e-3
	penLocal  = 0.5
	// kappa is the width of the lower confidence bound in standard errors.
	kappa = 1.0
	// noiseFloor bounds the residual standard deviation below (log units: 3 %).
	noiseFloor = 0.03
	// backfitRounds alternates the global and per-shape fits.
	backfitRounds = 3
)

// The continuous global features of a candidate on a shape.
const nCont = 6

func contFeatures(e Estimate, gz int) [nCont]float64 {
	clip := func(x float64) float64 { return math.Max(-4, math.Min(4, x)) }
	bound := 0.0
	if e.ComputeMS > 0 && e.MemoryMS > 0 {
		bound = clip(math.Log(e.MemoryMS / e.ComputeMS))
	}
	return [nCont]float64{
		clip(math.Log(math.Max(e.Fill, 1e-3))),
		clip(math.Log(math.Max(1-e.Waste, 1e-3))),
		clip(math.Log(math.Max(float64(e.Warps), 1) / 8)),
		clip(math.Log(float64(max(e.Blocks, 1)) / float64(max(e.BlocksPerSM, 1)) / 132)),
		math.Log(float64(max(gz, 1))),
		bound,
	}
}

// model is the model method's state: the global fit's normal equations and both fits' results.
type model struct {
	shapes  []*shapeState
	nG      int
	penalty []float64
	// xtx accumulates XᵀX of the global features over the successful measurements.
	xtx  []float64
	obs  []obsRef
	beta []float64
	// local is each shape's fit.
	local  map[*shapeState]*localFit
	sigma2 float64
	// dirty: observations came in since the last fit.
	dirty bool
}

type obsRef struct {
	st *shapeState
	c  *cand
}

// localFit is one shape's ridge regression on what the global model leaves.
type localFit struct {
	names   []string
	penalty []float64
	theta   []float64
	// inv is (ZᵀZ + Λ)⁻¹, for the standard errors.
	inv *mat.Dense
}

func newModel(shapes []*shapeState) *model {
	m := &model{shapes: shapes, local: map[*shapeState]*localFit{}, sigma2: 0.25, dirty: true}
	index := map[string]int{}
	var pen []float64
	add := func(name string, p float64) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(pen)
		pen = append(pen, p)
		return len(pen) - 1
	}
	cont := make([]int, nCont)
	for i := range cont {
		cont[i] = add(fmt.Sprintf("cont%d", i), penCont)
	}
	for _, st := range shapes {
		lf := &localFit{}
		lindex := map[string]int{}
		ladd := func(name string, p float64) int {
			if i, ok := lindex[name]; ok {
				return i
			}
			lindex[name] = len(lf.names)
			lf.names = append(lf.names, name)
			lf.penalty = append(lf.penalty, p)
			return len(lf.names) - 1
		}
		ladd("level", penLevel)
		for _, c := range st.cands {
			v := c.v
			var g sparse
			g.idx = append(g.idx, add("family "+v.Family, penFamily))
			g.val = append(g.val, 1)
			for _, p := range v.Params {
				g.idx = append(g.idx, add(fmt.Sprintf("%s %s=%d", v.Family, p.Name, p.Value), penParam))
				g.val = append(g.val, 1)
			}
			cf := contFeatures(c.est, c.est.GridZ)
			for i, x := range cf {
				g.idx = append(g.idx, cont[i])
				g.val = append(g.val, x)
			}
			c.g = g
			c.z = []int{0,
				ladd("family "+v.Family, penLocal),
				ladd(fmt.Sprintf("tile %s %dx%d", v.Family, v.Tile.Rows, v.Tile.Cols), penLocal),
				ladd(fmt.Sprintf("slices %d", c.est.GridZ), penLocal),
			}
			c.mean = c.prior
		}
		m.local[st] = lf
	}
	m.nG = len(pen)
	m.penalty = pen
	m.xtx = make([]float64, m.nG*m.nG)
	m.beta = make([]float64, m.nG)
	return m
}

// observe adds a successful measurement to the normal equations.
func (m *model) observe(st *shapeState, c *cand) {
	m.obs = append(m.obs, obsRef{st, c})
	for a, i := range c.g.idx {
		for b, j := range c.g.idx {
			m.xtx[i*m.nG+j] += c.g.val[a] * c.g.val[b]
		}
	}
	m.dirty = true
}

// fit refits both regressions to every measurement so far and updates each candidate's predicted
// log time and standard error.
func (m *model) fit() {
	if !m.dirty {
		return
	}
	m.dirty = false
	// Per-shape offsets of each observation, from the last local fit.
	off := make([]float64, len(m.obs))
	var chol mat.Cholesky
	haveChol := false
	if len(m.obs) > 0 {
		a := mat.NewSymDense(m.nG, nil)
		for i := 0; i < m.nG; i++ {
			for j := i; j < m.nG; j++ {
				v := m.xtx[i*m.nG+j]
				if i == j {
					v += m.penalty[i]
				}
				a.SetSym(i, j, v)
			}
		}
		haveChol = chol.Factorize(a)
	}
	byShape := map[*shapeState][]int{}
	for i, o := range m.obs {
		byShape[o.st] = append(byShape[o.st], i)
	}
	for round := 0; round < backfitRounds; round++ {
		if haveChol {
			b := mat.NewVecDense(m.nG, nil)
			for i, o := range m.obs {
				r := o.c.logMS - o.c.prior - off[i]
				for k, j := range o.c.g.idx {
					b.SetVec(j, b.AtVec(j)+o.c.g.val[k]*r)
				}
			}
			var x mat.VecDense
			if err := chol.SolveVecTo(&x, b); err == nil {
				for j := range m.beta {
					m.beta[j] = x.AtVec(j)
				}
			}
		}
		for _, st := range m.shapes {
			m.fitLocal(st, byShape[st], off, round == backfitRounds-1)
		}
	}
	// Residual spread of the measurements, for the confidence bounds.
	if n := len(m.obs); n > 0 {
		ss := 0.0
		for i, o := range m.obs {
			r := o.c.logMS - o.c.prior - o.c.g.dot(m.beta) - off[i]
			ss += r * r
		}
		m.sigma2 = math.Max(noiseFloor*noiseFloor, ss/float64(n))
	}
	for _, st := range m.shapes {
		lf := m.local[st]
		for _, c := range st.cands {
			c.mean = c.prior + c.g.dot(m.beta)
			if lf.theta != nil {
				for _, j := range c.z {
					c.mean += lf.theta[j]
				}
			}
			c.sd = math.Sqrt(m.sigma2 * lf.quad(c.z))
		}
	}
}

// fitLocal fits shape st's regression to its observations (indexes into m.obs) after the global
// model, and writes each observation's local prediction into off.
func (m *model) fitLocal(st *shapeState, idx []int, off []float64, keepInverse bool) {
	lf := m.local[st]
	n := len(lf.names)
	a := mat.NewDense(n, n, nil)
	for j := 0; j < n; j++ {
		a.Set(j, j, lf.penalty[j])
	}
	b := mat.NewVecDense(n, nil)
	for _, i := range idx {
		c := m.obs[i].c
		r := c.logMS - c.prior - c.g.dot(m.beta)
		for _, p := range c.z {
			for _, q := range c.z {
				a.Set(p, q, a.At(p, q)+1)
			}
			b.SetVec(p, b.AtVec(p)+r)
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		lf.theta, lf.inv = nil, nil
		return
	}
	var theta mat.VecDense
	theta.MulVec(&inv, b)
	lf.theta = theta.RawVector().Data
	for _, i := range idx {
		s := 0.0
		for _, p := range m.obs[i].c.z {
			s += lf.theta[p]
		}
		off[i] = s
	}
	if keepInverse {
		lf.inv = &inv
	}
}

// quad is zᵀ(ZᵀZ + Λ)⁻¹z for a 0/1 vector z by index, without the shape's level (z[0], common to
// every candidate of the shape, so it ranks none above another): the variance, in units of σ², of
// the prediction of a candidate against the others.
func (lf *localFit) quad(z []int) float64 {
	z = z[1:]
	if lf.inv == nil {
		return float64(len(z)) / penLocal
	}
	s := 0.0
	for _, p := range z {
		for _, q := range z {
			s += lf.inv.At(p, q)
		}
	}
	return s
}

// best is shape st's unmeasured candidate with the lowest lower confidence bound, nil when none.
func (m *model) best(st *shapeState) *cand {
	var out *cand
	bestScore := math.Inf(1)
	for _, c := range st.cands {
		if c.handed {
			continue
		}
		score := c.mean - kappa*c.sd
		if score < bestScore {
			out, bestScore = c, score
		}
	}
	return out
}
