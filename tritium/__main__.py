import sys

from tritium.cli import main

sys.exit(main())
