"""``python -m dnnx.cli ...``: the same as the ``dnnx`` script."""
import sys

from . import main

sys.exit(main())
