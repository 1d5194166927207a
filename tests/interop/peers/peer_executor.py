"""What the SDK's server scripts (sdk_server.py, sdk03_server.py) serve:
A2A_SDK_EXECUTOR=MODULE:ATTR names an executor class (made with no
arguments, MODULE found from the working directory), else their own echo."""

import importlib
import os
import sys


def executor(default):
    spec = os.environ.get("A2A_SDK_EXECUTOR")
    if not spec:
        return default()
    module, _, name = spec.partition(":")
    sys.path.insert(0, os.getcwd())
    return getattr(importlib.import_module(module), name)()
