#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "secondbrain.settings")
    # Beside a running `make run`, its services (their ports chosen at start) for what is not set here.
    from secondbrain.stack import running_env

    for key, value in running_env().items():
        os.environ.setdefault(key, value)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
