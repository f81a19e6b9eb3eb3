#!/usr/bin/python3
"""The names a seqbench registry holds, for the bench scripts (run.sh): what to run comes
from `seqbench list --format json FAMILY`, never from a list kept here.

usage: bench_names.py SEQBENCH FAMILY [--use USE] [--no-mixers]
  SEQBENCH      the front door binary (BUILD/apps/seqbench)
  FAMILY        cells, mixers, attention, cores or envs
  --use USE     cells only: those with this use (bench, model.cell, agent.core, ...)
  --no-mixers   cells only: leave out the sequence mixers (they have their own group)
Prints the names on one line, space-separated, in registry order.
"""
import argparse
import json
import subprocess
import sys


def registered(seqbench, family, use=None, mixers=True):
    """The names under `family` in `seqbench list --format json FAMILY`."""
    try:
        out = subprocess.run([seqbench, "list", "--format", "json", family], check=True,
                             capture_output=True, text=True).stdout
        entries = json.loads(out)[family]
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
        detail = getattr(e, "stderr", "") or e
        sys.exit(f"bench_names.py: cannot read {family} from {seqbench} list --format json: "
                 f"{str(detail).strip()}")
    return [e["name"] for e in entries
            if (use is None or use in e.get("uses", [])) and (mixers or not e.get("mixer"))]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("seqbench")
    p.add_argument("family")
    p.add_argument("--use", default=None)
    p.add_argument("--no-mixers", action="store_true")
    a = p.parse_args()
    print(" ".join(registered(a.seqbench, a.family, a.use, not a.no_mixers)))


if __name__ == "__main__":
    main()
