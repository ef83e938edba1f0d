"""`python -m bench [name [options]]` — run one benchmark with its options, or the default set.

`make bench` starts the services first; `make bench BENCH_ARGS="locomo --limit 1"` passes arguments.
"""

import importlib
import inspect
import sys

DEFAULT = ["ingestion", "locomo", "squad", "personal"]


def main(argv: list[str]) -> None:
    if argv:
        module = importlib.import_module(f"bench.{argv[0]}")
        if inspect.signature(module.main).parameters:
            module.main(argv[1:])
        elif argv[1:]:
            sys.exit(f"bench.{argv[0]} takes no options")
        else:
            module.main()
        return
    for name in DEFAULT:
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
