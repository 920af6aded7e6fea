# Draws random GEMM problems in three regimes for the oracle tune (run.sh), none chosen by hand:
#   large: M, N log-uniform in [256, 16384], K in [128, 16384], at least two waves of 128x256 tiles on
#          132 SMs (ceil(M/128) * ceil(N/256) >= 264), M*N*K <= 10^11;
#   small: M, N log-uniform in [17, 2048], K in [512, 16384], less than one wave of 128x128 tiles
#          (ceil(M/128) * ceil(N/128) < 132), 10^8 <= M*N*K <= 10^11;
#   mid:   M, N log-uniform in [128, 8192], K in [256, 16384], one half to two waves of 128x128 tiles,
#          M*N*K <= 10^11.
# Every other problem of each regime is rounded to multiples of 8, the rest left as drawn.
# Usage: python3 gen.py SEED LARGE SMALL MID > FILE
import math, random, sys

seed, counts = int(sys.argv[1]), [int(x) for x in sys.argv[2:5]]
rng = random.Random(seed)
lu = lambda lo, hi: round(math.exp(rng.uniform(math.log(lo), math.log(hi))))
cd = lambda a, b: -(-a // b)
regimes = [
    ("large", (256, 16384), (128, 16384), lambda m, n, k: cd(m, 128) * cd(n, 256) >= 264 and m * n * k <= 1e11),
    ("small", (17, 2048), (512, 16384), lambda m, n, k: cd(m, 128) * cd(n, 128) < 132 and 1e8 <= m * n * k <= 1e11),
    ("mid", (128, 8192), (256, 16384), lambda m, n, k: 66 <= cd(m, 128) * cd(n, 128) < 264 and m * n * k <= 1e11),
]
print(f"# random problems in three regimes (gen.py, seed {seed}: {counts[0]} large, {counts[1]} small, {counts[2]} mid)")
for (name, mn, kr, keep), count in zip(regimes, counts):
    out = 0
    while out < count:
        d = [lu(*mn), lu(*mn), lu(*kr)]
        if out % 2 == 0:
            d = [max(8, (x + 4) // 8 * 8) for x in d]
        if not keep(*d):
            continue
        print(f"{d[0]} {d[1]} {d[2]}    # random {name}")
        out += 1
