import sys

from a2a_grpc.app.cli import main

sys.exit(main())
