#!/usr/bin/python3
"""The environment a bench run measured in, for tools/bench/run.sh.

  bench_env.py collect --build DIR --out ENV.json [--info NAME=FILE ...] [--load-start X]
      gathers the CPU (model, family, flags, cores), memory, OS, the compiler and the flags
      the benchmarks were built with (BUILD_DIR's CMakeCache.txt and compile_commands.json),
      the libraries (oneDNN and OpenBLAS from `seqbench_bench_sgemm --info` output files,
      NAME=FILE per OpenBLAS kernel setting, env or auto; torch and the BLAS it loaded, from this
      interpreter) and every OPENBLAS_*, OMP_*, MKL_*, ATEN_*, GOMP_*, KMP_*, DNNL_* and
      ONEDNN_* variable; writes ENV.json and prints a short header for the terminal.
  bench_env.py write --env ENV.json --csv ROWS.csv --out RUN.json [--sgemm CSV]
      [--probes CSV] [--attention CSV] [--load-end X] [--meta KEY=VALUE ...]
      assembles the run's JSON: {"run", "environment", "sgemm", "sgemm_peak" (the best
      product's GFLOP/s per thread count), "probes", "rows", "attention_scaling"}.

Run it with the interpreter that has torch (run.sh's BENCH_PYTHON, /usr/bin/python3).
"""
import argparse
import csv
import ctypes
import json
import os
import platform
import re
import shlex
import subprocess
import sys

ENV_PREFIXES = ("OPENBLAS_", "OMP_", "MKL_", "ATEN_", "GOMP_", "KMP_", "DNNL_", "ONEDNN_")


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def cpu_info():
    first = read("/proc/cpuinfo").split("\n\n")[0]
    kv = {}
    for line in first.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            kv[k.strip()] = v.strip()
    flags = kv.get("flags", "").split()
    mem_kb = re.search(r"MemTotal:\s+(\d+)", read("/proc/meminfo"))
    return {
        "model": kv.get("model name", "unknown"),
        "vendor": kv.get("vendor_id", ""),
        "family": kv.get("cpu family", ""),
        "model_number": kv.get("model", ""),
        "stepping": kv.get("stepping", ""),
        "mhz": kv.get("cpu MHz", ""),
        "cache": kv.get("cache size", ""),
        "flags": " ".join(flags),
        "simd": [f for f in flags if re.match(r"^(sse4_2|avx|avx2|fma|avx512\w*|avx_vnni|amx\w*)$", f)],
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "mem_gb": round(int(mem_kb.group(1)) / 1048576, 1) if mem_kb else None,
    }


def os_info():
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)', read("/etc/os-release"), re.M)
    return {"os": pretty.group(1) if pretty else platform.system(), "kernel": platform.release()}


def build_info(build):
    cache = {}
    for line in read(os.path.join(build, "CMakeCache.txt")).splitlines():
        m = re.match(r"^([A-Za-z_][\w-]*):\w+=(.*)$", line)
        if m:
            cache[m.group(1)] = m.group(2)
    cxx = cache.get("CMAKE_CXX_COMPILER", "")
    version = ""
    if cxx:
        try:
            version = subprocess.run([cxx, "--version"], capture_output=True, text=True,
                                     timeout=20).stdout.splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            version = ""
    flags = {}
    try:
        with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
            commands = json.load(f)
    except (OSError, ValueError):
        commands = []
    # The flags the timed code was compiled with: the library (every cell and GEMM call)
    # and the benchmark driver, without include paths and file names.
    for name, pattern in (("lib", "/lib/"), ("bench", "/tools/bench/cell_step.cpp")):
        for e in commands:
            if pattern in e.get("file", ""):
                words = shlex.split(e.get("command", "")) or e.get("arguments", [])
                keep, skip = [], False
                for w in words[1:]:
                    if skip:
                        skip = False
                        continue
                    if w in ("-o", "-c", "-isystem", "-I"):
                        skip = True
                        continue
                    if w.startswith("-I") or not w.startswith("-"):
                        continue
                    keep.append(w)
                flags[name] = " ".join(keep)
                break
    return {
        "compiler": cxx,
        "compiler_version": version,
        "build_type": cache.get("CMAKE_BUILD_TYPE", ""),
        "native": cache.get("SEQBENCH_NATIVE", ""),
        "cxx_flags_lib": flags.get("lib", ""),
        "cxx_flags_bench": flags.get("bench", ""),
        "build_dir": os.path.abspath(build),
    }


def loaded_blas():
    """The BLAS shared object this process loaded (torch's), and what OpenBLAS says."""
    paths = []
    for line in read("/proc/self/maps").splitlines():
        p = line.split()[-1] if line.split() else ""
        if re.search(r"/lib(open)?blas[^/]*\.so", p) and p not in paths:
            paths.append(p)
    out = {"libraries": [os.path.realpath(p) for p in paths]}
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
            out["openblas_core"] = lib.openblas_get_corename().decode()
            out["openblas_config"] = lib.openblas_get_config().decode()
            out["openblas_threads"] = lib.openblas_get_num_threads()
            break
        except (OSError, AttributeError):
            continue
    return out


def torch_info():
    try:
        import torch
    except ImportError as e:
        return {"error": str(e)}
    show = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=([^,\s]+)", show)
    lapack = re.search(r"LAPACK_INFO=([^,\s]+)", show)
    cap = re.search(r"CPU capability usage: (\S+)", show)
    dnn = re.search(r"MKL-DNN v(\S+)", show)
    return {
        "version": torch.__version__,
        "python": sys.executable,
        "python_version": platform.python_version(),
        "blas_info": blas.group(1) if blas else "",
        "lapack_info": lapack.group(1) if lapack else "",
        "cpu_capability": cap.group(1) if cap else "",
        "mkldnn": dnn.group(1) if dnn else "",
        "default_threads": torch.get_num_threads(),
        "parallel_backend": "OpenMP" if "ATen parallel backend: OpenMP" in torch.__config__.parallel_info() else "other",
        "blas_loaded": loaded_blas(),
    }


def parse_info(path):
    out = {}
    for line in read(path).splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def libraries(infos):
    """oneDNN and OpenBLAS as seqbench_bench_sgemm --info saw them, one file per OpenBLAS
    kernel setting (NAME=FILE: env = OPENBLAS_CORETYPE/L2_SIZE as inherited, auto = unset)."""
    parsed = {name: parse_info(path) for name, path in (i.split("=", 1) for i in infos)}
    first = next(iter(parsed.values()), {})
    return {
        "onednn": {"version": first.get("onednn_version", ""), "hash": first.get("onednn_hash", ""),
                   "isa": first.get("onednn_isa", "")},
        "openblas": {
            "config": {n: i.get("openblas_config", "") for n, i in parsed.items()},
            "core": {n: i.get("openblas_core", "") for n, i in parsed.items()},
            "parallel": first.get("openblas_parallel", ""),
            "default_threads": first.get("openblas_threads", ""),
        },
        "omp_max_threads": first.get("omp_max_threads", ""),
    }


def collect(a):
    env = {
        "cpu": cpu_info(),
        "system": os_info(),
        "build": build_info(a.build),
        "libraries": libraries(a.info),
        "torch": torch_info(),
        "variables": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)},
        "load_start": a.load_start,
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(env, f, indent=1)
    c, b, t = env["cpu"], env["build"], env["torch"]
    dnnl, blas = env["libraries"]["onednn"], env["libraries"]["openblas"]
    cores = ", ".join(f"{core} ({'OPENBLAS_CORETYPE/L2_SIZE unset' if n == 'auto' else 'as the environment says'})"
                      for n, core in blas["core"].items())
    config = next(iter(blas["config"].values()), "?")
    print(f"machine: {c['model']} (family {c['family']} model {c['model_number']}), "
          f"{c['nproc']} cores (nproc), {c['mem_gb']} GB; SIMD: {' '.join(c['simd']) or '-'}")
    print(f"system: {env['system']['os']}, kernel {env['system']['kernel']}")
    print(f"compiler: {b['compiler_version'] or b['compiler']}, {b['build_type']}: {b['cxx_flags_lib']}")
    print(f"oneDNN {dnnl['version'] or '?'} (ISA {dnnl['isa'] or '?'}); "
          f"{config} ({blas['parallel'] or '?'}); kernels: {cores}")
    bl = t.get("blas_loaded", {})
    print(f"torch {t.get('version', '?')} ({t.get('python', '?')}), BLAS_INFO={t.get('blas_info', '?')}"
          f" -> {', '.join(bl.get('libraries', [])) or '?'}"
          f" (kernels {bl.get('openblas_core', '?')}), CPU capability {t.get('cpu_capability', '?')}")
    vs = env["variables"]
    print("variables: " + (" ".join(f"{k}={v}" for k, v in vs.items()) if vs else "none of "
          + ", ".join(p + "*" for p in ENV_PREFIXES) + " set"))


def rows_of(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def write(a):
    with open(a.env, encoding="utf-8") as f:
        env = json.load(f)
    env["load_end"] = a.load_end
    sgemm = rows_of(a.sgemm)
    peak = {}
    for r in sgemm:  # the best product's GFLOP/s at each thread count (run.sh's peak)
        g = number(r["gflops_best"])
        if isinstance(g, float) and g > peak.get(r["threads"], {}).get("gflops", 0):
            peak[r["threads"]] = {"gflops": g, "lib": r["lib"], "core": r["core"],
                                  "core_setting": r["core_setting"]}
    doc = {"run": dict(m.split("=", 1) for m in a.meta), "environment": env, "sgemm": sgemm,
           "sgemm_peak": peak, "probes": rows_of(a.probes), "rows": rows_of(a.csv)}
    if a.attention:
        doc["attention_scaling"] = rows_of(a.attention)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--build", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--info", action="append", default=[], help="NAME=FILE (seqbench_bench_sgemm --info)")
    c.add_argument("--load-start", default="")
    w = sub.add_parser("write")
    w.add_argument("--env", required=True)
    w.add_argument("--csv", required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--sgemm", default="")
    w.add_argument("--probes", default="")
    w.add_argument("--attention", default="")
    w.add_argument("--load-end", default="")
    w.add_argument("--meta", action="append", default=[], help="KEY=VALUE about the run")
    a = p.parse_args()
    collect(a) if a.cmd == "collect" else write(a)


if __name__ == "__main__":
    main()
