#!/usr/bin/env python3
"""Static throughput report of the GEMM and convolution inner loops, per SIMD target and CPU.

Compiles mca_kernels.cc with g++ (the library's compiler, -O2 as `bazel build -c opt`) once per
x86 level, so that Highway's static target is AVX3 (-march=skylake-avx512) or AVX2
(-march=haswell); cuts each kernel's innermost loop that holds its FMAs out of the assembly;
and runs llvm-mca on it for each CPU model that can run that code. For every (loop, CPU) it
prints the FMAs per iteration, the predicted cycles per iteration, FMAs per cycle against the
CPU's FMA ports, and the resource llvm-mca sees most pressed (the bottleneck).

This is how kernels are checked on CPUs the development machine is not: llvm-mca models the
scheduler of each CPU (LLVM 14: sapphirerapids, skylake-avx512, icelake-server, haswell,
znver3; it has no znver4 model, so Zen 4 is measured instead: benchmarks/kernels). The
predictions cover the loop in steady state with every load hitting L1; cache misses, packing
and edge tiles are the benchmarks' business.

Usage: benchmarks/kernels/mca/mca_report.py [--markdown] (from anywhere; needs g++ and
llvm-mca, Debian's `llvm` package). The checked-in report is mca_report.md (--markdown).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SOURCE = os.path.join(HERE, "mca_kernels.cc")

# Highway target -> the -march that makes it the static target.
TARGETS = {"AVX3": "skylake-avx512", "AVX2": "haswell"}

# CPU model -> (the targets it runs, FMA instructions per cycle of each target's vector width).
# AVX-512 FMAs: two 512-bit FMA ports on Skylake-SP (Gold 6xxx and up), Ice Lake-SP and Sapphire
# Rapids; 256-bit FMAs: two ports on all of them and on Haswell and Zen 3.
CPUS = {
    "sapphirerapids": {"AVX3": 2, "AVX2": 2},
    "icelake-server": {"AVX3": 2, "AVX2": 2},
    "skylake-avx512": {"AVX3": 2, "AVX2": 2},
    "znver3": {"AVX2": 2},
    "haswell": {"AVX2": 2},
}

# Kernel function -> what its loop is.
KERNELS = {
    "mca_gemm_micro_nrv2": "GEMM micro-kernel, MR x 2 vectors (squares: n = 256, 1024, ...)",
    "mca_gemm_micro_nrv3": "GEMM micro-kernel, MR x 3 vectors (AVX3's widest tile)",
    "mca_gemm_direct_1row": "small-m GEMM, 1 row of C, B read in place (batch-1 dense layer)",
    "mca_conv_depthwise3x3": "depthwise 3x3: 8 (AVX3) / 4 output rows per column vector",
    "mca_conv_output_slots": "other direct convs: 8 output vectors per tap",
}

FMA = re.compile(r"^\s*vfn?m(add|sub)\d*[ps][sd]\b")
LABEL = re.compile(r"^(\.L\w+):")
JUMP = re.compile(r"^\s*j[a-z]+\s+(\.L\w+)\s*$")


def compile_asm(target):
    """The assembly of mca_kernels.cc with `target` as Highway's static target."""
    cmd = [
        "g++",
        "-std=c++17",
        "-O2",
        "-DNDEBUG",
        "-fvisibility=hidden",
        "-march=" + TARGETS[target],
        "-I",
        ROOT,
        "-S",
        "-o",
        "-",
        SOURCE,
    ]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def functions(asm):
    """name -> its lines, for every function of the assembly."""
    out, name = {}, None
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_][\w.$]*):", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name is not None:
            if ".cfi_endproc" in line:
                name = None
            else:
                out[name].append(line)
    return out


def kernel_lines(funcs, name):
    """The lines of `name` and of the functions it calls or jumps to (a kernel the compiler did
    not inline into its mca_* wrapper, e.g. PaddedRow)."""
    lines = list(funcs.get(name, []))
    for line in funcs.get(name, []):
        m = re.match(r"^\s*(?:call|jmp)\s+([A-Za-z_][\w.$]*)", line)
        if m and m.group(1) in funcs and m.group(1) != name:
            lines += funcs[m.group(1)]
    return lines


def hot_loop(lines):
    """The loop (a label, a backward jump to it) with the most FMAs, innermost first: among the
    loops without another loop inside, else (a kernel whose FMA loop also holds a small copy
    loop, e.g. a tail store) among all loops, the smallest with the most FMAs. Returned as its
    instructions (directives and labels dropped), or None."""
    labels = {}
    loops = []  # (fmas, innermost, body)
    for i, line in enumerate(lines):
        m = LABEL.match(line)
        if m:
            labels[m.group(1)] = i
            continue
        m = JUMP.match(line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            start = labels[m.group(1)]
            body = lines[start : i + 1]
            targets = (JUMP.match(x) for x in body[:-1])
            inner = not any(t and labels.get(t.group(1), -1) >= start for t in targets)
            fmas = sum(1 for x in body if FMA.match(x))
            if fmas:
                loops.append((fmas, inner, body))
    if not loops:
        return None
    pool = [lp for lp in loops if lp[1]] or loops
    best = max(pool, key=lambda lp: (lp[0], -len(lp[2])))
    return [x for x in best[2] if x.strip() and not x.lstrip().startswith(".")]


def run_mca(cpu, loop):
    """(cycles per iteration, name of the most pressed resource, its cycles per iteration)."""
    iterations = 500
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(loop) + "\n")
        path = f.name
    try:
        out = subprocess.run(
            ["llvm-mca", "-mtriple=x86_64-unknown-linux-gnu", "-mcpu=" + cpu, "-iterations=%d" % iterations, path],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        os.unlink(path)
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / iterations
    # "Resource pressure per iteration:" then a header line of [n] names, then the values.
    lines = out.splitlines()
    i = lines.index("Resource pressure per iteration:")
    legend = {}
    for line in lines:
        m = re.match(r"^\[(\d+(?:\.\d+)?)\]\s+-\s+(\S+)", line)
        if m:
            legend[m.group(1)] = m.group(2)
    names = re.findall(r"\[(\d+(?:\.\d+)?)\]", lines[i + 1])
    values = [0.0 if v == "-" else float(v) for v in lines[i + 2].split()]
    top = max(range(len(values)), key=lambda j: values[j])
    return cycles, legend.get(names[top], names[top]), values[top]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args()
    for tool in ("g++", "llvm-mca"):
        if shutil.which(tool) is None:
            sys.exit("mca_report.py: %s not found (apt-get install g++ llvm)" % tool)
    version = subprocess.run(["llvm-mca", "--version"], capture_output=True, text=True).stdout
    llvm = re.search(r"LLVM version (\S+)", version)
    rows = []
    for target in TARGETS:
        funcs = functions(compile_asm(target))
        for name in KERNELS:
            loop = hot_loop(kernel_lines(funcs, name))
            if loop is None:
                continue  # e.g. NRV 3 on AVX2: not compiled for this target
            fmas = sum(1 for x in loop if FMA.match(x))
            for cpu, ports in CPUS.items():
                if target not in ports:
                    continue
                cycles, res, pressure = run_mca(cpu, loop)
                rows.append((target, name, cpu, len(loop), fmas, cycles, fmas / cycles, ports[target], res, pressure))
    head = (
        "target",
        "loop",
        "cpu",
        "instrs",
        "FMAs",
        "cycles/iter",
        "FMAs/cycle",
        "of peak",
        "most pressed resource (cycles/iter)",
    )
    print(
        "# llvm-mca %s, g++ -O2 -march=<target's level>; loops cut from mca_kernels.cc"
        % (llvm.group(1) if llvm else "?")
    )
    if args.markdown:
        print()
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for target, name, cpu, n, fmas, cycles, rate, peak, res, pressure in rows:
        cells = (
            target,
            name.replace("mca_", ""),
            cpu,
            str(n),
            str(fmas),
            "%.2f" % cycles,
            "%.2f" % rate,
            "%.0f%%" % (100 * rate / peak),
            "%s (%.2f)" % (res, pressure),
        )
        if args.markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print("%-5s %-18s %-15s %4s %4s %8s %6s %5s  %s" % cells)
    print()
    for name, what in KERNELS.items():
        print("%s%s: %s" % ("- " if args.markdown else "# ", name.replace("mca_", ""), what))


if __name__ == "__main__":
    main()
