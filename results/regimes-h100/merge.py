# Build one catalog directory for a single tune run: the regime families' manifest entries and PTX
# (copied to the GPU host from the branch's generated/) next to the existing families' (from the
# checkout's generated/), so every variant is timed against the same cuBLAS baseline.
import json, os, sys
tree, mine, out, fams = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4].split(","))
mt, mm = json.load(open(f"{tree}/manifest.json")), json.load(open(f"{mine}/manifest.json"))
own = {v["family"] for v in mm["variants"]}
vs = [v for v in mt["variants"] if v["family"] in fams and v["family"] not in own] + mm["variants"]
os.makedirs(f"{out}/ptx", exist_ok=True); os.makedirs(f"{out}/support", exist_ok=True)
for v in vs:
    src = f"{mine}/ptx/{v['name']}.ptx"  # the copied catalog first, then the checkout's
    if v["family"] not in own and not os.path.exists(src):
        src = f"{tree}/ptx/{v['name']}.ptx"
    os.symlink(os.path.abspath(src), f"{out}/ptx/{v['name']}.ptx")
for s in os.listdir(f"{mine}/support"):
    os.symlink(os.path.abspath(f"{mine}/support/{s}"), f"{out}/support/{s}")
mm["variants"] = sorted(vs, key=lambda v: v["name"])
json.dump(mm, open(f"{out}/manifest.json", "w"), indent=1)
print(len(vs), "variants:", ", ".join(sorted({v["family"] for v in vs})))
