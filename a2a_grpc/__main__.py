import sys

from a2a_grpc.app.entry import main

sys.exit(main())
