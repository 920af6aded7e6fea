// Package dispatch is the exported SGEMM's dispatch rule: which exported variant runs an M×N×K
// problem. It is fitted on measurements of a workload corpus, compiled into small tables, and
// those tables are what the exported Go package and CUDA header carry, so that a call costs a few
// integer operations and table reads (no allocation, no floating point). The rule lives here
// once, in Go; internal/export emits the same integer code into both artifacts, and its tests
// compile both and compare them with Rule.Pick on thousands of shapes. The package imports nothing
// of tilegen but the shape type, so it runs and is tested anywhere.
//
// # The tables
//
// Each dimension x of M, N and K is put in a bucket b(x) = 2^s·e + f, where e = floor(log2 x)
// and f is the s bits of x after its leading one (s = Rule.Shift: 2^s buckets per octave; s = 1
// splits [2^e, 2^(e+1)) at 1.5·2^e). The bucket is clamped to the fitted range [Lo, Hi] of its
// dimension (the corpus's range plus an octave each side), so a problem beyond the corpus is
// treated like its edge. Three tables hold a kernel index per (b(M), b(N), b(K)) cell, M-major:
// the cell's kernel for problems whose M and N its tile divides (Table: kernels take a faster path
// without partial tiles), its kernel for the other problems (Unaligned), and its best kernel
// without requirements (General: no multiple of M, N, K or the leading dimensions needed) for a
// problem with a leading dimension not a multiple of 4 (Vec false: every tiled kernel loads such
// an operand element by element, and on random odd problems the split-K kernels the aligned
// evidence favours ran well behind cpasync and stream-K ones), M and N above 16.
// Rule.Pick computes exactly that. Rule.Dispatch, and the exported artifacts, launch the aligned
// kernel when its tile divides M and N and it takes the problem, else the first of the unaligned,
// general and aligned kernels and the robust default that takes it, or nothing (an error): no
// kernel is launched on a problem it was not built for. A problem with Vec false tries the general
// kernel first, then the unaligned, aligned and default ones.
//
// # The model behind the tables
//
// The training data is, per corpus shape, cuBLAS's median time and the median time of every
// exportable variant timed there in the same run. The model predicts a variant's log ratio
// (cuBLAS time / its time) at any shape x as
//
//	score_v(x) = a_v(x) − α·log q_v(x) − γ·log e_v(x)
//
// where a_v(x) is the intercept of a weighted least-squares plane in (log2 M, log2 N, log2 K),
// centred on x, through the targets y_v(s) = log ratio_v(s) + α·log q_v(s) + γ·log e_v(s) of the
// training shapes s that v can take, with weights w(x,s) and a ridge penalty λ (times the total
// weight) on the plane's slopes (λ = 0: the weighted mean, no plane). The two explicit features
// are the ones that jump between neighbouring shapes and so cannot be smoothed: q_v, the wave
// quantization of v's grid (ceil(tiles/slots)·slots/tiles with slots = SMs × blocks per SM, tiles
// counting split-K slices), and e_v, the tile waste at the edges (padded output area / output
// area). The rest of a variant's behaviour — K depth and K per slice, arithmetic intensity, tiny M
// or N, launch-bound sizes — varies smoothly in log-space and is what the plane carries. The weight
// is w(x,s) = exp(−(d² − d₁²)/2h²)·ρ^[regime(x) ≠ regime(s)], d the Euclidean distance between the
// log2 (M, N, K) of x and s and d₁ that of the nearest training shape (so the nearest weighs 1;
// zero when d² − d₁² > 16h²); the bandwidth h = max(h₀, κ·d₁) narrows where the corpus has a
// shape close by and widens where it has none (κ = 0: fixed; a small fixed h with no plane and no
// features is the nearest-shape rule). The regime classes, in order: tiny (M ≤ 16 and N ≤ 16 with
// K < 2^14: a tiny output, as 16×1×256, 4×4×4 and 1×4×512), gemv-n (N ≤ 16), gemv-m (M ≤ 16),
// deep-k (K ≥ 4·max(M,N), and a tiny output over a deeper K, as 3×3×1000000), small (2·M·N·K ≤ 2^27), skinny (min(M,N) ≤ 128), large; ρ < 1 keeps the
// regimes apart where the data says that helps. With an alignment weight β < 1
// the smoother is a weighted mean in which, for each variant, the training shapes on the other
// side of "its tile divides M and N" weigh β times less: the aligned table is scored on aligned
// evidence, the unaligned one on unaligned evidence. Both weigh a training shape with a leading
// dimension not a multiple of 4 (Vec false) 0.1 times (misalignedWeight) as much as the others;
// the general table is scored the other way round, on the general candidates only, by a weighted
// mean with the same features.
//
// A variant that can take a training shape but was not timed there (the tuner skipped it, or a
// search never tried it) counts as the slowest variant timed on that shape in evaluation, and as the
// slowest of the candidates (below) timed there in fitting, so the rule learns to avoid what it
// cannot vouch for, and a variant timed there that no rule may pick, however slow, does not move
// the others' fitted scores (on the H100 corpus gemvs, one pass over K, ran 0.08x on a 1M-deep dot
// product and dragged every untimed candidate's target there down with it). The variant with the best
// score wins (ties: the lower index); a shape farther than the reach R from every training shape
// (R = 0: no limit) gets the variants with the best mean log ratio over its regime class's training
// shapes, outside the large class corrected for tile waste at the edges (the robust default where
// the class has none).
//
// Fitting (Fit) chooses, from the training shapes only: the candidates (variants within 5 % of the
// best on some training shape; at most MaxCandidates with the default: first a greedy cover, the
// variant near the best on the most shapes not yet covered until every shape has one, then those
// fastest on some training shape, so that a regime class of few shapes keeps its winners: on the
// H100 corpus, with five more split-K kernels timed, the gemv-n kernels had fallen out and the
// class's held-out geomean from 1.01 to 0.85; ranked by wins alone, gemvs's winners later pushed out
// gemv-n and gemvm kernels again), the robust default (a
// variant that passed its whole edge suite with no shape skipped, timed on the most training
// shapes, with the best worst-case ratio there), and the hyperparameters (h₀, κ, λ, β, α, γ, ρ, R)
// from a small grid by leave-one-out over the training shapes, maximizing the mean log ratio plus
// the mean shortfall below 0.9× (shortfalls count twice: a slowdown costs more than an equal gain
// earns; ties: the earlier, smoother setting), once per regime class over the training shapes whose
// cells are of that class (a class of fewer than eight takes the set chosen over all shapes): each
// class's cells are compiled with its own set, so that the classes, whose kernels and evidence
// differ, neither share one compromise nor move each other's cells when evidence is added to one of
// them. Leave-one-out judges what the export would launch:
// the tables' pick for the left-out shape's cell (the smoother at the cell's centre, the features
// averaged over the cell's points, or the cell's other training shapes' pinned pair), not the
// model's pick at the exact shape. The cells that hold training shapes are always pinned (pinning is
// what makes the corpus's own shapes launch what was measured fastest on them; leave-one-out can
// judge it only on cells of several shapes). The tables then take, per cell: when the cell holds training
// shapes, the aligned and unaligned kernels whose dispatch has the best total measured log ratio on
// those of them whose leading dimensions are all multiples of 4, and the general kernel with the best
// total on the others (so a corpus shape alone in its cell gets its fastest variant whenever the
// dispatch can launch it; when no shape of the cell is one an aligned kernel's tile divides, the
// aligned kernel is the unaligned one: every aligned kernel totals the same there; a cell without
// shapes of one kind takes the model's picks for that kind); otherwise the candidates with the best scores, the plane at the cell's centre and the
// q and e terms averaged over up to eight points of the cell, leaving out a fixed split-K kernel
// where even the cell's smallest problem has at least four output tiles per SM without the split
// (variant.SplitKUntuned: the tuner never times it there, so nothing measured vouches for it),
// and leaving out a candidate never timed on a training shape of the cell's regime class (the
// tuner's portfolio for the class left it out; with ρ up to 1 the smoother would carry its ratios
// over from another class: on the H100 corpus such picks were the worst held-out shapes, and
// leaving them out raised the held-out geomean 0.909 → 0.946, min 0.004 → 0.323), and leaving out a
// candidate whose launch grid overflows on one of the cell's points (Kernel.InGrid: a GEMV kernel of a
// few rows per block on a million rows; the cell's problems would fall through to the robust default:
// held out 0.946 → 0.958, 1000000×8×16 0.33 → 1.05). Leave-one-out
// and cross-validation apply both rules with the left-out shapes' records removed.
//
// # The wave guard
//
// A cell spans shapes whose wave quantization differs, so the tables can send a large problem to a
// fixed-grid kernel whose last wave it leaves nearly empty. The rule's wave guard (WaveGuard,
// guard.go) looks at the exact problem at launch: where the kernel the tables launch has a fixed
// grid or a launch-time split-K rule (its slices computed for the tuning GPU's SMs), M·N·K ≥ 2^30,
// the guard kernel has at least one output tile per SM, covers at most a quarter of M×N beyond it
// and would split some tile's K (a stream-K launch whose last wave of whole tiles is more than half
// full runs every tile whole), and the launched kernel's waves would run at most 10/13 full
// (ceil(blocks/slots)·slots ≥ 13/10·blocks, slots = SMs × its blocks per SM at tuning), the guard
// kernel runs instead: the stream-K kernel without requirements with the best mean log ratio on the
// training shapes it would cover (Fit chooses it; none, no guard). The training shapes on which it
// would replace a kernel measured faster there are kept out of it (WaveGuard.Keep, a sorted list the
// artifacts search). A few integer operations per call; Rule.Dispatch, Data.Evaluate (so the
// cross-validation) and the artifacts apply it.
//
// # The bulk guard
//
// The corpus's large shapes are few and clustered (transformer and convolution sizes), so the cells
// of larger problems are filled from neighbours whose best kernels are small split-K and stream-K
// tiles. The bulk guard (BulkGuard, guard.go), checked before the wave guard, launches a big fixed
// tile where it covers the exact problem well: K ≥ 1024, its blocks fill at least two waves, and
// the area its waves cover beyond M×N (partial tiles and the last wave's empty slots) is at most a
// tenth of M×N. Its kernel is the fixed-grid kernel without requirements, with a tile of at least
// 128×256, that comes closest to the best timed kernel on the training shapes it would take (Fit
// chooses it; none, no guard).
//
// # Validation
//
// CrossValidate splits the corpus into k folds by a hash of the shape (Fold: FNV-1a 64 of
// "MxNxK" modulo k, so a shape keeps its fold whatever else the corpus holds), fits the rule on
// the other folds only — candidates, default, hyperparameters and tables — and reads each held-out
// shape's ratio from its measurements for the variant that rule launches there. The rule fitted on
// every shape gives the ratio the export delivers on the corpus itself. Summary renders both, per
// shape and in total, as `runner workload` writes them (summary.json).
//
// Tried and not kept (H100 NN corpus, `runner workload` over the README's export results, held out
// 1.0796, min 0.604, 51 below 0.9×, 2026-12-08): fitting the smoother on risk-adjusted targets, log r
// + min(0, log r − log a) (the objective's shortfall term, a = 0.9, 0.8, 0.6, or three times it at
// 0.9), held out 1.069-1.076 with a minimum down to 0.109 (the leave-one-out then picks other
// hyperparameters); vouching for a candidate in a regime class only when it was timed on two or
// three of the class's training shapes instead of one, 1.0796 / 1.0785.
package dispatch
