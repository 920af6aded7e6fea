# Draws random GEMM problems the way unseen/run5 did: M, N, K log-uniform in [16, 16384], kept when
# 10^8 <= M*N*K <= 10^12, every other one rounded to a multiple of 8 (the rest left as drawn).
# Usage: python3 gen.py SEED COUNT > FILE
import math, random, sys

seed, count = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
print(f"# {count} random problems: M, N, K log-uniform in [16, 16384] with 10^8 <= M*N*K <= 10^12;")
print(f"# half rounded to multiples of 8, half left as drawn (seed {seed}; drawn by gen.py, none chosen by hand).")
out = 0
while out < count:
    d = [round(math.exp(rng.uniform(math.log(16), math.log(16384)))) for _ in range(3)]
    if out % 2 == 0:
        d = [max(8, (x + 4) // 8 * 8) for x in d]
    if not 1e8 <= d[0] * d[1] * d[2] <= 1e12:
        continue
    print(f"{d[0]} {d[1]} {d[2]}    # random")
    out += 1
