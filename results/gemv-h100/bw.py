# DRAM bandwidth probe: device-to-device copy (read + write) and a read-only reduction over 1 GiB
# buffers, 20 timed repetitions after warm-up, median; the H100 SXM's HBM3 spec is 3.35 TB/s.
import statistics, torch
n = 1 << 28  # floats: 1 GiB
x = torch.rand(n, device="cuda"); y = torch.empty_like(x)
def med(f, reps=20):
    for _ in range(3): f()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)
t = med(lambda: y.copy_(x)); print(f"copy  {2 * 4 * n / t / 1e9:.0f} GB/s (read+write, 1 GiB each way, median of 20)")
t = med(lambda: x.sum()); print(f"read  {4 * n / t / 1e9:.0f} GB/s (torch.sum over 1 GiB, median of 20)")
print(torch.cuda.get_device_name(), torch.cuda.get_device_properties(0).multi_processor_count, "SMs")
