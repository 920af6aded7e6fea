# compose.py OLD NEW OUT FAMILIES: a generated directory for `runner workload` over records measured
# with two catalogs. OUT is OLD (the generated/ the corpus tune ran with) with every variant of the
# comma-separated FAMILIES taken from NEW instead (manifest entries, cuda/ and ptx/ files), and OLD's
# variants of those families dropped. Records then match OUT's hashes exactly where they match the
# catalog they were measured with: the first tune's records of the other families (whose sources
# the #16 merge regenerated with byte-identical PTX), the second tune's records of FAMILIES. Nothing
# is re-hashed: export's staleness check applies unchanged.
import json, os, shutil, sys

old, new, out, fams = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4].split(","))
if os.path.exists(out):
    sys.exit(f"{out} exists")
shutil.copytree(old, out)
mo = json.load(open(os.path.join(old, "manifest.json")))
mn = json.load(open(os.path.join(new, "manifest.json")))
keep = [v for v in mo["variants"] if v["family"] not in fams]
take = [v for v in mn["variants"] if v["family"] in fams]
for v in mo["variants"]:
    if v["family"] in fams:
        for d, ext in (("cuda", ".cu"), ("ptx", ".ptx")):
            p = os.path.join(out, d, v["name"] + ext)
            if os.path.exists(p):
                os.remove(p)
for v in take:
    for d, ext in (("cuda", ".cu"), ("ptx", ".ptx")):
        shutil.copy(os.path.join(new, d, v["name"] + ext), os.path.join(out, d, v["name"] + ext))
mo["variants"] = sorted(keep + take, key=lambda v: v["name"])
names = {v["name"] for v in mo["variants"]}
mo["files"] = sorted(f for f in set(mo["files"]) | {f"{d}/{v['name']}{e}" for v in take for d, e in (("cuda", ".cu"), ("ptx", ".ptx"))}
                     if "/" not in f or os.path.splitext(os.path.basename(f))[0] in names or not f.startswith(("cuda/", "ptx/")))
json.dump(mo, open(os.path.join(out, "manifest.json"), "w"), indent=2)
print(f"{out}: {len(keep)} variants from {old}, {len(take)} of {sorted(fams)} from {new}")
