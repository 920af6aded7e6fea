import re, subprocess, sys, os
src, dst, ptxdir, work = sys.argv[1:5]
name = os.path.basename(src).split('.')[0]
text = open(src).read()
pat = re.compile(r'(static const char %s_ptx_(\w+)\[\] =\n)(.*?);\n' % name, re.S)
def esc(b):
    out = []; line = []
    n = 0
    for i, c in enumerate(b):
        if 32 <= c < 127 and c not in (34, 92, 63):
            s = chr(c)
        else:
            s = '\\%03o' % c
        line.append(s); n += len(s)
        if n >= 100:
            out.append('"' + ''.join(line) + '"'); line = []; n = 0
    if line: out.append('"' + ''.join(line) + '"')
    return '\n'.join(out)
tot = [0, 0]
def rep(m):
    k = m.group(2)
    ptx = os.path.join(ptxdir, k + '.ptx')
    tgt = re.search(r'^\.target\s+(\S+)', open(ptx).read(), re.M).group(1)
    arch = 'sm_90a' if tgt == 'sm_90a' else 'sm_90'
    cub = os.path.join(work, k + '.cubin'); fat = os.path.join(work, k + '.fatbin')
    subprocess.check_call(['ptxas', '-arch=' + arch, '-O3', '-o', cub, ptx])
    subprocess.check_call(['fatbinary', '--create=' + fat, '-64', '--compress-all',
        '--image3=kind=elf,sm=%s,file=%s' % (arch[3:], cub), '--image3=kind=ptx,sm=%s,file=%s' % (tgt[3:], ptx)])
    b = open(fat, 'rb').read()
    tot[0] += os.path.getsize(ptx); tot[1] += len(b)
    return m.group(1) + esc(b) + ';\n'
out, n = pat.subn(rep, text)
open(dst, 'w').write(out)
print('kernels', n, 'ptx bytes', tot[0], 'fatbin bytes', tot[1], file=sys.stderr)
