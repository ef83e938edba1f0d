"""`python -m bench [name …]` — run benchmarks (all by default); `make bench` starts the services first."""

import importlib
import sys

BENCHMARKS = ["ingestion"]


def main(names: list[str]) -> None:
    for name in names or BENCHMARKS:
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
