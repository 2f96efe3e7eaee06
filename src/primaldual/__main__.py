"""``python -m primaldual`` runs the command line (a Ctrl-C while it loads exits 130)."""
import sys

try:
    from .cli import main
except KeyboardInterrupt:
    sys.stderr.write("primaldual: interrupted\n")
    sys.exit(130)

sys.exit(main())
